package dev.sluice.brokerd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** librdkafka (Debian's, from C++) and the Java client read each other's records exactly. */
class LibrdkafkaInteropIT {

    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    private static final int RECORDS = 20_000;

    @Test
    void javaConsumerReadsExactlyWhatLibrdkafkaProduced() throws Exception {
        String topic = KAFKA.createTopic(4);

        KafkaTool.Run produced =
                KafkaTool.run(
                        "produce",
                        "--bootstrap-servers",
                        KAFKA.bootstrapServers(),
                        "--topic",
                        topic,
                        "--count",
                        String.valueOf(RECORDS),
                        "--size",
                        "256");

        assertThat(produced.records()).isEqualTo(RECORDS);
        List<byte[]> consumed = consumeAll(topic, RECORDS);
        assertThat(consumed).hasSize(RECORDS).allSatisfy(value -> assertThat(value).hasSize(256));
        assertThat(KafkaTool.checksumOf(consumed)).isEqualTo(produced.checksum());
    }

    @Test
    void librdkafkaConsumerReadsExactlyWhatJavaProduced() throws Exception {
        String topic = KAFKA.createTopic(4);
        List<byte[]> values = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            for (int i = 0; i < RECORDS; i++) {
                byte[] value = ("java-record-" + i).getBytes(StandardCharsets.UTF_8);
                values.add(value);
                producer.send(new ProducerRecord<>(topic, value));
            }
            producer.flush();
        }

        KafkaTool.Run consumed =
                KafkaTool.run(
                        "consume",
                        "--bootstrap-servers",
                        KAFKA.bootstrapServers(),
                        "--topic",
                        topic,
                        "--count",
                        String.valueOf(RECORDS));

        assertThat(consumed.records()).isEqualTo(RECORDS);
        assertThat(consumed.checksum()).isEqualTo(KafkaTool.checksumOf(values));
    }

    @Test
    void unknownLibrdkafkaSettingIsRefusedWithAClearError() throws Exception {
        KafkaTool.Run run =
                KafkaTool.run(
                        "consume",
                        "--bootstrap-servers",
                        KAFKA.bootstrapServers(),
                        "--topic",
                        "any",
                        "--count",
                        "1",
                        "-X",
                        "no.such.setting=1");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.stderr()).contains("no.such.setting");
    }

    @Test
    void missingTopicIsAClearError() throws Exception {
        KafkaTool.Run run =
                KafkaTool.run(
                        "consume",
                        "--bootstrap-servers",
                        KAFKA.bootstrapServers(),
                        "--topic",
                        "no-such-topic",
                        "--count",
                        "1",
                        "--timeout-ms",
                        "10000");

        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.stderr()).contains("no-such-topic");
    }

    private static KafkaProducer<byte[], byte[]> producer() {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static List<byte[]> consumeAll(String topic, int expected) {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<byte[]> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(
                        props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions =
                    consumer.partitionsFor(topic).stream()
                            .map(info -> new TopicPartition(topic, info.partition()))
                            .toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
            while (values.size() < expected && Instant.now().isBefore(deadline)) {
                for (ConsumerRecord<byte[], byte[]> record :
                        consumer.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }
}
