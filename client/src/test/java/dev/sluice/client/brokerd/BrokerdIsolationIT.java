package dev.sluice.client.brokerd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.protocol.StartPosition;
import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each subscription reads at its own isolation level (SUBSCRIBE's {@code READ_UNCOMMITTED},
 * docs/formats.md), whatever the daemon's {@code isolation.level} and whichever fetch path: on one
 * daemon, against a real broker's committed, aborted and open transactions, a read_committed and a
 * read_uncommitted subscription of the same partition each get exactly their records.
 */
class BrokerdIsolationIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    private static final int RECORDS = 100;
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir Path dir;

    /**
     * @param fetch the daemon's {@code sluice.fetch}: the native Fetch requests or librdkafka's
     *     consumer
     */
    @ParameterizedTest
    @ValueSource(strings = {"native", "librdkafka"})
    void eachSubscriptionReadsAtItsOwnIsolationLevel(String fetch) throws Exception {
        String topic = KAFKA.createTopic(1);
        // The daemon's own level is the opposite of the first subscription's: the request wins.
        try (BrokerdProcess daemon =
                        BrokerdProcess.start(
                                BrokerdProcess.defaultBinary(),
                                KAFKA.bootstrapServers(),
                                dir.resolve("brokerd.sock"),
                                Map.of(
                                        "sluice.fetch",
                                        fetch,
                                        "isolation.level",
                                        "read_uncommitted"));
                KafkaProducer<byte[], byte[]> producer = transactionalProducer(fetch)) {
            producer.initTransactions();
            producer.beginTransaction();
            send(producer, topic, "committed-");
            producer.commitTransaction();
            producer.beginTransaction();
            send(producer, topic, "aborted-");
            // Aborting drops what the producer has not sent yet: these reach the log first.
            producer.flush();
            producer.abortTransaction();
            producer.beginTransaction();
            send(producer, topic, "open-");
            producer.flush();

            BrokerdClient client =
                    BrokerdClient.builder(daemon.socket()).reconnectTimeout(WAIT).build();
            try (RecordsSubscription committed = client.subscribe(request(topic, false));
                    RecordsSubscription uncommitted = client.subscribe(request(topic, true))) {
                assertThat(read(uncommitted, 3 * RECORDS))
                        .as("read_uncommitted: every record, of every transaction")
                        .containsExactlyElementsOf(values("committed-", "aborted-", "open-"));
                assertThat(read(committed, RECORDS))
                        .as("read_committed: the committed transaction's, up to the open one")
                        .containsExactlyElementsOf(values("committed-"));

                producer.commitTransaction();
                assertThat(read(committed, RECORDS))
                        .as("read_committed: the open transaction's once committed, no aborted one")
                        .containsExactlyElementsOf(values("open-"));
            }
        }
    }

    private static SubscriptionRequest request(String topic, boolean readUncommitted) {
        return SubscriptionRequest.builder(topic)
                .partitions(1, StartPosition.EARLIEST)
                .readUncommitted(readUncommitted)
                .slots(8, 64 * 1024)
                .build();
    }

    private static KafkaProducer<byte[], byte[]> transactionalProducer(String id) {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "isolation-it-" + id);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static void send(KafkaProducer<byte[], byte[]> producer, String topic, String prefix) {
        for (int i = 0; i < RECORDS; i++) {
            producer.send(
                    new ProducerRecord<>(
                            topic, 0, null, (prefix + i).getBytes(StandardCharsets.UTF_8)));
        }
    }

    private static List<String> values(String... prefixes) {
        return Stream.of(prefixes)
                .flatMap(prefix -> IntStream.range(0, RECORDS).mapToObj(i -> prefix + i))
                .toList();
    }

    /** The values of the next {@code count} records, waiting up to {@link #WAIT} for them. */
    private static List<String> read(RecordsSubscription subscription, int count) throws Exception {
        List<String> values = new ArrayList<>();
        Await.until(
                count + " records are read",
                WAIT,
                () -> {
                    try (RecordBatch batch = subscription.poll(Duration.ofMillis(200))) {
                        for (int row = 0; batch != null && row < batch.rowCount(); row++) {
                            values.add(new String(batch.value(row), StandardCharsets.UTF_8));
                        }
                    }
                    return values.size() >= count;
                });
        return values;
    }
}
