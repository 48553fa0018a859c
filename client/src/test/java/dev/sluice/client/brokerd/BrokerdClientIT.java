package dev.sluice.client.brokerd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.protocol.ErrorCode;
import dev.sluice.client.protocol.PartitionStart;
import dev.sluice.client.protocol.StartPosition;
import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real path of docs/brokerd.md, "How it works": records written to the real broker by the Java
 * producer and by kcat, consumed by the real {@code sluice-brokerd} in a child process, read by
 * {@link BrokerdClient} from shared memory.
 */
class BrokerdClientIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    private static final int PARTITIONS = 8;
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir Path dir;

    private final List<BrokerdProcess> daemons = new ArrayList<>();

    @AfterEach
    void stopDaemons() throws InterruptedException {
        for (BrokerdProcess daemon : daemons) {
            daemon.close();
        }
    }

    private BrokerdProcess daemon(Map<String, String> settings) throws IOException {
        BrokerdProcess daemon =
                BrokerdProcess.start(
                        BrokerdProcess.defaultBinary(),
                        KAFKA.bootstrapServers(),
                        dir.resolve("brokerd.sock"),
                        settings);
        daemons.add(daemon);
        return daemon;
    }

    private static BrokerdClient client(BrokerdProcess daemon) {
        return BrokerdClient.builder(daemon.socket()).reconnectTimeout(WAIT).build();
    }

    private static void produce(String topic, int from, int to) throws Exception {
        produce(topic, from, to, PARTITIONS);
    }

    private static void produce(String topic, int from, int to, int partitions) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = producer(Map.of())) {
            send(producer, topic, from, to, partitions, "value-");
            producer.flush();
        }
    }

    private static KafkaProducer<byte[], byte[]> producer(Map<String, String> settings) {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.putAll(settings);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static void send(
            KafkaProducer<byte[], byte[]> producer,
            String topic,
            int from,
            int to,
            int partitions,
            String valuePrefix) {
        for (int i = from; i < to; i++) {
            ProducerRecord<byte[], byte[]> record =
                    new ProducerRecord<>(
                            topic, i % partitions, bytes("k" + i), bytes(valuePrefix + i));
            record.headers().add("n", bytes(Integer.toString(i)));
            producer.send(record);
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** Reads until {@code count} records came; checks per-partition order as it goes. */
    private static List<String> read(RecordsSubscription subscription, int count)
            throws IOException {
        List<String> values = new ArrayList<>();
        Map<Integer, Long> next = new HashMap<>();
        Await.until(
                count + " records are read",
                WAIT,
                () -> {
                    try (RecordBatch batch = subscription.poll(Duration.ofMillis(200))) {
                        for (int row = 0; batch != null && row < batch.rowCount(); row++) {
                            int partition = batch.partition(row);
                            long offset = batch.offset(row);
                            assertThat(offset)
                                    .as("partition %d in order, nothing twice", partition)
                                    .isGreaterThanOrEqualTo(next.getOrDefault(partition, 0L));
                            next.put(partition, offset + 1);
                            values.add(text(batch.value(row)));
                        }
                    }
                    return values.size() >= count;
                });
        return values;
    }

    private static RecordsSubscription everyPartitionFromTheStart(
            BrokerdProcess daemon, String topic) throws IOException {
        return client(daemon)
                .subscribe(
                        SubscriptionRequest.builder(topic)
                                .partitions(PARTITIONS, StartPosition.EARLIEST)
                                .slots(8, 64 * 1024)
                                .build());
    }

    private static List<String> expected(int from, int to) {
        return Stream.iterate(from, i -> i < to, i -> i + 1).map(i -> "value-" + i).toList();
    }

    @Test
    void everyRecordOfTheJavaProducerArrivesOnceWithKeysAndHeaders() throws Exception {
        String topic = KAFKA.createTopic(PARTITIONS);
        produce(topic, 0, 2000);
        BrokerdProcess daemon = daemon(Map.of());
        try (RecordsSubscription subscription = everyPartitionFromTheStart(daemon, topic)) {
            assertThat(subscription.partitions()).hasSize(PARTITIONS);
            List<String> values = new ArrayList<>();
            Await.until(
                    "2000 records are read",
                    WAIT,
                    () -> {
                        try (RecordBatch batch = subscription.poll(Duration.ofMillis(200))) {
                            for (int row = 0; batch != null && row < batch.rowCount(); row++) {
                                String value = text(batch.value(row));
                                String n = value.substring("value-".length());
                                assertThat(text(batch.key(row))).isEqualTo("k" + n);
                                assertThat(batch.headers(row))
                                        .singleElement()
                                        .satisfies(
                                                h -> {
                                                    assertThat(h.key()).isEqualTo("n");
                                                    assertThat(text(h.value())).isEqualTo(n);
                                                });
                                assertThat(batch.partition(row))
                                        .isEqualTo(Integer.parseInt(n) % PARTITIONS);
                                values.add(value);
                            }
                        }
                        return values.size() >= 2000;
                    });
            assertThat(values).containsExactlyInAnyOrderElementsOf(expected(0, 2000));
            assertThat(subscription.positions().values().stream().mapToLong(Long::longValue).sum())
                    .isEqualTo(2000);
        }
    }

    /**
     * The daemon's native fetch path reads Kafka's record batches itself: batches of every codec
     * the Java producer writes (its snappy is framed the xerial way, unlike librdkafka's), and,
     * read committed, none of an aborted transaction's records nor its control records.
     */
    @Test
    void everyCodecArrivesAndAbortedTransactionsDoNot() throws Exception {
        String topic = KAFKA.createTopic(PARTITIONS);
        int from = 0;
        for (String codec : List.of("gzip", "snappy", "lz4", "zstd")) {
            try (KafkaProducer<byte[], byte[]> producer =
                    producer(Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec))) {
                send(producer, topic, from, from + 500, PARTITIONS, "value-");
                producer.flush();
            }
            from += 500;
        }
        try (KafkaProducer<byte[], byte[]> producer =
                producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "brokerd-it"))) {
            producer.initTransactions();
            producer.beginTransaction();
            send(producer, topic, from, from + 500, PARTITIONS, "aborted-");
            producer.abortTransaction();
            producer.beginTransaction();
            send(producer, topic, from, from + 500, PARTITIONS, "value-");
            producer.commitTransaction();
        }
        int total = from + 500;
        BrokerdProcess daemon = daemon(Map.of());
        try (RecordsSubscription subscription = everyPartitionFromTheStart(daemon, topic)) {
            assertThat(read(subscription, total))
                    .containsExactlyInAnyOrderElementsOf(expected(0, total));
        }
    }

    /**
     * A start below the log start (retention deleted those records) moves to the log start: what is
     * still there arrives, from its first offset on, nothing twice.
     */
    @Test
    void aStartBelowTheLogStartBeginsAtTheFirstRecordStillThere() throws Exception {
        String topic = KAFKA.createTopic(1);
        produce(topic, 0, 300, 1);
        try (Admin admin = Admin.create(KAFKA.broker().clientProperties())) {
            admin.deleteRecords(
                            Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(100)))
                    .all()
                    .get();
        }
        BrokerdProcess daemon = daemon(Map.of());
        try (RecordsSubscription subscription =
                client(daemon)
                        .subscribe(
                                SubscriptionRequest.builder(topic)
                                        .partition(PartitionStart.at(0, 0))
                                        .slots(8, 64 * 1024)
                                        .build())) {
            assertThat(read(subscription, 200)).containsExactlyElementsOf(expected(100, 300));
        }
    }

    @Test
    void severalBatchesMayBeOpenAtOnceEachWithItsOwnVectors() throws Exception {
        String topic = KAFKA.createTopic(1);
        produce(topic, 0, 3000, 1);
        BrokerdProcess daemon = daemon(Map.of());
        try (RecordsSubscription subscription =
                client(daemon)
                        .subscribe(
                                SubscriptionRequest.builder(topic)
                                        .partitions(1, StartPosition.EARLIEST)
                                        .slots(8, 4096)
                                        .maxOpenBatches(2)
                                        .build())) {
            RecordBatch first =
                    Await.untilNonNull(
                            "a first batch is polled",
                            WAIT,
                            () -> subscription.poll(Duration.ofMillis(200)));
            RecordBatch second =
                    Await.untilNonNull(
                            "a second batch is polled while the first is open",
                            WAIT,
                            () -> subscription.poll(Duration.ofMillis(200)));
            assertThat(second.root()).isNotSameAs(first.root());
            long firstEnd = first.offset(first.rowCount() - 1);
            assertThat(second.offset(0)).isEqualTo(firstEnd + 1);
            assertThat(text(first.value(0))).isEqualTo("value-0");
            assertThatThrownBy(() -> subscription.poll(Duration.ZERO))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("close one first");
            int consumed = first.rowCount() + second.rowCount();
            // Out of order: the second closes first, and the first still reads its own rows.
            second.close();
            assertThat(text(first.value(first.rowCount() - 1))).isEqualTo("value-" + firstEnd);
            first.close();
            List<String> rest = read(subscription, 3000 - consumed);
            assertThat(rest).isNotEmpty().last().isEqualTo("value-2999");
        }
    }

    @Test
    void aDrainedSubscriptionHandsOutWhatTheDaemonPublishedThenEnds() throws Exception {
        String topic = KAFKA.createTopic(1);
        produce(topic, 0, 3000, 1);
        BrokerdProcess daemon = daemon(Map.of());
        List<String> drained = new ArrayList<>();
        long next;
        try (RecordsSubscription subscription =
                client(daemon)
                        .subscribe(
                                SubscriptionRequest.builder(topic)
                                        .partitions(1, StartPosition.EARLIEST)
                                        .slots(8, 4096)
                                        .build())) {
            List<String> first = read(subscription, 1);
            Await.until(
                    "the daemon fills the segment and pauses",
                    WAIT,
                    () -> daemon.metric("sluice_paused_partitions") > 0);
            subscription.drain();
            Await.until(
                    "the daemon's last published record is handed out",
                    WAIT,
                    () -> {
                        try (RecordBatch batch = subscription.poll(Duration.ofMillis(200))) {
                            for (int row = 0; batch != null && row < batch.rowCount(); row++) {
                                drained.add(text(batch.value(row)));
                            }
                        }
                        return subscription.isDrained();
                    });
            assertThat(subscription.poll(Duration.ZERO)).isNull();
            assertThat(subscription.resubscriptions()).isZero();
            assertThat(drained).as("what the full segment held").isNotEmpty();
            drained.addAll(0, first);
            next = subscription.positions().get(0);
        }
        assertThat(drained).isEqualTo(expected(0, (int) next));
        try (RecordsSubscription rest =
                client(daemon)
                        .subscribe(
                                SubscriptionRequest.builder(topic)
                                        .partition(PartitionStart.at(0, next))
                                        .build())) {
            assertThat(read(rest, 3000 - (int) next)).isEqualTo(expected((int) next, 3000));
        }
    }

    @Test
    void recordsWrittenByKcatArrive() throws Exception {
        String topic = KAFKA.createTopic(PARTITIONS);
        Path input = dir.resolve("kcat.in");
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            lines.add("key-" + i + ":value-" + i);
        }
        Files.write(input, lines);
        Process kcat =
                new ProcessBuilder(
                                "kcat",
                                "-P",
                                "-b",
                                KAFKA.bootstrapServers(),
                                "-t",
                                topic,
                                "-K:",
                                "-X",
                                "acks=all")
                        .redirectInput(input.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("kcat.out").toFile())
                        .start();
        assertThat(kcat.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(kcat.exitValue()).as(Files.readString(dir.resolve("kcat.out"))).isZero();

        BrokerdProcess daemon = daemon(Map.of());
        try (RecordsSubscription subscription =
                client(daemon)
                        .subscribe(
                                SubscriptionRequest.builder(topic)
                                        .partitions(PARTITIONS, StartPosition.EARLIEST)
                                        .build())) {
            assertThat(read(subscription, 500))
                    .containsExactlyInAnyOrderElementsOf(expected(0, 500));
        }
    }

    @Test
    void aSigkilledDaemonLosesNothingAndRepeatsNothingForAReconnectingReader() throws Exception {
        String topic = KAFKA.createTopic(PARTITIONS);
        produce(topic, 0, 1000);
        BrokerdProcess daemon = daemon(Map.of("sluice.liveness.timeout.ms", "1000"));
        try (RecordsSubscription subscription =
                client(daemon)
                        .subscribe(
                                SubscriptionRequest.builder(topic)
                                        .partitions(PARTITIONS, StartPosition.EARLIEST)
                                        .slots(4, 4096)
                                        .build())) {
            List<String> values = read(subscription, 300);
            daemon.kill();
            produce(topic, 1000, 2000);
            daemon.restart();
            values.addAll(read(subscription, 2000 - values.size()));
            assertThat(values).containsExactlyInAnyOrderElementsOf(expected(0, 2000));
            assertThat(subscription.resubscriptions()).isGreaterThanOrEqualTo(1);
        }
    }

    @Test
    void aStoppedDaemonCommitsWhatWasProcessedAndTheReaderResumes() throws Exception {
        String topic = KAFKA.createTopic(PARTITIONS);
        produce(topic, 0, 800);
        BrokerdProcess daemon = daemon(Map.of());
        try (RecordsSubscription subscription =
                client(daemon)
                        .subscribe(
                                SubscriptionRequest.builder(topic)
                                        .partitions(PARTITIONS, StartPosition.EARLIEST)
                                        .groupId("resume-group")
                                        .slots(4, 4096)
                                        .build())) {
            List<String> values = read(subscription, 200);
            subscription.commitProcessed();
            assertThat(daemon.stop()).isZero();
            daemon.restart();
            values.addAll(read(subscription, 800 - values.size()));
            assertThat(values).containsExactlyInAnyOrderElementsOf(expected(0, 800));
        }
    }

    @Test
    void aReaderKilledWhileHoldingSlotsLeavesTheOthersRunning() throws Exception {
        String topic = KAFKA.createTopic(2);
        produce(topic, 0, 200, 2);
        BrokerdProcess daemon = daemon(Map.of("sluice.liveness.timeout.ms", "1000"));
        Process holder =
                new ProcessBuilder(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "--add-opens=java.base/java.nio=ALL-UNNAMED",
                                "-cp",
                                System.getProperty("java.class.path"),
                                HoldingReader.class.getName(),
                                daemon.socket().toString(),
                                topic,
                                "0")
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start();
        try (RecordsSubscription other =
                client(daemon)
                        .subscribe(
                                SubscriptionRequest.builder(topic)
                                        .partition(PartitionStart.earliest(1))
                                        .slots(2, 4096)
                                        .build())) {
            String said =
                    new BufferedReader(
                                    new InputStreamReader(
                                            holder.getInputStream(), StandardCharsets.UTF_8))
                            .readLine();
            assertThat(said).startsWith("holding [0]");
            holder.destroyForcibly().waitFor();

            produce(topic, 200, 400, 2);
            List<String> values = read(other, 200);
            assertThat(values)
                    .containsExactlyInAnyOrderElementsOf(
                            Stream.iterate(1, i -> i < 400, i -> i + 2)
                                    .map(i -> "value-" + i)
                                    .toList());
            // The daemon's log is a file: nothing announces a new line.
            Await.until(
                    "the daemon logs why pid " + holder.pid() + " left",
                    WAIT,
                    () ->
                            Files.readString(daemon.logFile())
                                    .contains("pid=" + holder.pid() + " reason="));
            assertThat(Files.readString(daemon.logFile()))
                    .contains("event=peer_disconnected pid=" + holder.pid());
        } finally {
            holder.destroyForcibly();
        }
    }

    @Test
    void aPeerWhoseUidIsNotAllowedIsRefused() throws Exception {
        String topic = KAFKA.createTopic(1);
        int otherUid = (Integer) Files.getAttribute(dir, "unix:uid") + 4242;
        BrokerdProcess daemon = daemon(Map.of("sluice.allowed.uids", Integer.toString(otherUid)));
        assertThatThrownBy(
                        () ->
                                client(daemon)
                                        .subscribe(
                                                SubscriptionRequest.builder(topic)
                                                        .partitions(1, StartPosition.EARLIEST)
                                                        .build()))
                .isInstanceOfSatisfying(
                        BrokerdException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_AUTHORIZED));
        try (Stream<Path> files = Files.list(Path.of("/dev/shm"))) {
            // The run's lock file sluice-brokerd.PID.RUN.lock is there from the start
            // (docs/brokerd.md); a segment or doorbell would be another file of the run.
            assertThat(
                            files.map(p -> p.getFileName().toString())
                                    .filter(
                                            name ->
                                                    name.startsWith(
                                                            "sluice-brokerd." + daemon.pid() + "."))
                                    .filter(name -> !name.endsWith(".lock")))
                    .as("nothing was created")
                    .isEmpty();
        }
    }

    @Test
    void anUnknownTopicIsRefused() throws Exception {
        BrokerdProcess daemon = daemon(Map.of());
        assertThatThrownBy(
                        () ->
                                client(daemon)
                                        .subscribe(
                                                SubscriptionRequest.builder("no-such-topic")
                                                        .partitions(1, StartPosition.EARLIEST)
                                                        .build()))
                .isInstanceOfSatisfying(
                        BrokerdException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_TOPIC));
    }

    @Test
    void aRecordLargerThanASlotEndsTheSubscriptionWithAClearError() throws Exception {
        String topic = KAFKA.createTopic(1);
        Properties props = KAFKA.broker().clientProperties();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, 0, null, new byte[10_000])).get();
        }
        BrokerdProcess daemon = daemon(Map.of());
        try (RecordsSubscription subscription =
                client(daemon)
                        .subscribe(
                                SubscriptionRequest.builder(topic)
                                        .partitions(1, StartPosition.EARLIEST)
                                        .slots(4, 4096)
                                        .build())) {
            assertThatThrownBy(
                            () ->
                                    Await.until(
                                            "the daemon refuses the record",
                                            WAIT,
                                            () -> {
                                                assertThat(
                                                                subscription.poll(
                                                                        Duration.ofMillis(200)))
                                                        .isNull();
                                                return false;
                                            }))
                    .isInstanceOfSatisfying(
                            BrokerdException.class,
                            e -> {
                                assertThat(e.code()).isEqualTo(ErrorCode.RECORD_TOO_LARGE);
                                assertThat(e).hasMessageContaining(topic + " [0] at offset 0");
                            });
        }
    }

    @Test
    void aSegmentBeyondTheDaemonsBoundIsRefusedAndOneThatFitsStillWorks() throws Exception {
        String topic = KAFKA.createTopic(1);
        produce(topic, 0, 20, 1);
        long megabyte = 1 << 20;
        BrokerdProcess daemon =
                daemon(Map.of("sluice.segment.max.total.bytes", Long.toString(2 * megabyte)));
        BrokerdClient client = client(daemon);
        SubscriptionRequest oneMegabyte =
                SubscriptionRequest.builder(topic)
                        .partitions(1, StartPosition.EARLIEST)
                        .slots(4, megabyte / 4)
                        .build();
        SubscriptionRequest twoMegabytes =
                SubscriptionRequest.builder(topic)
                        .partitions(1, StartPosition.EARLIEST)
                        .slots(8, megabyte / 4)
                        .build();

        try (RecordsSubscription first = client.subscribe(oneMegabyte)) {
            assertThatThrownBy(() -> client.subscribe(twoMegabytes))
                    .isInstanceOfSatisfying(
                            BrokerdException.class,
                            e -> {
                                assertThat(e.code()).isEqualTo(ErrorCode.SUBSCRIPTION_LIMIT);
                                assertThat(e.getMessage())
                                        .startsWith("SUBSCRIPTION_LIMIT: segment folder ")
                                        .contains(
                                                "slot_count × slot_size = 2097152 bytes beside the"
                                                        + " 1048576 of the daemon's segments would"
                                                        + " exceed sluice.segment.max.total.bytes"
                                                        + " = 2097152")
                                        .endsWith(
                                                " (this subscription asked for 8 slots of 262144"
                                                        + " bytes, SubscriptionRequest.Builder"
                                                        + ".slots: ask for fewer or smaller slots,"
                                                        + " end other subscriptions to this"
                                                        + " daemon, or raise its"
                                                        + " sluice.segment.max.total.bytes or the"
                                                        + " size of its sluice.segment.dir)");
                            });
            assertThat(read(first, 20)).hasSize(20);
            // The refusal took nothing: a second megabyte still fits beside the first.
            try (RecordsSubscription second = client.subscribe(oneMegabyte)) {
                assertThat(read(second, 20)).hasSize(20);
            }
        }
        // Ended subscriptions give their bytes back.
        try (RecordsSubscription whole = client.subscribe(twoMegabytes)) {
            assertThat(read(whole, 20)).hasSize(20);
        }
    }
}
