package dev.sluice.embedded;

import dev.sluice.embedded.junit.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Java clients of a test broker: a producer that waits for all replicas, a reader of a topic. */
final class Clients {

    private Clients() {}

    static KafkaProducer<String, String> producer(KafkaBroker broker) {
        return producer(broker.clientProperties());
    }

    static KafkaProducer<String, String> producer(Properties clientProperties) {
        Properties props = new Properties();
        props.putAll(clientProperties);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    static List<ConsumerRecord<String, String>> consume(
            KafkaBroker broker, String topic, int expected) {
        return consume(broker.clientProperties(), topic, expected);
    }

    /** Reads {@code topic} from its start until {@code expected} records came, with these props. */
    static List<ConsumerRecord<String, String>> consume(
            Properties clientProperties, String topic, int expected) {
        Properties props = new Properties();
        props.putAll(clientProperties);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> partitions =
                    consumer.partitionsFor(topic).stream()
                            .map(info -> new TopicPartition(topic, info.partition()))
                            .toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Await.until(
                    expected + " records of " + topic + " are read",
                    Duration.ofSeconds(60),
                    () -> {
                        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                        return records.size() >= expected;
                    });
        }
        return records;
    }
}
