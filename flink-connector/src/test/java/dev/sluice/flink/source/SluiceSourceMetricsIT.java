package dev.sluice.flink.source;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.BrokerdExtension;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The reader's metrics under KafkaSource's names (docs/flink-source.md, "Metrics"), read through
 * Flink's metric reporters as a dashboard would: a job held back by a blocked operator, then let
 * go, against a real broker, a real daemon and a real MiniCluster, in PUSH and PULL mode.
 */
class SluiceSourceMetricsIT {
    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
    @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(1)
                            .build());

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int PARTITIONS = 2;
    private static final int PER_PARTITION = 1_000;
    // The held operator takes this many records, the last of which it blocks on.
    private static final int HOLD_AT = 300;

    // The blocked operator waits on these; MiniCluster tasks share the JVM.
    private static final AtomicInteger taken = new AtomicInteger();
    private static volatile CountDownLatch gate = new CountDownLatch(0);

    private static void produce(String topic) {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < PARTITIONS * PER_PARTITION; i++) {
                producer.send(
                        new ProducerRecord<>(
                                topic,
                                i % PARTITIONS,
                                null,
                                ("record-" + i).getBytes(StandardCharsets.UTF_8)));
            }
        }
    }

    /** The reader's metric whose identifier ends with {@code suffix}, once registered. */
    private static Metric metric(JobID job, String suffix) {
        return Await.untilNonNull(
                "the metric *" + suffix,
                WAIT,
                () ->
                        REPORTER.getMetricsByIdentifiers(job).entrySet().stream()
                                .filter(entry -> entry.getKey().endsWith(suffix))
                                .map(Map.Entry::getValue)
                                .findFirst()
                                .orElse(null));
    }

    private static long gauge(JobID job, String suffix) {
        return ((Number) ((Gauge<?>) metric(job, suffix)).getValue()).longValue();
    }

    private static long count(JobID job, String suffix) {
        return ((Counter) metric(job, suffix)).getCount();
    }

    private static String partitionMetric(String topic, int partition, String name) {
        return ".KafkaSourceReader.topic." + topic + ".partition." + partition + "." + name;
    }

    /** The offsets of the last records emitted, per partition, summed as records emitted. */
    private static long emitted(JobID job, String topic) {
        long emitted = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            emitted += gauge(job, partitionMetric(topic, p, "currentOffset")) + 1;
        }
        return emitted;
    }

    @ParameterizedTest
    @EnumSource(
            value = ReadMode.class,
            names = {"PUSH", "PULL"})
    @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void offsetsPendingRecordsAndCommitsReadAsKafkaSourcesDo(ReadMode mode) throws Exception {
        String topic = KAFKA.createTopic(PARTITIONS);
        produce(topic);
        String group = "metrics-" + topic;
        taken.set(0);
        gate = new CountDownLatch(1);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        env.enableCheckpointing(100);
        SluiceSource<String> source =
                SluiceSource.<String>builder()
                        .setBootstrapServers(KAFKA.bootstrapServers())
                        .setTopics(topic)
                        .setGroupId(group)
                        .setReadMode(mode)
                        .setBrokerdSocket(BROKERD.socket())
                        .setValueOnlyDeserializer(new SimpleStringSchema())
                        .build();
        // Chained to the source: while it blocks, the reader emits nothing more.
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "sluice")
                .map(
                        value -> {
                            if (taken.incrementAndGet() == HOLD_AT) {
                                gate.await();
                            }
                            return value;
                        })
                .returns(Types.STRING)
                .sinkTo(new DiscardingSink<>());
        JobClient client = env.executeAsync("metrics-" + mode);
        JobID job = client.getJobID();
        try {
            long total = PARTITIONS * PER_PARTITION;
            // Held: the record the operator blocks on is taken, not yet emitted.
            Await.until(
                    () ->
                            "held at "
                                    + (HOLD_AT - 1)
                                    + " records emitted of "
                                    + total
                                    + ", with the rest pending: emitted "
                                    + emitted(job, topic)
                                    + ", pendingRecords "
                                    + gauge(job, ".pendingRecords"),
                    WAIT,
                    () ->
                            emitted(job, topic) == HOLD_AT - 1
                                    && gauge(job, ".pendingRecords") == total - (HOLD_AT - 1));
            assertThat(taken.get()).isEqualTo(HOLD_AT);

            gate.countDown();
            Await.until(
                    () ->
                            "every record emitted and committed: currentOffset "
                                    + gauge(job, partitionMetric(topic, 0, "currentOffset"))
                                    + "/"
                                    + gauge(job, partitionMetric(topic, 1, "currentOffset"))
                                    + ", committedOffset "
                                    + gauge(job, partitionMetric(topic, 0, "committedOffset"))
                                    + "/"
                                    + gauge(job, partitionMetric(topic, 1, "committedOffset"))
                                    + ", pendingRecords "
                                    + gauge(job, ".pendingRecords"),
                    WAIT,
                    () -> {
                        for (int p = 0; p < PARTITIONS; p++) {
                            if (gauge(job, partitionMetric(topic, p, "currentOffset"))
                                            != PER_PARTITION - 1
                                    || gauge(job, partitionMetric(topic, p, "committedOffset"))
                                            != PER_PARTITION) {
                                return false;
                            }
                        }
                        return gauge(job, ".pendingRecords") == 0;
                    });
            long succeeded = count(job, ".KafkaSourceReader.commitsSucceeded");
            assertThat(succeeded).isPositive();
            Await.until(
                    "commitsSucceeded grows past " + succeeded + " with the next checkpoints",
                    WAIT,
                    () -> count(job, ".KafkaSourceReader.commitsSucceeded") > succeeded);
            assertThat(count(job, ".KafkaSourceReader.commitsFailed")).isZero();
            try (Admin admin = Admin.create(KAFKA.broker().clientProperties())) {
                Map<TopicPartition, OffsetAndMetadata> committed =
                        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                for (int p = 0; p < PARTITIONS; p++) {
                    assertThat(committed.get(new TopicPartition(topic, p)).offset())
                            .as("the group's offset of partition %d, as committedOffset says", p)
                            .isEqualTo(gauge(job, partitionMetric(topic, p, "committedOffset")));
                }
            }
        } finally {
            gate.countDown();
            client.cancel().get();
        }
    }
}
