package dev.sluice.flink.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.BrokerdExtension;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.util.RestartStrategyUtils;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What Flink's suite does not cover: backpressure through the daemon, AUTO's choice, offsets
 * committed on checkpoints, and a record the deserializer cannot read. Real broker, real daemon,
 * real MiniCluster.
 */
class SluiceSourceIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
    @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static final Duration WAIT = Duration.ofSeconds(60);
    @TempDir static Path dir;

    private static void produce(String topic, int partitions, int count, int size) {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < count; i++) {
                String value = String.format("%-" + size + "s", "record-" + i);
                producer.send(
                        new ProducerRecord<>(
                                topic,
                                i % partitions,
                                null,
                                value.getBytes(StandardCharsets.UTF_8)));
            }
        }
    }

    private static SluiceSourceBuilder<String> source(String topic, ReadMode mode) {
        return reading(mode).setTopics(topic);
    }

    /** A source of strings in this mode, for a subscription still to set. */
    private static SluiceSourceBuilder<String> reading(ReadMode mode) {
        return SluiceSource.<String>builder()
                .setBootstrapServers(KAFKA.bootstrapServers())
                .setReadMode(mode)
                .setBrokerdSocket(BROKERD.socket())
                .setValueOnlyDeserializer(new SimpleStringSchema());
    }

    /** The sum of a daemon metric over its labels, for this topic when it has one. */
    private static double metric(String name, String topic) throws Exception {
        HttpResponse<String> response =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(
                                                URI.create(
                                                        "http://"
                                                                + BROKERD.daemon().metricsAddress()
                                                                + "/metrics"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
        double sum = 0;
        for (String line : response.body().split("\n")) {
            if (line.startsWith(name) && (topic == null || line.contains("\"" + topic + "\""))) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    private static Set<String> collectAll(StreamExecutionEnvironment env, SluiceSource<String> src)
            throws Exception {
        Set<String> seen = new HashSet<>();
        try (CloseableIterator<String> it =
                env.fromSource(src, WatermarkStrategy.noWatermarks(), "sluice")
                        .executeAndCollect()) {
            it.forEachRemaining(value -> assertThat(seen.add(value)).as("once: " + value).isTrue());
        }
        return seen;
    }

    // The stalled operator of the backpressure test waits on this; MiniCluster tasks share the JVM.
    private static volatile CountDownLatch gate = new CountDownLatch(0);

    @Test
    void aStalledOperatorPausesTheDaemonAndTheReaderBuffersOnlyItsOpenBatches() throws Exception {
        String topic = KAFKA.createTopic(2);
        int count = 20_000;
        produce(topic, 2, count, 1000);
        gate = new CountDownLatch(1);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        SluiceSource<String> src =
                source(topic, ReadMode.PUSH)
                        .setBounded(SluiceOffsets.latest())
                        .setSlots(8, 64 * 1024, 2)
                        .build();
        var results =
                env.fromSource(src, WatermarkStrategy.noWatermarks(), "sluice")
                        .map(
                                value -> {
                                    gate.await();
                                    return value;
                                })
                        .returns(Types.STRING)
                        .executeAndCollect();
        try (results) {
            Await.until(
                    "the daemon pauses the partitions",
                    WAIT,
                    () -> {
                        try {
                            return metric("sluice_paused_partitions", null) > 0;
                        } catch (Exception e) {
                            return false;
                        }
                    });
            double pushed = metric("sluice_bytes_out_total", topic);
            // 8 slots of 64 KiB in the segment, and Flink's network buffers between the tasks:
            // far less than the 20 MB in the topic.
            assertThat(pushed).isLessThan(count * 1000 / 4.0);
            gate.countDown();
            Set<String> seen = new HashSet<>();
            results.forEachRemaining(value -> assertThat(seen.add(value)).isTrue());
            assertThat(seen).hasSize(count);
        } finally {
            gate.countDown();
        }
    }

    @Test
    void autoReadsThroughTheDaemonWhereOneAnswersAndPullsWhereNone() throws Exception {
        String topic = KAFKA.createTopic(3);
        int count = 3_000;
        produce(topic, 3, count, 100);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);

        assertThat(
                        collectAll(
                                env,
                                source(topic, ReadMode.AUTO)
                                        .setBounded(SluiceOffsets.latest())
                                        .build()))
                .hasSize(count);
        // The daemon adds to its counters after each pump round (docs/brokerd.md, "Metrics"), not
        // per record: the last round's may come after the job has read everything.
        Await.until(
                () -> "the daemon counts " + count + " records pushed of " + topic,
                WAIT,
                () -> metric("sluice_records_out_total", topic) >= count);
        double pushed = metric("sluice_records_out_total", topic);

        SluiceSource<String> noDaemon =
                source(topic, ReadMode.AUTO)
                        .setBrokerdSocket(dir.resolve("nobody-listens.sock"))
                        .setBounded(SluiceOffsets.latest())
                        .build();
        assertThat(collectAll(env, noDaemon)).hasSize(count);
        assertThat(metric("sluice_records_out_total", topic))
                .as("the second run pulled")
                .isEqualTo(pushed);
    }

    // Splits of unequal length end one after the other, and each end renews the shared
    // subscription while its segment holds records of the partitions still read: those are
    // carried over to the new one, so the daemon publishes every record once.
    @Test
    void splitsEndingOneByOneHaveTheDaemonPublishEachRecordOnce() throws Exception {
        String topic = KAFKA.createTopic(4);
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            for (int i = 0; i < 2_000 * (2 * p + 1); i++) {
                String value = String.format("%-100s", p + "-" + i);
                records.add(new ProducerRecord<>(topic, p, null, bytes(value)));
            }
        }
        send(records);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);

        assertThat(
                        collectAll(
                                env,
                                source(topic, ReadMode.PUSH)
                                        .setBounded(SluiceOffsets.latest())
                                        .build()))
                .hasSize(records.size());
        // A subscription adds its last round to the counters when it ends (docs/brokerd.md,
        // "Metrics"): once none is left, the count is final.
        Await.until(
                "the daemon ends the job's subscriptions",
                WAIT,
                () -> metric("sluice_subscriptions", null) == 0);
        assertThat(metric("sluice_records_out_total", topic)).isEqualTo(records.size());
    }

    /** The values of the transactions a test wrote: those committed and those aborted. */
    private record Transactions(Set<String> committed, Set<String> aborted) {
        Set<String> everything() {
            Set<String> all = new HashSet<>(committed);
            all.addAll(aborted);
            return all;
        }
    }

    /**
     * Writes one transaction per entry of {@code commits} (true: committed, false: aborted), of
     * {@code records} records spread over the topic's {@code partitions}: each partition then ends
     * with the last transaction's marker.
     */
    private static Transactions writeTransactions(
            String topic, int partitions, int records, boolean... commits) {
        Transactions written = new Transactions(new HashSet<>(), new HashSet<>());
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "transactions-" + topic);
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            for (int t = 0; t < commits.length; t++) {
                boolean commit = commits[t];
                producer.beginTransaction();
                for (int i = 0; i < records; i++) {
                    String value = (commit ? "committed-" : "aborted-") + t + "-" + i;
                    (commit ? written.committed : written.aborted).add(value);
                    producer.send(new ProducerRecord<>(topic, i % partitions, null, bytes(value)));
                }
                if (commit) {
                    producer.commitTransaction();
                } else {
                    producer.flush();
                    producer.abortTransaction();
                }
            }
        }
        return written;
    }

    // A bounded PUSH split used to end only at a record just before its stop, and so never when
    // the stop follows a marker: these tests hung (docs/flink-source.md, "Bounded PUSH splits end
    // also where no record precedes the stop").
    // The timeouts run the test in a thread of its own: Flink's collect iterator retries through
    // an interrupt, so a hang would outlast a timeout on the test's own thread.
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aBoundedPushSplitEndsAtACommitMarker() throws Exception {
        String topic = KAFKA.createTopic(2);
        Transactions written = writeTransactions(topic, 2, 40, true, true);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        for (String isolation : new String[] {"read_committed", "read_uncommitted"}) {
            assertThat(
                            collectAll(
                                    env,
                                    source(topic, ReadMode.PUSH)
                                            .setProperty("isolation.level", isolation)
                                            .setBounded(SluiceOffsets.latest())
                                            .build()))
                    .as(isolation)
                    .isEqualTo(written.committed());
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aBoundedPushSplitEndsAfterAnAbortedTransactionUnderReadCommitted() throws Exception {
        String topic = KAFKA.createTopic(2);
        Transactions written = writeTransactions(topic, 2, 40, true, false);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        assertThat(
                        collectAll(
                                env,
                                source(topic, ReadMode.PUSH)
                                        .setProperty("isolation.level", "read_committed")
                                        .setBounded(SluiceOffsets.latest())
                                        .build()))
                .isEqualTo(written.committed());
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void pushAndPullReadTheSameRecordsOfTransactionsAtEitherIsolationLevel() throws Exception {
        String topic = KAFKA.createTopic(2);
        Transactions written =
                writeTransactions(topic, 2, 50, true, false, true, false, true, false);
        Set<String> committed = written.committed();
        Set<String> everything = written.everything();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);

        for (ReadMode mode : new ReadMode[] {ReadMode.PUSH, ReadMode.PULL}) {
            assertThat(
                            collectAll(
                                    env,
                                    source(topic, mode)
                                            .setProperty("isolation.level", "read_committed")
                                            .setBounded(SluiceOffsets.latest())
                                            .build()))
                    .as("%s read_committed", mode)
                    .isEqualTo(committed);
            assertThat(
                            collectAll(
                                    env,
                                    source(topic, mode)
                                            .setProperty("isolation.level", "read_uncommitted")
                                            .setBounded(SluiceOffsets.latest())
                                            .build()))
                    .as("%s read_uncommitted", mode)
                    .isEqualTo(everything);
            assertThat(
                            collectAll(
                                    env,
                                    source(topic, mode).setBounded(SluiceOffsets.latest()).build()))
                    .as("%s by default: read_uncommitted, as a Kafka consumer", mode)
                    .isEqualTo(everything);
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aBoundedSourceStopsEveryPartitionAtItsStoppingOffsetInBothModes() throws Exception {
        String topic = KAFKA.createTopic(4);
        int count = 8_000;
        long stop = 700;
        produce(topic, 4, count, 100);
        Map<TopicPartition, Long> stops = new HashMap<>();
        Set<String> expected = new HashSet<>();
        for (int p = 0; p < 4; p++) {
            stops.put(new TopicPartition(topic, p), stop);
        }
        // produce() writes record i to partition i % 4, at offset i / 4.
        for (int i = 0; i < count; i++) {
            if (i / 4 < stop) {
                expected.add(String.format("%-100s", "record-" + i));
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        for (ReadMode mode : new ReadMode[] {ReadMode.PUSH, ReadMode.PULL}) {
            // The daemon pushes past the stop until the shared subscription resubscribes without
            // the partition: small objects put rows of a split that has finished in batches already
            // on their way.
            assertThat(
                            collectAll(
                                    env,
                                    source(topic, mode)
                                            .setSlots(16, 16 << 10, 8)
                                            .setBounded(SluiceOffsets.of(stops))
                                            .build()))
                    .as(mode.name())
                    .isEqualTo(expected);
        }
    }

    @Test
    void completedCheckpointsCommitTheOffsetsToTheGroup() throws Exception {
        String topic = KAFKA.createTopic(2);
        int count = 2_000;
        produce(topic, 2, count, 100);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        env.enableCheckpointing(100);
        String group = "commit-" + topic;
        SluiceSource<String> src = source(topic, ReadMode.PUSH).setGroupId(group).build();
        try (CloseableIterator<String> it =
                        env.fromSource(src, WatermarkStrategy.noWatermarks(), "sluice")
                                .executeAndCollect();
                Admin admin = Admin.create(KAFKA.broker().clientProperties())) {
            for (int i = 0; i < count; i++) {
                it.next();
            }
            Map<TopicPartition, Long> expected =
                    Map.of(
                            new TopicPartition(topic, 0),
                            count / 2L,
                            new TopicPartition(topic, 1),
                            count / 2L);
            Await.until(
                    "the group's offsets reach the end",
                    WAIT,
                    () -> {
                        try {
                            Map<TopicPartition, OffsetAndMetadata> committed =
                                    admin.listConsumerGroupOffsets(group)
                                            .partitionsToOffsetAndMetadata()
                                            .get();
                            return expected.keySet().stream()
                                    .allMatch(
                                            p ->
                                                    committed.get(p) != null
                                                            && committed.get(p).offset()
                                                                    == expected.get(p));
                        } catch (Exception e) {
                            return false;
                        }
                    });
        }
    }

    @Test
    void aRecordTheDeserializerCannotReadFailsTheJobNamingItsOffset() throws Exception {
        String topic = KAFKA.createTopic(1);
        produce(topic, 1, 10, 20);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        RestartStrategyUtils.configureNoRestartStrategy(env);
        SluiceSource<String> src =
                source(topic, ReadMode.PUSH)
                        .setBounded(SluiceOffsets.latest())
                        .setDeserializer(new FailsAtOffsetSeven())
                        .build();
        assertThatThrownBy(() -> collectAll(env, src))
                .hasStackTraceContaining(topic + "-0 offset 7: not a valid order");
    }

    private static final ReadMode[] BOTH = {ReadMode.PUSH, ReadMode.PULL};

    /** Writes these records and waits until the broker has them all. */
    private static void send(List<ProducerRecord<byte[], byte[]>> records) {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            records.forEach(producer::send);
        }
    }

    /** {@code count} records "prefix-i" on partition 0 of {@code topic}. */
    private static Set<String> sendValues(String topic, String prefix, int count) {
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        Set<String> values = new HashSet<>();
        for (int i = 0; i < count; i++) {
            values.add(prefix + "-" + i);
            records.add(new ProducerRecord<>(topic, 0, null, bytes(prefix + "-" + i)));
        }
        send(records);
        return values;
    }

    /** Reads from {@code it} until every value of {@code expected} came, each once. */
    private static Set<String> readUntil(CloseableIterator<String> it, Set<String> expected) {
        Set<String> seen = new HashSet<>();
        while (!seen.containsAll(expected)) {
            String value = it.next();
            assertThat(seen.add(value)).as("once: " + value).isTrue();
        }
        return seen;
    }

    // setUnbounded: each partition stops, the source does not, and its discovery goes on after
    // every partition it had has stopped: a topic the pattern matches, created then, is read up to
    // its own stop. The stops are given (a topic created after the start has no end offset yet
    // that its discovery could not race), and records past them are written before they could be
    // read, so a stop not kept would show.
    @Test
    void aTopicPatternPicksUpTopicsCreatedLaterAndSetUnboundedStopsEachAtItsEnd() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        for (ReadMode mode : BOTH) {
            String prefix =
                    "pattern-" + mode.name().toLowerCase() + "-" + ProcessHandle.current().pid();
            KAFKA.broker().createTopic(prefix + "-a", 1);
            Set<String> first = sendValues(prefix + "-a", "a", 30);
            Set<String> pastTheStops = sendValues(prefix + "-a", "late-a", 10);
            SluiceSource<String> src =
                    reading(mode)
                            .setTopicPattern(Pattern.compile(Pattern.quote(prefix) + "-.*"))
                            .setPartitionDiscoveryInterval(Duration.ofMillis(300))
                            .setUnbounded(
                                    SluiceOffsets.offsets(
                                            Map.of(
                                                    new TopicPartition(prefix + "-a", 0), 30L,
                                                    new TopicPartition(prefix + "-b", 0), 20L)))
                            .build();
            assertThat(src.getBoundedness()).isEqualTo(Boundedness.CONTINUOUS_UNBOUNDED);
            try (CloseableIterator<String> it =
                    env.fromSource(src, WatermarkStrategy.noWatermarks(), "sluice")
                            .executeAndCollect()) {
                assertThat(readUntil(it, first)).as(mode.name()).isEqualTo(first);
                KAFKA.broker().createTopic(prefix + "-b", 1);
                Set<String> second = sendValues(prefix + "-b", "b", 20);
                pastTheStops.addAll(sendValues(prefix + "-b", "late-b", 10));
                assertThat(readUntil(it, second))
                        .as(mode.name())
                        .isEqualTo(second)
                        .doesNotContainAnyElementsOf(pastTheStops);
            }
        }
    }

    @Test
    void aPartitionSetReadsThosePartitionsOnly() throws Exception {
        String topic = KAFKA.createTopic(3);
        int count = 300;
        produce(topic, 3, count, 20);
        Set<String> expected = new HashSet<>();
        // produce() writes record i to partition i % 3.
        for (int i = 0; i < count; i++) {
            if (i % 3 != 1) {
                expected.add(String.format("%-20s", "record-" + i));
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        for (ReadMode mode : BOTH) {
            SluiceSource<String> src =
                    reading(mode)
                            .setPartitions(
                                    Set.of(
                                            new TopicPartition(topic, 0),
                                            new TopicPartition(topic, 2)))
                            .setBounded(SluiceOffsets.latest())
                            .build();
            assertThat(collectAll(env, src)).as(mode.name()).isEqualTo(expected);
        }
        SluiceSource<String> missing =
                reading(ReadMode.PULL)
                        .setPartitions(Set.of(new TopicPartition(topic, 5)))
                        .setBounded(SluiceOffsets.latest())
                        .build();
        assertThatThrownBy(() -> runToFailure(missing))
                .hasStackTraceContaining(
                        "partitions [" + topic + "-5] of setPartitions do not exist");
    }

    /**
     * Runs a job whose enumerator fails, without restarts. Into a discarding sink: a collect sink
     * cancelled while it initializes fails in its close, which kills the MiniCluster's TaskManager
     * for the tests after.
     */
    private static void runToFailure(SluiceSource<String> src) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        RestartStrategyUtils.configureNoRestartStrategy(env);
        env.fromSource(src, WatermarkStrategy.noWatermarks(), "sluice")
                .sinkTo(new DiscardingSink<>());
        env.execute();
    }

    /** Ten records at timestamps 1000.., then ten at 5_000_000.., on one partition. */
    private static String topicWithTwoEras() {
        String topic = KAFKA.createTopic(1);
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            long timestamp = (i < 10 ? 1000 : 5_000_000) + i;
            records.add(new ProducerRecord<>(topic, 0, timestamp, null, bytes("r" + i)));
        }
        send(records);
        return topic;
    }

    private static Set<String> values(int from, int to) {
        Set<String> values = new HashSet<>();
        for (int i = from; i < to; i++) {
            values.add("r" + i);
        }
        return values;
    }

    @Test
    void timestampsStartAndStopAtTheFirstRecordAtOrAfterThem() throws Exception {
        String topic = topicWithTwoEras();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        for (ReadMode mode : BOTH) {
            assertThat(
                            collectAll(
                                    env,
                                    source(topic, mode)
                                            .setStartingOffsets(SluiceOffsets.timestamp(5_000_000))
                                            .setBounded(SluiceOffsets.latest())
                                            .build()))
                    .as(mode.name())
                    .isEqualTo(values(10, 20));
            assertThat(
                            collectAll(
                                    env,
                                    source(topic, mode)
                                            .setStartingOffsets(SluiceOffsets.timestamp(1005))
                                            .setBounded(SluiceOffsets.timestamp(5_000_014))
                                            .build()))
                    .as(mode.name())
                    .isEqualTo(values(5, 14));
        }
    }

    @Test
    void givenOffsetsLeaveTheOtherPartitionsToTheCommittedOffsetThenTheReset() throws Exception {
        String topic = KAFKA.createTopic(3);
        produce(topic, 3, 30, 10);
        String group = "offsets-" + topic;
        try (Admin admin = Admin.create(KAFKA.broker().clientProperties())) {
            admin.alterConsumerGroupOffsets(
                            group, Map.of(new TopicPartition(topic, 1), new OffsetAndMetadata(4)))
                    .all()
                    .get();
        }
        // produce() writes record i to partition i % 3 at offset i / 3.
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            if ((i % 3 == 0 && i / 3 >= 7) || (i % 3 == 1 && i / 3 >= 4)) {
                expected.add(String.format("%-10s", "record-" + i));
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        Map<TopicPartition, Long> given = Map.of(new TopicPartition(topic, 0), 7L);
        for (ReadMode mode : BOTH) {
            assertThat(
                            collectAll(
                                    env,
                                    source(topic, mode)
                                            .setGroupId(group)
                                            .setStartingOffsets(
                                                    SluiceOffsets.offsets(
                                                            given, OffsetResetStrategy.LATEST))
                                            .setBounded(SluiceOffsets.latest())
                                            .build()))
                    .as(mode.name())
                    .isEqualTo(expected);
        }
        SluiceSource<String> none =
                source(topic, ReadMode.PULL)
                        .setGroupId(group)
                        .setStartingOffsets(SluiceOffsets.offsets(given, OffsetResetStrategy.NONE))
                        .setBounded(SluiceOffsets.latest())
                        .build();
        assertThatThrownBy(() -> runToFailure(none))
                .hasStackTraceContaining("no offset for [" + topic + "-2]");
    }

    /** What a KafkaSource job might have: every field of the ConsumerRecord, as text. */
    private static final class DescribesConsumerRecords
            implements KafkaRecordDeserializationSchema<String> {
        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<String> out) {
            Header header = record.headers().lastHeader("h");
            out.collect(
                    String.join(
                            " ",
                            record.topic() + "-" + record.partition() + "@" + record.offset(),
                            "t=" + record.timestamp() + "/" + record.timestampType(),
                            "k="
                                    + new String(record.key(), StandardCharsets.UTF_8)
                                    + "/"
                                    + record.serializedKeySize(),
                            "v="
                                    + new String(record.value(), StandardCharsets.UTF_8)
                                    + "/"
                                    + record.serializedValueSize(),
                            "h=" + new String(header.value(), StandardCharsets.UTF_8)));
        }

        @Override
        public TypeInformation<String> getProducedType() {
            return Types.STRING;
        }
    }

    @Test
    void aKafkaRecordDeserializationSchemaReadsRecordsAsAKafkaConsumerReturnsThem()
            throws Exception {
        String topic = KAFKA.createTopic(1);
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            records.add(
                    new ProducerRecord<>(
                            topic,
                            0,
                            7000L + i,
                            bytes("key" + i),
                            bytes("value" + i),
                            List.of(new RecordHeader("h", bytes("header" + i)))));
        }
        send(records);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        for (ReadMode mode : BOTH) {
            // PUSH records carry no timestamp type (docs/formats.md, Object schemas).
            String type = mode == ReadMode.PUSH ? "NoTimestampType" : "CreateTime";
            Set<String> expected = new HashSet<>();
            for (int i = 0; i < 3; i++) {
                expected.add(
                        topic
                                + "-0@"
                                + i
                                + " t="
                                + (7000 + i)
                                + "/"
                                + type
                                + " k=key"
                                + i
                                + "/4 v=value"
                                + i
                                + "/6 h=header"
                                + i);
            }
            assertThat(
                            collectAll(
                                    env,
                                    source(topic, mode)
                                            .setDeserializer(
                                                    SluiceDeserializationSchema.of(
                                                            new DescribesConsumerRecords()))
                                            .setBounded(SluiceOffsets.latest())
                                            .build()))
                    .as(mode.name())
                    .isEqualTo(expected);
            Set<String> values = Set.of("value0", "value1", "value2");
            assertThat(
                            collectAll(
                                    env,
                                    source(topic, mode)
                                            .setDeserializer(
                                                    SluiceDeserializationSchema.of(
                                                            KafkaRecordDeserializationSchema
                                                                    .valueOnly(
                                                                            StringDeserializer
                                                                                    .class)))
                                            .setBounded(SluiceOffsets.latest())
                                            .build()))
                    .as("%s, KafkaSource's valueOnly", mode)
                    .isEqualTo(values);
            assertThat(
                            collectAll(
                                    env,
                                    source(topic, mode)
                                            .setDeserializer(
                                                    SluiceDeserializationSchema.valueOnly(
                                                            StringDeserializer.class))
                                            .setBounded(SluiceOffsets.latest())
                                            .build()))
                    .as("%s, a Kafka Deserializer", mode)
                    .isEqualTo(values);
        }
    }

    /** Whether a Kafka client of this client.id is open in this JVM (its app-info MBean). */
    private static boolean clientOpen(String type, String clientId) {
        try {
            return !ManagementFactory.getPlatformMBeanServer()
                    .queryNames(
                            new ObjectName("kafka." + type + ":type=app-info,id=" + clientId), null)
                    .isEmpty();
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Test
    void theClientIdPrefixNamesTheSourcesKafkaClients() throws Exception {
        String topic = KAFKA.createTopic(1);
        produce(topic, 1, 10, 10);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        env.enableCheckpointing(100);
        String prefix = "prefix-" + topic;
        SluiceSource<String> src =
                source(topic, ReadMode.PULL)
                        .setGroupId("group-" + topic)
                        .setProperty("client.id", "overridden-" + topic)
                        .setClientIdPrefix(prefix)
                        .build();
        try (CloseableIterator<String> it =
                env.fromSource(src, WatermarkStrategy.noWatermarks(), "sluice")
                        .executeAndCollect()) {
            it.next();
            Await.until(
                    "the consumer, committer and enumerator's admin client are named after "
                            + prefix,
                    WAIT,
                    () ->
                            clientOpen("consumer", prefix + "-0")
                                    && clientOpen("admin.client", prefix + "-0-commit")
                                    && clientOpen(
                                            "admin.client", prefix + "-enumerator-admin-client"));
            assertThat(clientOpen("consumer", "overridden-" + topic)).isFalse();
        }
        SluiceSource<String> userId =
                source(topic, ReadMode.PULL).setProperty("client.id", "mine-" + topic).build();
        try (CloseableIterator<String> it =
                env.fromSource(userId, WatermarkStrategy.noWatermarks(), "sluice")
                        .executeAndCollect()) {
            it.next();
            Await.until(
                    "a client.id without a prefix becomes the prefix",
                    WAIT,
                    () -> clientOpen("consumer", "mine-" + topic + "-0"));
        }
    }

    /** Reads values as strings, except at offset 7, which it finds malformed. */
    private static final class FailsAtOffsetSeven implements SluiceDeserializationSchema<String> {
        @Override
        public void deserialize(SluiceRecord record, Collector<String> out) throws IOException {
            if (record.offset() == 7) {
                throw new IOException("not a valid order");
            }
            out.collect(new String(record.value(), StandardCharsets.UTF_8));
        }

        @Override
        public TypeInformation<String> getProducedType() {
            return Types.STRING;
        }
    }
}
