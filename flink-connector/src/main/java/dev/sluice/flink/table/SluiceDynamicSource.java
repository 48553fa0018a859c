package dev.sluice.flink.table;

import dev.sluice.flink.source.SluiceSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.IntStream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.format.DecodingFormat;
import org.apache.flink.table.connector.source.DataStreamScanProvider;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.abilities.SupportsReadingMetadata;
import org.apache.flink.table.connector.source.abilities.SupportsWatermarkPushDown;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.DataType;

/**
 * The {@code 'connector' = 'sluice'} table's source: a {@link SluiceSource} of {@link RowData},
 * with metadata columns and watermarks generated in the source (per partition), as the Kafka SQL
 * connector's {@code KafkaDynamicSource} (docs/flink-sql.md).
 */
final class SluiceDynamicSource
        implements ScanTableSource, SupportsReadingMetadata, SupportsWatermarkPushDown {
    private static final String TRANSFORMATION = "sluice";

    /** The value format's own metadata columns are offered under this prefix, as Kafka does. */
    private static final String VALUE_METADATA_PREFIX = "value.";

    private final DataType physicalDataType;
    private final DecodingFormat<DeserializationSchema<RowData>> keyFormat;
    private final DecodingFormat<DeserializationSchema<RowData>> valueFormat;
    private final int[] keyProjection;
    private final int[] valueProjection;
    private final String keyPrefix;
    private final ScanSettings settings;
    private final String tableIdentifier;
    private final Integer parallelism;

    private DataType producedDataType;
    private List<String> metadataKeys = List.of();
    private WatermarkStrategy<RowData> watermarkStrategy;

    /**
     * @param keyFormat null without a key format
     * @param keyPrefix null without {@code key.fields-prefix}
     * @param parallelism null without {@code scan.parallelism}
     */
    SluiceDynamicSource(
            DataType physicalDataType,
            DecodingFormat<DeserializationSchema<RowData>> keyFormat,
            DecodingFormat<DeserializationSchema<RowData>> valueFormat,
            int[] keyProjection,
            int[] valueProjection,
            String keyPrefix,
            ScanSettings settings,
            String tableIdentifier,
            Integer parallelism) {
        this.physicalDataType = Objects.requireNonNull(physicalDataType);
        this.keyFormat = keyFormat;
        this.valueFormat = Objects.requireNonNull(valueFormat);
        this.keyProjection = keyProjection.clone();
        this.valueProjection = valueProjection.clone();
        this.keyPrefix = keyPrefix;
        this.settings = Objects.requireNonNull(settings);
        this.tableIdentifier = tableIdentifier;
        this.parallelism = parallelism;
        this.producedDataType = physicalDataType;
    }

    ScanSettings settings() {
        return settings;
    }

    @Override
    public ChangelogMode getChangelogMode() {
        return valueFormat.getChangelogMode();
    }

    @Override
    public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
        SluiceSource<RowData> source = source(context);
        return new DataStreamScanProvider() {
            @Override
            public DataStream<RowData> produceDataStream(
                    ProviderContext providerContext, StreamExecutionEnvironment env) {
                DataStreamSource<RowData> stream =
                        env.fromSource(
                                source,
                                watermarkStrategy == null
                                        ? WatermarkStrategy.noWatermarks()
                                        : watermarkStrategy,
                                "SluiceSource-" + tableIdentifier);
                providerContext.generateUid(TRANSFORMATION).ifPresent(stream::uid);
                return stream;
            }

            @Override
            public boolean isBounded() {
                return source.getBoundedness() == Boundedness.BOUNDED;
            }

            @Override
            public Optional<Integer> getParallelism() {
                return Optional.ofNullable(parallelism);
            }
        };
    }

    /**
     * The source, built by {@link dev.sluice.flink.source.SluiceSourceBuilder}, whose refusals
     * (slots, {@code isolation.level}, ...) become the planner's validation errors.
     */
    SluiceSource<RowData> source(DynamicTableSource.Context context) {
        RowDataDeserializer deserializer = deserializer(context);
        try {
            return settings.<RowData>builder().setDeserializer(deserializer).build();
        } catch (IllegalStateException e) {
            throw new ValidationException(
                    String.format(
                            "Table '%s' ('connector' = 'sluice'): %s. The 'sluice.*' options and"
                                    + " 'properties.*' are SluiceSourceBuilder's settings"
                                    + " (docs/flink-sql.md, Options).",
                            tableIdentifier, e.getMessage()),
                    e);
        }
    }

    /** Rows from records: the formats' decoders over their columns, then the metadata columns. */
    RowDataDeserializer deserializer(DynamicTableSource.Context context) {
        int physicalArity = DataType.getFieldCount(producedDataType) - metadataKeys.size();
        // The value format's metadata columns sit between the physical and the connector's.
        int[] valueColumns =
                IntStream.concat(
                                IntStream.of(valueProjection),
                                IntStream.range(
                                        keyProjection.length + valueProjection.length,
                                        physicalArity))
                        .toArray();
        return new RowDataDeserializer(
                keyFormat == null
                        ? null
                        : keyFormat.createRuntimeDecoder(
                                context,
                                FormatProjections.formatType(
                                        physicalDataType, keyProjection, keyPrefix)),
                valueFormat.createRuntimeDecoder(
                        context,
                        FormatProjections.formatType(physicalDataType, valueProjection, null)),
                physicalArity,
                keyProjection,
                valueColumns,
                metadataKeys.stream().map(ReadableMetadata::ofKey).toArray(ReadableMetadata[]::new),
                context.createTypeInformation(producedDataType));
    }

    @Override
    public Map<String, DataType> listReadableMetadata() {
        // Physical columns, then the format's metadata, then the connector's: Flink's order.
        Map<String, DataType> metadata = new LinkedHashMap<>();
        valueFormat
                .listReadableMetadata()
                .forEach((key, type) -> metadata.put(VALUE_METADATA_PREFIX + key, type));
        for (ReadableMetadata m : ReadableMetadata.values()) {
            metadata.putIfAbsent(m.key, m.dataType);
        }
        return metadata;
    }

    @Override
    public void applyReadableMetadata(List<String> metadataKeys, DataType producedDataType) {
        List<String> formatKeys =
                metadataKeys.stream().filter(k -> k.startsWith(VALUE_METADATA_PREFIX)).toList();
        List<String> connectorKeys = new ArrayList<>(metadataKeys);
        connectorKeys.removeAll(formatKeys);
        if (!valueFormat.listReadableMetadata().isEmpty()) {
            valueFormat.applyReadableMetadata(
                    formatKeys.stream()
                            .map(k -> k.substring(VALUE_METADATA_PREFIX.length()))
                            .toList());
        }
        this.metadataKeys = List.copyOf(connectorKeys);
        this.producedDataType = producedDataType;
    }

    @Override
    public boolean supportsMetadataProjection() {
        return false;
    }

    @Override
    public void applyWatermark(WatermarkStrategy<RowData> watermarkStrategy) {
        this.watermarkStrategy = watermarkStrategy;
    }

    @Override
    public DynamicTableSource copy() {
        SluiceDynamicSource copy =
                new SluiceDynamicSource(
                        physicalDataType,
                        keyFormat,
                        valueFormat,
                        keyProjection,
                        valueProjection,
                        keyPrefix,
                        settings,
                        tableIdentifier,
                        parallelism);
        copy.producedDataType = producedDataType;
        copy.metadataKeys = metadataKeys;
        copy.watermarkStrategy = watermarkStrategy;
        return copy;
    }

    @Override
    public String asSummaryString() {
        return "Sluice table source";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SluiceDynamicSource that
                && physicalDataType.equals(that.physicalDataType)
                && Objects.equals(keyFormat, that.keyFormat)
                && valueFormat.equals(that.valueFormat)
                && Arrays.equals(keyProjection, that.keyProjection)
                && Arrays.equals(valueProjection, that.valueProjection)
                && Objects.equals(keyPrefix, that.keyPrefix)
                && settings.equals(that.settings)
                && Objects.equals(tableIdentifier, that.tableIdentifier)
                && Objects.equals(parallelism, that.parallelism)
                && producedDataType.equals(that.producedDataType)
                && metadataKeys.equals(that.metadataKeys)
                && Objects.equals(watermarkStrategy, that.watermarkStrategy);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                physicalDataType,
                keyFormat,
                valueFormat,
                Arrays.hashCode(keyProjection),
                Arrays.hashCode(valueProjection),
                keyPrefix,
                settings,
                tableIdentifier,
                parallelism,
                producedDataType,
                metadataKeys);
    }
}
