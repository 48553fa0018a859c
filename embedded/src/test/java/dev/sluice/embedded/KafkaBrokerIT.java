package dev.sluice.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class KafkaBrokerIT {

    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    @Test
    void javaClientReadsBackEveryRecordInPartitionOrder() throws Exception {
        String topic = KAFKA.createTopic(3);
        int records = 3_000;
        // Sent without waiting for each: the idempotent producer (Kafka's default) keeps each
        // partition's order with requests in flight, which is what the read-back checks.
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer = Clients.producer(KAFKA.broker())) {
            for (int i = 0; i < records; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, i % 3, "k" + i, "v" + i)));
            }
            for (Future<RecordMetadata> record : sent) {
                record.get();
            }
        }

        List<ConsumerRecord<String, String>> read = Clients.consume(KAFKA.broker(), topic, records);

        assertThat(read).hasSize(records);
        for (int partition = 0; partition < 3; partition++) {
            int p = partition;
            List<String> values =
                    read.stream()
                            .filter(r -> r.partition() == p)
                            .map(ConsumerRecord::value)
                            .toList();
            List<String> expected = new ArrayList<>();
            for (int i = p; i < records; i += 3) {
                expected.add("v" + i);
            }
            assertThat(values).as("partition %d in order", p).isEqualTo(expected);
        }
    }

    @Test
    void brokerListensOnLoopbackOnly() {
        assertThat(KAFKA.bootstrapServers()).startsWith("127.0.0.1:");
    }

    @Test
    void creatingAnExistingTopicIsAClearError() {
        String topic = KAFKA.createTopic(1);

        assertThatThrownBy(() -> KAFKA.broker().createTopic(topic, 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(topic)
                .hasMessageContaining("already exists");
    }

    @Test
    void badBrokerConfigurationFailsTheStartWithTheBrokersOwnMessage() {
        assertThatThrownBy(
                        () ->
                                KafkaBroker.builder()
                                        .brokerProperty("num.partitions", "not-a-number")
                                        .startTimeout(Duration.ofSeconds(60))
                                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("num.partitions");
    }
}
