package dev.sluice.client.job;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** The Kafka producers and consumers of the job topics, configured one way for every side. */
final class KafkaClients {

    private KafkaClients() {}

    /**
     * A producer that loses nothing and duplicates nothing: a command or status is acknowledged by
     * every in-sync replica, and a retry cannot write it twice. The caller's properties cannot
     * weaken that.
     */
    static KafkaProducer<String, byte[]> producer(Properties clientProperties) {
        Properties props = new Properties();
        // A command or status is one record that someone waits for: Kafka 4's default linger of
        // 5 ms would hold each back that long, for a batch that never comes.
        props.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        props.putAll(clientProperties);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new KafkaProducer<>(props);
    }

    /** A consumer without a group: the caller assigns partitions and owns the offsets. */
    static KafkaConsumer<byte[], byte[]> consumer(Properties clientProperties) {
        Properties props = new Properties();
        props.putAll(clientProperties);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        props.put(
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(props);
    }

    /** Sends one record and waits until it is acknowledged, turning failures into exceptions. */
    static void sendAndWait(
            KafkaProducer<String, byte[]> producer, ProducerRecord<String, byte[]> record) {
        try {
            producer.send(record).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptException(e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof KafkaException kafka) {
                throw kafka;
            }
            throw new KafkaException("could not write to " + record.topic(), e.getCause());
        }
    }

    /** Every partition of a topic; empty while the topic does not exist. */
    static List<TopicPartition> partitions(KafkaConsumer<?, ?> consumer, String topic) {
        List<TopicPartition> partitions = new ArrayList<>();
        List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(10));
        if (infos != null) {
            for (PartitionInfo info : infos) {
                partitions.add(new TopicPartition(topic, info.partition()));
            }
        }
        return partitions;
    }

    /**
     * The records of a consumer's assigned partitions from its position up to their current end.
     */
    static List<ConsumerRecord<byte[], byte[]>> readToEnd(
            KafkaConsumer<byte[], byte[]> consumer, Duration timeout) {
        var ends = consumer.endOffsets(consumer.assignment(), timeout);
        long deadline = System.nanoTime() + timeout.toNanos();
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        while (ends.entrySet().stream()
                .anyMatch(e -> consumer.position(e.getKey()) < e.getValue())) {
            if (System.nanoTime() > deadline) {
                throw new TimeoutException(
                        "could not read to the end of " + consumer.assignment() + " in " + timeout);
            }
            consumer.poll(Duration.ofMillis(200)).forEach(records::add);
        }
        return records;
    }
}
