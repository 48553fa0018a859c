package dev.sluice.flink.source.testutils;

import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.SluiceOffsets;
import dev.sluice.flink.source.SluiceSource;
import dev.sluice.flink.source.SluiceSourceBuilder;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.connector.testframe.external.ExternalSystemSplitDataWriter;
import org.apache.flink.connector.testframe.external.source.DataStreamSourceExternalContext;
import org.apache.flink.connector.testframe.external.source.TestingSourceSettings;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * One topic per test; each split the framework asks for is a new partition of it. The source reads
 * it in the context's mode: PUSH through the real daemon, or PULL.
 */
public final class SluiceSourceExternalContext implements DataStreamSourceExternalContext<String> {
    private static final AtomicInteger TOPICS = new AtomicInteger();

    private final SluiceExternalSystem system;
    private final ReadMode mode;
    private final String topic;
    private final Admin admin;
    private final List<PartitionWriter> writers = new ArrayList<>();

    public SluiceSourceExternalContext(SluiceExternalSystem system, ReadMode mode) {
        this.system = system;
        this.mode = mode;
        this.topic = "suite-" + mode.name().toLowerCase() + "-" + TOPICS.incrementAndGet();
        this.admin = Admin.create(system.broker().clientProperties());
    }

    @Override
    public Source<String, ?, ?> createSource(TestingSourceSettings settings) {
        SluiceSourceBuilder<String> builder =
                SluiceSource.<String>builder()
                        .setBootstrapServers(system.bootstrapServers())
                        .setTopics(topic)
                        .setGroupId("suite-" + topic)
                        .setReadMode(mode)
                        .setBrokerdSocket(system.socket())
                        .setSlots(16, 64 * 1024, 4)
                        .setValueOnlyDeserializer(new SimpleStringSchema());
        if (settings.getBoundedness() == Boundedness.BOUNDED) {
            builder.setBounded(SluiceOffsets.latest());
        }
        return builder.build();
    }

    @Override
    public ExternalSystemSplitDataWriter<String> createSourceSplitDataWriter(
            TestingSourceSettings settings) {
        int partition = writers.size();
        try {
            if (partition == 0) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            } else {
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(partition + 1)))
                        .all()
                        .get();
            }
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException("creating partition " + partition + " of " + topic, e);
        }
        PartitionWriter writer = new PartitionWriter(partition);
        writers.add(writer);
        return writer;
    }

    @Override
    public List<String> generateTestData(
            TestingSourceSettings settings, int splitIndex, long seed) {
        Random random = new Random(seed);
        int count = 100 + random.nextInt(400);
        List<String> records = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            StringBuilder value = new StringBuilder(splitIndex + "-");
            for (int c = random.nextInt(50) + 1; c > 0; c--) {
                value.append((char) ('a' + random.nextInt(26)));
            }
            records.add(value.toString());
        }
        return records;
    }

    @Override
    public TypeInformation<String> getProducedType() {
        return TypeInformation.of(String.class);
    }

    @Override
    public List<URL> getConnectorJarPaths() {
        return List.of();
    }

    @Override
    public void close() throws Exception {
        writers.forEach(PartitionWriter::close);
        admin.deleteTopics(List.of(topic));
        admin.close();
    }

    @Override
    public String toString() {
        return "SluiceSource-" + mode;
    }

    private final class PartitionWriter implements ExternalSystemSplitDataWriter<String> {
        private final int partition;
        private final KafkaProducer<byte[], byte[]> producer;

        PartitionWriter(int partition) {
            this.partition = partition;
            Properties props = system.broker().clientProperties();
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            this.producer =
                    new KafkaProducer<>(
                            props, new ByteArraySerializer(), new ByteArraySerializer());
        }

        @Override
        public void writeRecords(List<String> records) {
            for (String record : records) {
                producer.send(
                        new ProducerRecord<>(
                                topic, partition, null, record.getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }

        @Override
        public void close() {
            producer.close();
        }
    }
}
