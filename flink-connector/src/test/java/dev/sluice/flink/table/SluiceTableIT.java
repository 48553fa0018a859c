package dev.sluice.flink.table;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.junit.BrokerdExtension;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import dev.sluice.flink.source.ReadMode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * SQL over {@code 'connector' = 'sluice'} against a real broker, a real {@code sluice-brokerd} and
 * Flink's planner on a MiniCluster, in PUSH and in PULL: an event-time windowed aggregation and the
 * metadata columns, each checked against what was produced.
 */
class SluiceTableIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
    @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static final LocalDateTime START = LocalDateTime.of(2026, 1, 1, 0, 0);
    private static final String[] KEYS = {"a", "b", "c"};

    /** flink-json's default timestamp format ('json.timestamp-format.standard' = 'SQL'). */
    private static final DateTimeFormatter SQL_TIMESTAMP =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS");

    private static KafkaProducer<byte[], byte[]> producer() {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static StreamTableEnvironment tableEnvironment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        return StreamTableEnvironment.create(env);
    }

    /** A table of the whole topic as it is when the query starts. */
    private static final String EARLIEST_TO_LATEST =
            ", 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'";

    /**
     * The options every table of these tests shares: this broker and daemon.
     *
     * @param topicOption {@code topic}, or {@code topic-pattern} with the topic's name as pattern
     */
    private static String options(String topicOption, String topic, ReadMode mode) {
        return String.format(
                "'connector' = 'sluice', '%s' = '%s', 'properties.bootstrap.servers' = '%s',"
                        + " 'sluice.mode' = '%s', 'sluice.brokerd-socket' = '%s'",
                topicOption, topic, KAFKA.bootstrapServers(), mode, BROKERD.socket());
    }

    private static List<Row> collect(StreamTableEnvironment tEnv, String query) throws Exception {
        List<Row> rows = new ArrayList<>();
        try (CloseableIterator<Row> it = tEnv.executeSql(query).collect()) {
            it.forEachRemaining(rows::add);
        }
        return rows;
    }

    @ParameterizedTest
    @EnumSource(
            value = ReadMode.class,
            names = {"PUSH", "PULL"})
    // Flink's collect iterator does not answer interrupts: time out from another thread.
    @Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aTumblingWindowCountsTheRecordsOfEachKeyByEventTime(ReadMode mode) throws Exception {
        String topic = KAFKA.createTopic(2);
        int count = 300;
        // (window start, key) -> [count, sum of amounts], from what is produced.
        Map<List<Object>, long[]> expected = new HashMap<>();
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            for (int i = 0; i < count; i++) {
                String key = KEYS[(i * 7) % KEYS.length];
                LocalDateTime ts = START.plusNanos(i * 370_000_000L);
                producer.send(
                        new ProducerRecord<>(
                                topic,
                                i % 2,
                                utf8("{\"k\":\"" + key + "\"}"),
                                utf8(
                                        "{\"amount\":"
                                                + i
                                                + ",\"ts\":\""
                                                + SQL_TIMESTAMP.format(ts)
                                                + "\"}")));
                LocalDateTime windowStart =
                        START.plusSeconds(Duration.between(START, ts).toSeconds() / 10 * 10);
                long[] aggregate =
                        expected.computeIfAbsent(List.of(windowStart, key), k -> new long[2]);
                aggregate[0]++;
                aggregate[1] += i;
            }
        }
        StreamTableEnvironment tEnv = tableEnvironment();
        tEnv.executeSql(
                "CREATE TABLE readings (k STRING, amount INT, ts TIMESTAMP(3),"
                        + " WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ("
                        + options("topic", topic, mode)
                        + EARLIEST_TO_LATEST
                        + ", 'key.format' = 'json', 'key.fields' = 'k',"
                        + " 'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY')");

        List<Row> rows =
                collect(
                        tEnv,
                        "SELECT window_start, k, COUNT(*), SUM(amount) FROM TABLE(TUMBLE(TABLE"
                                + " readings, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
                                + " GROUP BY window_start, window_end, k");

        Map<List<Object>, long[]> actual = new HashMap<>();
        for (Row row : rows) {
            long[] previous =
                    actual.put(
                            List.of(row.getField(0), row.getField(1)),
                            new long[] {(Long) row.getField(2), (Integer) row.getField(3)});
            assertThat(previous).as("one row per window and key: " + row).isNull();
        }
        assertThat(actual.keySet()).isEqualTo(expected.keySet());
        expected.forEach(
                (window, aggregate) ->
                        assertThat(actual.get(window)).as("window " + window).isEqualTo(aggregate));
    }

    @ParameterizedTest
    @EnumSource(
            value = ReadMode.class,
            names = {"PUSH", "PULL"})
    @Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void theMetadataColumnsAreThoseOfEachRecord(ReadMode mode) throws Exception {
        String topic = KAFKA.createTopic(3);
        int count = 60;
        Map<String, RecordMetadata> written = new HashMap<>();
        Map<String, Long> timestamps = new HashMap<>();
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            Map<String, Future<RecordMetadata>> sent = new HashMap<>();
            for (int i = 0; i < count; i++) {
                String value = "v-" + i;
                long timestamp = START.toInstant(ZoneOffset.UTC).toEpochMilli() + i * 1001L;
                timestamps.put(value, timestamp);
                ProducerRecord<byte[], byte[]> record =
                        new ProducerRecord<>(
                                topic, i % 3, timestamp, null, utf8("{\"v\":\"" + value + "\"}"));
                record.headers().add(new RecordHeader("index", utf8(Integer.toString(i))));
                if (i % 2 == 0) {
                    record.headers().add(new RecordHeader("even", new byte[] {(byte) i}));
                }
                sent.put(value, producer.send(record));
            }
            for (var entry : sent.entrySet()) {
                written.put(entry.getKey(), entry.getValue().get());
            }
        }
        StreamTableEnvironment tEnv = tableEnvironment();
        tEnv.executeSql(
                "CREATE TABLE records (v STRING,"
                        + " `topic` STRING METADATA VIRTUAL,"
                        + " part INT METADATA FROM 'partition' VIRTUAL,"
                        + " off BIGINT METADATA FROM 'offset' VIRTUAL,"
                        + " ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',"
                        + " hdrs MAP<STRING, BYTES> METADATA FROM 'headers',"
                        + " tsType STRING METADATA FROM 'timestamp-type' VIRTUAL) WITH ("
                        + options("topic-pattern", topic, mode)
                        + EARLIEST_TO_LATEST
                        + ", 'format' = 'json')");

        List<Row> rows =
                collect(tEnv, "SELECT v, `topic`, part, off, ts, hdrs, tsType FROM records");

        assertThat(rows).hasSize(count);
        for (Row row : rows) {
            String value = (String) row.getField(0);
            RecordMetadata metadata = written.get(value);
            assertThat(metadata).as("a produced value: " + value).isNotNull();
            assertThat(row.getField(1)).isEqualTo(topic);
            assertThat(row.getField(2)).as(value).isEqualTo(metadata.partition());
            assertThat(row.getField(3)).as(value).isEqualTo(metadata.offset());
            assertThat(row.getField(4))
                    .as(value)
                    .isEqualTo(Instant.ofEpochMilli(timestamps.get(value)));
            @SuppressWarnings("unchecked")
            Map<String, byte[]> headers = (Map<String, byte[]>) row.getField(5);
            int i = Integer.parseInt(value.substring(2));
            assertThat(headers)
                    .containsOnlyKeys(i % 2 == 0 ? List.of("index", "even") : List.of("index"));
            assertThat(headers.get("index")).isEqualTo(utf8(Integer.toString(i)));
            if (i % 2 == 0) {
                assertThat(headers.get("even")).containsExactly((byte) i);
            }
            // The daemon's records do not carry the timestamp's type (docs/flink-sql.md).
            assertThat(row.getField(6))
                    .isEqualTo(mode == ReadMode.PUSH ? "NoTimestampType" : "CreateTime");
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = ReadMode.class,
            names = {"PUSH", "PULL"})
    @Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aTimestampStartsAndSpecificOffsetsEndTheTable(ReadMode mode) throws Exception {
        String topic = KAFKA.createTopic(2);
        long start = START.toInstant(ZoneOffset.UTC).toEpochMilli();
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            for (int i = 0; i < 40; i++) {
                // Offset i of each partition has the timestamp start + i s.
                for (int partition = 0; partition < 2; partition++) {
                    producer.send(
                            new ProducerRecord<>(
                                    topic,
                                    partition,
                                    start + i * 1000L,
                                    null,
                                    utf8("{\"v\":\"" + partition + "-" + i + "\"}")));
                }
            }
        }
        StreamTableEnvironment tEnv = tableEnvironment();
        tEnv.executeSql(
                "CREATE TABLE records (v STRING, part INT METADATA FROM 'partition' VIRTUAL,"
                        + " off BIGINT METADATA FROM 'offset' VIRTUAL) WITH ("
                        + options("topic", topic, mode)
                        + ", 'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '"
                        + (start + 10_000)
                        + "', 'scan.bounded.mode' = 'specific-offsets',"
                        + " 'scan.bounded.specific-offsets' ="
                        + " 'partition:0,offset:30;partition:1,offset:25', 'format' = 'json')");

        List<String> read = new ArrayList<>();
        for (Row row : collect(tEnv, "SELECT v, part, off FROM records")) {
            assertThat(row.getField(0)).isEqualTo(row.getField(1) + "-" + row.getField(2));
            read.add((String) row.getField(0));
        }

        List<String> expected = new ArrayList<>();
        for (int i = 10; i < 30; i++) {
            expected.add("0-" + i);
        }
        for (int i = 10; i < 25; i++) {
            expected.add("1-" + i);
        }
        assertThat(read).containsExactlyInAnyOrderElementsOf(expected);
    }
}
