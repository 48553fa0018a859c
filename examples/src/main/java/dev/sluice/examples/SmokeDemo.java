package dev.sluice.examples;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.brokerd.RecordBatch;
import dev.sluice.client.brokerd.RecordsSubscription;
import dev.sluice.client.brokerd.SubscriptionRequest;
import dev.sluice.client.protocol.StartPosition;
import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.KafkaBroker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * End-to-end smoke of the embedded parts: starts a real Kafka broker, produces records through it,
 * reads them all back twice, pulled by a KafkaConsumer and pushed by a real {@code sluice-brokerd}
 * through shared memory, checks every byte both times and prints the figures. It stands in for the
 * digital-printing demo until that lands.
 */
public final class SmokeDemo {

    private static final String TOPIC = "smoke";
    private static final int PARTITIONS = 8;

    private SmokeDemo() {}

    public static void main(String[] args) throws Exception {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        int size = args.length > 1 ? Integer.parseInt(args[1]) : 1024;

        long startedAt = System.nanoTime();
        try (KafkaBroker broker = KafkaBroker.start()) {
            System.out.printf(
                    "broker     %s ready in %.1f s%n",
                    broker.bootstrapServers(), seconds(System.nanoTime() - startedAt));
            broker.createTopic(TOPIC, PARTITIONS);

            long produceStart = System.nanoTime();
            long producedSum = produce(broker, records, size);
            report("produced", records, size, System.nanoTime() - produceStart);

            long consumeStart = System.nanoTime();
            check("pulled", producedSum, consume(broker, records));
            report("pulled", records, size, System.nanoTime() - consumeStart);

            Path work = Files.createTempDirectory("sluice-demo-");
            try (BrokerdProcess daemon =
                    BrokerdProcess.start(
                            BrokerdProcess.defaultBinary(),
                            broker.bootstrapServers(),
                            work.resolve("brokerd.sock"),
                            Map.of())) {
                System.out.printf(
                        "daemon     sluice-brokerd pid %d, metrics on %s%n",
                        daemon.pid(), daemon.metricsAddress());
                long pushStart = System.nanoTime();
                check("pushed", producedSum, push(daemon, records));
                report("pushed", records, size, System.nanoTime() - pushStart);
            }
            System.out.printf("checksum   %016x matches both times%n", producedSum);
        }
    }

    private static void check(String how, long produced, long read) {
        if (read != produced) {
            throw new IllegalStateException(
                    "checksum mismatch: produced " + produced + ", " + how + " " + read);
        }
    }

    /** Reads every record through sluice-brokerd: one subscription, batches in shared memory. */
    private static long push(BrokerdProcess daemon, int records) throws IOException {
        long sum = 0;
        int read = 0;
        try (RecordsSubscription subscription =
                BrokerdClient.builder(daemon.socket())
                        .build()
                        .subscribe(
                                SubscriptionRequest.builder(TOPIC)
                                        .partitions(PARTITIONS, StartPosition.EARLIEST)
                                        .build())) {
            long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
            while (read < records) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "read " + read + " of " + records + " records in 5 minutes");
                }
                try (RecordBatch batch = subscription.poll(Duration.ofMillis(200))) {
                    for (int row = 0; batch != null && row < batch.rowCount(); row++) {
                        sum += fnv1a64(batch.value(row));
                        read++;
                    }
                }
            }
        }
        return sum;
    }

    private static long produce(KafkaBroker broker, int records, int size) {
        Properties props = broker.clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024);
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        long sum = 0;
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < records; i++) {
                byte[] value = value(i, size);
                sum += fnv1a64(value);
                producer.send(
                        new ProducerRecord<>(TOPIC, i % PARTITIONS, null, value),
                        (metadata, e) -> {
                            if (e != null) {
                                failure.compareAndSet(null, e);
                            }
                        });
            }
            producer.flush();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("a produce failed", failure.get());
        }
        return sum;
    }

    private static long consume(KafkaBroker broker, int records) {
        Properties props = broker.clientProperties();
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        props.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 1 << 20);
        props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 4 << 20);
        long sum = 0;
        int read = 0;
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(
                        props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions =
                    IntStream.range(0, PARTITIONS)
                            .mapToObj(p -> new TopicPartition(TOPIC, p))
                            .toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
            while (read < records) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "read " + read + " of " + records + " records in 5 minutes");
                }
                for (ConsumerRecord<byte[], byte[]> record :
                        consumer.poll(Duration.ofMillis(200))) {
                    sum += fnv1a64(record.value());
                    read++;
                }
            }
        }
        return sum;
    }

    private static byte[] value(int i, int size) {
        byte[] value = new byte[size];
        for (int j = 0; j < size; j++) {
            value[j] = (byte) ('a' + (i + j) % 26);
        }
        return value;
    }

    private static long fnv1a64(byte[] bytes) {
        long hash = 0xcbf29ce484222325L;
        for (byte b : bytes) {
            hash ^= b & 0xff;
            hash *= 0x100000001b3L;
        }
        return hash;
    }

    private static void report(String what, int records, int size, long nanos) {
        double s = seconds(nanos);
        System.out.printf(
                "%-10s %,d records of %d B in %.2f s: %,.0f rec/s, %.1f MB/s%n",
                what, records, size, s, records / s, (double) records * size / s / 1e6);
    }

    private static double seconds(long nanos) {
        return nanos / 1e9;
    }
}
