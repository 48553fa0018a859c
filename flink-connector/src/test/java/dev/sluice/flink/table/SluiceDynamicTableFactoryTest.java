package dev.sluice.flink.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.segment.RecordHeader;
import dev.sluice.flink.source.OffsetResetStrategy;
import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.SluiceOffsets;
import dev.sluice.flink.source.SluiceRecord;
import dev.sluice.flink.source.SluiceSource;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.transformations.SourceTransformation;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.connector.source.DataStreamScanProvider;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.data.GenericMapData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.runtime.connector.source.ScanRuntimeProviderContext;
import org.apache.flink.table.types.DataType;
import org.apache.flink.util.Collector;
import org.apache.flink.util.SimpleUserCodeClassLoader;
import org.apache.flink.util.UserCodeClassLoader;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The options of a {@code 'connector' = 'sluice'} table, as the planner hands them over. */
class SluiceDynamicTableFactoryTest {
    private static final ResolvedSchema SCHEMA =
            ResolvedSchema.of(
                    Column.physical("k", DataTypes.STRING()),
                    Column.physical("amount", DataTypes.INT()),
                    Column.physical("ts", DataTypes.TIMESTAMP(3)));

    /** A table's options: these before {@code extra}, which come in key, value pairs. */
    private static Map<String, String> options(String... extra) {
        Map<String, String> options = new HashMap<>();
        options.put("connector", "sluice");
        options.put("topic", "readings");
        options.put("properties.bootstrap.servers", "broker-1:9092");
        options.put("scan.startup.mode", "earliest-offset");
        options.put("format", "json");
        for (int i = 0; i < extra.length; i += 2) {
            if (extra[i + 1] == null) {
                options.remove(extra[i]);
            } else {
                options.put(extra[i], extra[i + 1]);
            }
        }
        return options;
    }

    private static SluiceDynamicSource create(ResolvedSchema schema, Map<String, String> options) {
        CatalogTable table =
                CatalogTable.newBuilder()
                        .schema(Schema.newBuilder().fromResolvedSchema(schema).build())
                        .options(options)
                        .build();
        return (SluiceDynamicSource)
                FactoryUtil.createDynamicTableSource(
                        null,
                        ObjectIdentifier.of("default", "default", "readings"),
                        new ResolvedCatalogTable(table, schema),
                        Map.of(),
                        new Configuration(),
                        SluiceDynamicTableFactoryTest.class.getClassLoader(),
                        false);
    }

    private static SluiceDynamicSource create(Map<String, String> options) {
        return create(SCHEMA, options);
    }

    @Test
    void everyOptionReachesTheSourceSettings() {
        SluiceDynamicSource source =
                create(
                        options(
                                "scan.startup.mode", "specific-offsets",
                                "scan.startup.specific-offsets",
                                        "partition:0,offset:42;partition:1,offset:300",
                                "scan.bounded.mode", "latest-offset",
                                "scan.topic-partition-discovery.interval", "1 min",
                                "properties.group.id", "counter",
                                "properties.isolation.level", "read_committed",
                                "properties.commit.offsets.on.checkpoint", "false",
                                "sluice.mode", "PUSH",
                                "sluice.brokerd-socket", "/run/other/brokerd.sock",
                                "sluice.slots.count", "16",
                                "sluice.slots.size", "65536",
                                "sluice.max-open-batches", "4"));

        assertThat(source.settings())
                .isEqualTo(
                        new ScanSettings(
                                List.of("readings"),
                                null,
                                Map.of(
                                        "bootstrap.servers", "broker-1:9092",
                                        "group.id", "counter",
                                        "isolation.level", "read_committed"),
                                false,
                                SluiceOffsets.offsets(
                                        Map.of(
                                                new TopicPartition("readings", 0), 42L,
                                                new TopicPartition("readings", 1), 300L)),
                                SluiceOffsets.latest(),
                                Duration.ofMinutes(1),
                                ReadMode.PUSH,
                                "/run/other/brokerd.sock",
                                16,
                                65536,
                                4));
    }

    @Test
    void unsetOptionsTakeTheKafkaConnectorsAndTheBuildersDefaults() {
        SluiceDynamicSource source =
                create(
                        options(
                                "topic", "readings;alerts",
                                "scan.startup.mode", null,
                                "properties.group.id", "counter"));

        assertThat(source.settings())
                .isEqualTo(
                        new ScanSettings(
                                List.of("readings", "alerts"),
                                null,
                                Map.of(
                                        "bootstrap.servers", "broker-1:9092",
                                        "group.id", "counter"),
                                null,
                                SluiceOffsets.committedOffsets(OffsetResetStrategy.NONE),
                                null,
                                Duration.ofMinutes(5),
                                ReadMode.AUTO,
                                "/run/sluice/brokerd.sock",
                                64,
                                1 << 20,
                                8));
    }

    @Test
    void aTopicPatternNamesTheTopics() {
        ScanSettings settings =
                create(options("topic", null, "topic-pattern", "read.*")).settings();

        assertThat(settings.topics()).isEmpty();
        assertThat(settings.topicPattern()).isEqualTo("read.*");
    }

    @Test
    void groupOffsetsTakeTheResetOfThePropertiesAndTheirEndHasNone() {
        ScanSettings settings =
                create(
                                options(
                                        "scan.startup.mode", "group-offsets",
                                        "scan.bounded.mode", "group-offsets",
                                        "properties.group.id", "counter",
                                        "properties.auto.offset.reset", "latest"))
                        .settings();

        assertThat(settings.startingOffsets())
                .isEqualTo(SluiceOffsets.committedOffsets(OffsetResetStrategy.LATEST));
        assertThat(settings.stoppingOffsets()).isEqualTo(SluiceOffsets.committedOffsets());
    }

    @Test
    void timestampsStartAndEndThePartitions() {
        ScanSettings settings =
                create(
                                options(
                                        "scan.startup.mode", "timestamp",
                                        "scan.startup.timestamp-millis", "1767225600000",
                                        "scan.bounded.mode", "timestamp",
                                        "scan.bounded.timestamp-millis", "1767229200000"))
                        .settings();

        assertThat(settings.startingOffsets())
                .isEqualTo(SluiceOffsets.timestamp(1_767_225_600_000L));
        assertThat(settings.stoppingOffsets())
                .isEqualTo(SluiceOffsets.timestamp(1_767_229_200_000L));
    }

    @Test
    void specificEndsNameTheirPartitions() {
        ScanSettings settings =
                create(
                                options(
                                        "scan.bounded.mode", "specific-offsets",
                                        "scan.bounded.specific-offsets", "partition:2,offset:10"))
                        .settings();

        assertThat(settings.stoppingOffsets())
                .isEqualTo(SluiceOffsets.offsets(Map.of(new TopicPartition("readings", 2), 10L)));
    }

    @Test
    void theRuntimeProviderMakesABoundedSluiceSourceInTheModeAskedWithTheWatermarks() {
        SluiceDynamicSource table =
                create(
                        options(
                                "scan.bounded.mode", "latest-offset",
                                "sluice.mode", "PULL",
                                "scan.parallelism", "3"));
        WatermarkStrategy<RowData> watermarks = WatermarkStrategy.forMonotonousTimestamps();
        table.applyWatermark(watermarks);

        ScanTableSource.ScanRuntimeProvider provider =
                table.getScanRuntimeProvider(ScanRuntimeProviderContext.INSTANCE);

        assertThat(provider).isInstanceOf(DataStreamScanProvider.class);
        DataStreamScanProvider streams = (DataStreamScanProvider) provider;
        assertThat(streams.isBounded()).isTrue();
        assertThat(streams.getParallelism()).contains(3);
        Transformation<RowData> transformation =
                streams.produceDataStream(
                                uid -> Optional.empty(),
                                StreamExecutionEnvironment.getExecutionEnvironment())
                        .getTransformation();
        assertThat(transformation).isInstanceOf(SourceTransformation.class);
        // Pushed down: each split generates its watermarks in the reader.
        assertThat(((SourceTransformation<?, ?, ?>) transformation).getWatermarkStrategy())
                .isSameAs(watermarks);
        Object source = ((SourceTransformation<?, ?, ?>) transformation).getSource();
        assertThat(source).isInstanceOf(SluiceSource.class);
        assertThat(((SluiceSource<?>) source).readMode()).isEqualTo(ReadMode.PULL);
        assertThat(
                        ((DataStreamScanProvider)
                                        create(options())
                                                .getScanRuntimeProvider(
                                                        ScanRuntimeProviderContext.INSTANCE))
                                .isBounded())
                .isFalse();
    }

    @Test
    void rowsHoldTheKeyTheValueAndTheMetadataColumns() throws Exception {
        SluiceDynamicSource table =
                create(
                        options(
                                "format", null,
                                "key.format", "json",
                                "key.fields", "k",
                                "value.format", "json",
                                "value.fields-include", "EXCEPT_KEY"));
        DataType produced =
                DataTypes.ROW(
                        DataTypes.FIELD("k", DataTypes.STRING()),
                        DataTypes.FIELD("amount", DataTypes.INT()),
                        DataTypes.FIELD("ts", DataTypes.TIMESTAMP(3)),
                        DataTypes.FIELD("offset", DataTypes.BIGINT().notNull()),
                        DataTypes.FIELD(
                                "headers",
                                DataTypes.MAP(DataTypes.STRING(), DataTypes.BYTES()).notNull()),
                        DataTypes.FIELD("partition", DataTypes.INT().notNull()));
        table.applyReadableMetadata(List.of("offset", "headers", "partition"), produced);
        RowDataDeserializer deserializer = table.deserializer(ScanRuntimeProviderContext.INSTANCE);
        deserializer.open(
                new DeserializationSchema.InitializationContext() {
                    @Override
                    public MetricGroup getMetricGroup() {
                        return new UnregisteredMetricsGroup();
                    }

                    @Override
                    public UserCodeClassLoader getUserCodeClassLoader() {
                        return SimpleUserCodeClassLoader.create(getClass().getClassLoader());
                    }
                });

        List<RowData> rows = new ArrayList<>();
        Collector<RowData> out =
                new Collector<>() {
                    @Override
                    public void collect(RowData row) {
                        rows.add(row);
                    }

                    @Override
                    public void close() {}
                };
        byte[] trace = {1, 2, 3};
        deserializer.deserialize(
                record(
                        "{\"k\":\"a\"}",
                        "{\"amount\":7,\"ts\":\"2026-01-01 00:00:03.500\"}",
                        List.of(new RecordHeader("trace", trace))),
                out);
        // A tombstone: the value format yields no row, so the table has none.
        deserializer.deserialize(record("{\"k\":\"b\"}", null, List.of()), out);

        assertThat(rows).hasSize(1);
        RowData row = rows.get(0);
        assertThat(row.getArity()).isEqualTo(6);
        assertThat(row.getString(0)).isEqualTo(StringData.fromString("a"));
        assertThat(row.getInt(1)).isEqualTo(7);
        assertThat(row.getTimestamp(2, 3))
                .isEqualTo(
                        TimestampData.fromLocalDateTime(
                                LocalDateTime.of(2026, 1, 1, 0, 0, 3, 500_000_000)));
        assertThat(row.getLong(3)).isEqualTo(42L);
        assertThat(((GenericMapData) row.getMap(4)).get(StringData.fromString("trace")))
                .isEqualTo(trace);
        assertThat(row.getInt(5)).isEqualTo(1);
    }

    /** A record of partition 1 at offset 42, as both read modes hand it to the schema. */
    private static SluiceRecord record(String key, String value, List<RecordHeader> headers) {
        return new SluiceRecord() {
            @Override
            public String topic() {
                return "readings";
            }

            @Override
            public int partition() {
                return 1;
            }

            @Override
            public long offset() {
                return 42;
            }

            @Override
            public long timestamp() {
                return 1_767_225_603_500L;
            }

            @Override
            public byte[] key() {
                return key == null ? null : key.getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public byte[] value() {
                return value == null ? null : value.getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public List<RecordHeader> headers() {
                return headers;
            }

            @Override
            public int sizeInBytes() {
                return 0;
            }
        };
    }

    static Stream<Arguments> refusedOptions() {
        return Stream.of(
                Arguments.of(
                        options("topic-pattern", "read.*"),
                        "Set either 'topic' (topics separated by ';') or 'topic-pattern' (a"
                                + " regular expression of topic names), not both."),
                Arguments.of(options("topic", null), "neither is set"),
                Arguments.of(
                        options("topic", null, "topic-pattern", "read[*"),
                        "Option 'topic-pattern' is no regular expression: Unclosed character"
                                + " class"),
                Arguments.of(
                        options("scan.startup.mode", null),
                        "'scan.startup.mode' = 'group-offsets' reads the committed offsets of a"
                                + " consumer group: set 'properties.group.id'"),
                Arguments.of(
                        options(
                                "scan.startup.mode", "group-offsets",
                                "properties.group.id", "g",
                                "properties.auto.offset.reset", "smallest"),
                        "Option 'properties.auto.offset.reset' is 'smallest': set it to"
                                + " 'earliest', 'latest' or 'none'."),
                Arguments.of(
                        options("scan.startup.mode", "timestamp"),
                        "'scan.startup.timestamp-millis' is required in 'scan.startup.mode' ="
                                + " 'timestamp' but missing."),
                Arguments.of(
                        options(
                                "scan.startup.mode", "timestamp",
                                "scan.startup.timestamp-millis", "-1"),
                        "Option 'scan.startup.timestamp-millis' is -1: milliseconds since the"
                                + " epoch, 0 or more."),
                Arguments.of(
                        options("scan.startup.mode", "specific-offsets"),
                        "'scan.startup.specific-offsets' is required in 'scan.startup.mode' ="
                                + " 'specific-offsets' but missing."),
                Arguments.of(
                        options(
                                "topic", "readings;alerts",
                                "scan.startup.mode", "specific-offsets",
                                "scan.startup.specific-offsets", "partition:0,offset:1"),
                        "needs a single topic in 'topic' (not 'topic-pattern'): the offsets name"
                                + " partitions only, but 'topic' names 2."),
                Arguments.of(
                        options(
                                "topic", null,
                                "topic-pattern", "read.*",
                                "scan.bounded.mode", "specific-offsets",
                                "scan.bounded.specific-offsets", "partition:0,offset:1"),
                        "but 'topic-pattern' is set."),
                Arguments.of(
                        options(
                                "scan.startup.mode", "specific-offsets",
                                "scan.startup.specific-offsets", "partition:0,offset:-1"),
                        "Option 'scan.startup.specific-offsets' is 'partition:0,offset:-1':"
                                + " 'partition:0,offset:-1' is no partition and offset"),
                Arguments.of(
                        options(
                                "scan.startup.mode", "specific-offsets",
                                "scan.startup.specific-offsets",
                                        "partition:0,offset:1;partition:0,offset:2"),
                        "partition 0 is named twice"),
                Arguments.of(
                        options("scan.startup.specific-offsets", "partition:0,offset:1"),
                        "'scan.startup.specific-offsets' is read only in 'scan.startup.mode' ="
                                + " 'specific-offsets', but 'scan.startup.mode' is"
                                + " 'earliest-offset'"),
                Arguments.of(
                        options("scan.bounded.mode", "specific-offsets"),
                        "'scan.bounded.specific-offsets' is required in 'scan.bounded.mode' ="
                                + " 'specific-offsets' but missing."),
                Arguments.of(
                        options("scan.bounded.mode", "timestamp"),
                        "'scan.bounded.timestamp-millis' is required in 'scan.bounded.mode' ="
                                + " 'timestamp' but missing."),
                Arguments.of(
                        options("scan.bounded.timestamp-millis", "1767225600000"),
                        "'scan.bounded.timestamp-millis' is read only in 'scan.bounded.mode' ="
                                + " 'timestamp', but 'scan.bounded.mode' is 'unbounded'"),
                Arguments.of(
                        options("scan.bounded.mode", "group-offsets"),
                        "'scan.bounded.mode' = 'group-offsets' reads the committed offsets of a"
                                + " consumer group: set 'properties.group.id'"),
                Arguments.of(
                        options("properties.commit.offsets.on.checkpoint", "yes"),
                        "Option 'properties.commit.offsets.on.checkpoint' is 'yes': set it to"
                                + " 'true' or 'false'."),
                Arguments.of(
                        options("key.fields", "k"),
                        "The option 'key.fields' can only be declared if a key format is defined"
                                + " using 'key.format'."),
                Arguments.of(
                        options("key.format", "json"),
                        "A key format 'key.format' requires the declaration of one or more of key"
                                + " fields using 'key.fields'."),
                Arguments.of(
                        options("key.format", "json", "key.fields", "id"),
                        "Could not find the field 'id' in the table schema"),
                Arguments.of(
                        options(
                                "key.format", "json",
                                "key.fields", "k",
                                "key.fields-prefix", "key_"),
                        "All fields in 'key.fields' must be prefixed with 'key_'"),
                Arguments.of(
                        options(
                                "key.format", "json",
                                "key.fields", "k",
                                "key.fields-prefix", "k"),
                        "A key prefix is not allowed when option 'value.fields-include' is set to"
                                + " 'ALL'."),
                Arguments.of(
                        options("format", null),
                        "Could not find required scan format 'value.format'."),
                Arguments.of(options("sluice.slot.count", "16"), "Unsupported options"));
    }

    @ParameterizedTest
    @MethodSource("refusedOptions")
    void badOptionsAreRefusedNamingWhatToSet(Map<String, String> options, String message) {
        assertThatThrownBy(() -> create(options))
                .isInstanceOf(ValidationException.class)
                .rootCause()
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining(message);
    }

    static Stream<Arguments> optionsTheBuilderRefuses() {
        return Stream.of(
                Arguments.of(options("sluice.slots.count", "0"), "slots: 0 slots with 8 open"),
                Arguments.of(
                        options("sluice.slots.count", "4"), "slots: 4 slots with 8 open at most"),
                Arguments.of(options("sluice.slots.size", "100"), "slot size 100"),
                Arguments.of(
                        options("sluice.slots.count", "70000", "sluice.max-open-batches", "8"),
                        "slots: 70000 slots with 8 open at most; need 1 ≤ open ≤ slots ≤ 65536"),
                Arguments.of(
                        options("sluice.slots.size", Long.toString(3_000_000_000L)),
                        "slot size 3000000000: a multiple of 64 from 256 to 2^31 - 64"),
                Arguments.of(
                        options("sluice.brokerd-socket", ""), "brokerd socket '': not absolute"),
                Arguments.of(
                        options("sluice.brokerd-socket", "run/brokerd.sock"),
                        "brokerd socket 'run/brokerd.sock': not absolute"),
                Arguments.of(
                        options("topic", "bad topic!"),
                        "topic 'bad topic!': 1 to 249 characters of [A-Za-z0-9._-]"),
                Arguments.of(
                        options("properties.isolation.level", "serializable"),
                        "isolation.level 'serializable'"));
    }

    @ParameterizedTest
    @MethodSource("optionsTheBuilderRefuses")
    void optionsSluiceSourceBuilderRefusesAreValidationErrorsNamingTheTable(
            Map<String, String> options, String message) {
        SluiceDynamicSource table = create(options);

        assertThatThrownBy(() -> table.getScanRuntimeProvider(ScanRuntimeProviderContext.INSTANCE))
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining("Table 'default.default.readings' ('connector' = 'sluice')")
                .hasMessageContaining(message);
    }

    @Test
    void aPrimaryKeyWithAnInsertOnlyFormatIsRefused() {
        ResolvedSchema keyed =
                new ResolvedSchema(
                        SCHEMA.getColumns(),
                        List.of(),
                        UniqueConstraint.primaryKey("pk", List.of("k")),
                        List.of());

        assertThatThrownBy(() -> create(keyed, options()))
                .rootCause()
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining("cannot have a PRIMARY KEY with an insert-only value format");
    }

    @Test
    void thePlannerRefusesMetadataTheRecordsDoNotCarry() {
        TableEnvironment tEnv = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        tEnv.executeSql(
                "CREATE TABLE readings (k STRING, epoch INT METADATA FROM 'leader-epoch') WITH ("
                        + "'connector' = 'sluice', 'topic' = 'readings',"
                        + " 'properties.bootstrap.servers' = 'broker-1:9092',"
                        + " 'scan.startup.mode' = 'earliest-offset', 'format' = 'json')");

        assertThatThrownBy(() -> tEnv.explainSql("SELECT * FROM readings"))
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining("leader-epoch")
                .hasMessageContaining(
                        "topic\npartition\nheaders\noffset\ntimestamp\ntimestamp-type");
    }
}
