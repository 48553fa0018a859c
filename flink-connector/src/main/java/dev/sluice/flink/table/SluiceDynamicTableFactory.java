package dev.sluice.flink.table;

import static dev.sluice.flink.table.SluiceConnectorOptions.KEY_FIELDS;
import static dev.sluice.flink.table.SluiceConnectorOptions.KEY_FIELDS_PREFIX;
import static dev.sluice.flink.table.SluiceConnectorOptions.KEY_FORMAT;
import static dev.sluice.flink.table.SluiceConnectorOptions.PROPS_BOOTSTRAP_SERVERS;
import static dev.sluice.flink.table.SluiceConnectorOptions.PROPS_GROUP_ID;
import static dev.sluice.flink.table.SluiceConnectorOptions.SCAN_BOUNDED_MODE;
import static dev.sluice.flink.table.SluiceConnectorOptions.SCAN_BOUNDED_SPECIFIC_OFFSETS;
import static dev.sluice.flink.table.SluiceConnectorOptions.SCAN_BOUNDED_TIMESTAMP_MILLIS;
import static dev.sluice.flink.table.SluiceConnectorOptions.SCAN_PARALLELISM;
import static dev.sluice.flink.table.SluiceConnectorOptions.SCAN_STARTUP_MODE;
import static dev.sluice.flink.table.SluiceConnectorOptions.SCAN_STARTUP_SPECIFIC_OFFSETS;
import static dev.sluice.flink.table.SluiceConnectorOptions.SCAN_STARTUP_TIMESTAMP_MILLIS;
import static dev.sluice.flink.table.SluiceConnectorOptions.SCAN_TOPIC_PARTITION_DISCOVERY;
import static dev.sluice.flink.table.SluiceConnectorOptions.SLUICE_BROKERD_SOCKET;
import static dev.sluice.flink.table.SluiceConnectorOptions.SLUICE_MAX_OPEN_BATCHES;
import static dev.sluice.flink.table.SluiceConnectorOptions.SLUICE_MODE;
import static dev.sluice.flink.table.SluiceConnectorOptions.SLUICE_SLOTS_COUNT;
import static dev.sluice.flink.table.SluiceConnectorOptions.SLUICE_SLOTS_SIZE;
import static dev.sluice.flink.table.SluiceConnectorOptions.TOPIC;
import static dev.sluice.flink.table.SluiceConnectorOptions.TOPIC_PATTERN;
import static dev.sluice.flink.table.SluiceConnectorOptions.VALUE_FIELDS_INCLUDE;
import static dev.sluice.flink.table.SluiceConnectorOptions.VALUE_FORMAT;

import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.format.DecodingFormat;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DeserializationFormatFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.DataType;
import org.apache.flink.types.RowKind;

/**
 * {@code 'connector' = 'sluice'}: a table read by a {@link dev.sluice.flink.source.SluiceSource},
 * with the Kafka SQL connector's options and Flink's formats (docs/flink-sql.md). Reading only:
 * tables are written with Flink's Kafka connector.
 */
@Internal
public final class SluiceDynamicTableFactory implements DynamicTableSourceFactory {
    public static final String IDENTIFIER = "sluice";

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of(PROPS_BOOTSTRAP_SERVERS);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of(
                FactoryUtil.FORMAT,
                KEY_FORMAT,
                KEY_FIELDS,
                KEY_FIELDS_PREFIX,
                VALUE_FORMAT,
                VALUE_FIELDS_INCLUDE,
                TOPIC,
                TOPIC_PATTERN,
                PROPS_GROUP_ID,
                SCAN_STARTUP_MODE,
                SCAN_STARTUP_SPECIFIC_OFFSETS,
                SCAN_STARTUP_TIMESTAMP_MILLIS,
                SCAN_BOUNDED_MODE,
                SCAN_BOUNDED_SPECIFIC_OFFSETS,
                SCAN_BOUNDED_TIMESTAMP_MILLIS,
                SCAN_TOPIC_PARTITION_DISCOVERY,
                SCAN_PARALLELISM,
                SLUICE_MODE,
                SLUICE_BROKERD_SOCKET,
                SLUICE_SLOTS_COUNT,
                SLUICE_SLOTS_SIZE,
                SLUICE_MAX_OPEN_BATCHES);
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        DecodingFormat<DeserializationSchema<RowData>> keyFormat = keyFormat(helper);
        DecodingFormat<DeserializationSchema<RowData>> valueFormat = valueFormat(helper);
        helper.validateExcept(SluiceTableOptions.PROPERTIES_PREFIX);
        ReadableConfig options = helper.getOptions();
        if (context.getPrimaryKeyIndexes().length > 0
                && valueFormat.getChangelogMode().containsOnly(RowKind.INSERT)) {
            throw new ValidationException(
                    String.format(
                            "The table '%s' ('connector' = 'sluice') cannot have a PRIMARY KEY"
                                    + " with an insert-only value format: nothing guarantees"
                                    + " one row per key.",
                            context.getObjectIdentifier().asSummaryString()));
        }
        ScanSettings settings =
                SluiceTableOptions.scanSettings(options, context.getCatalogTable().getOptions());
        DataType physical = context.getPhysicalRowDataType();
        return new SluiceDynamicSource(
                physical,
                keyFormat,
                valueFormat,
                FormatProjections.key(options, physical),
                FormatProjections.value(options, physical),
                options.getOptional(KEY_FIELDS_PREFIX).orElse(null),
                settings,
                context.getObjectIdentifier().asSummaryString(),
                options.getOptional(SCAN_PARALLELISM).orElse(null));
    }

    private static DecodingFormat<DeserializationSchema<RowData>> keyFormat(
            FactoryUtil.TableFactoryHelper helper) {
        DecodingFormat<DeserializationSchema<RowData>> format =
                helper.discoverOptionalDecodingFormat(
                                DeserializationFormatFactory.class, KEY_FORMAT)
                        .orElse(null);
        if (format != null && !format.getChangelogMode().containsOnly(RowKind.INSERT)) {
            throw new ValidationException(
                    String.format(
                            "A key format should only deal with INSERT-only records. But %s has a"
                                    + " changelog mode of %s.",
                            helper.getOptions().get(KEY_FORMAT), format.getChangelogMode()));
        }
        return format;
    }

    /** {@code format}, or else {@code value.format}: one of them must be set. */
    private static DecodingFormat<DeserializationSchema<RowData>> valueFormat(
            FactoryUtil.TableFactoryHelper helper) {
        return helper.discoverOptionalDecodingFormat(
                        DeserializationFormatFactory.class, FactoryUtil.FORMAT)
                .orElseGet(
                        () ->
                                helper.discoverDecodingFormat(
                                        DeserializationFormatFactory.class, VALUE_FORMAT));
    }
}
