package dev.sluice.flink.table;

import static org.apache.flink.configuration.description.TextElement.text;

import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.SluiceSourceBuilder;
import java.time.Duration;
import java.util.List;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.DescribedEnum;
import org.apache.flink.configuration.description.InlineElement;
import org.apache.flink.table.factories.FactoryUtil;

/**
 * The options of the {@code 'connector' = 'sluice'} table source: the Kafka SQL connector's names
 * and meanings where they apply, and the Sluice settings under {@code sluice.} (docs/flink-sql.md,
 * Options).
 */
@PublicEvolving
public final class SluiceConnectorOptions {

    // Formats, as the Kafka SQL connector names them.

    public static final ConfigOption<String> KEY_FORMAT =
            ConfigOptions.key("key" + FactoryUtil.FORMAT_SUFFIX)
                    .stringType()
                    .noDefaultValue()
                    .withDescription("The format of the record keys, e.g. 'json' or 'raw'.");

    public static final ConfigOption<String> VALUE_FORMAT =
            ConfigOptions.key("value" + FactoryUtil.FORMAT_SUFFIX)
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "The format of the record values ('format' is its short form).");

    public static final ConfigOption<List<String>> KEY_FIELDS =
            ConfigOptions.key("key.fields")
                    .stringType()
                    .asList()
                    .defaultValues()
                    .withDescription(
                            "The physical columns read from the key, separated by ';'; needed with"
                                    + " 'key.format'.");

    public static final ConfigOption<String> KEY_FIELDS_PREFIX =
            ConfigOptions.key("key.fields-prefix")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "A prefix of the key columns' names that the key format does not see;"
                                    + " needs 'value.fields-include' = 'EXCEPT_KEY'.");

    public static final ConfigOption<ValueFieldsStrategy> VALUE_FIELDS_INCLUDE =
            ConfigOptions.key("value.fields-include")
                    .enumType(ValueFieldsStrategy.class)
                    .defaultValue(ValueFieldsStrategy.ALL)
                    .withDescription(
                            "Whether the value format reads the key columns too (ALL) or not"
                                    + " (EXCEPT_KEY).");

    public static final ConfigOption<Integer> SCAN_PARALLELISM = FactoryUtil.SOURCE_PARALLELISM;

    // Kafka.

    public static final ConfigOption<List<String>> TOPIC =
            ConfigOptions.key("topic")
                    .stringType()
                    .asList()
                    .noDefaultValue()
                    .withDescription(
                            "The topics to read, separated by ';'; either this or"
                                    + " 'topic-pattern'.");

    public static final ConfigOption<String> TOPIC_PATTERN =
            ConfigOptions.key("topic-pattern")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "A regular expression of the topics to read; either this or 'topic'.");

    public static final ConfigOption<String> PROPS_BOOTSTRAP_SERVERS =
            ConfigOptions.key("properties.bootstrap.servers")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("The Kafka brokers to connect to.");

    public static final ConfigOption<String> PROPS_GROUP_ID =
            ConfigOptions.key("properties.group.id")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "The consumer group: its committed offsets as starts, and where"
                                    + " checkpoints commit to.");

    public static final ConfigOption<ScanStartupMode> SCAN_STARTUP_MODE =
            ConfigOptions.key("scan.startup.mode")
                    .enumType(ScanStartupMode.class)
                    .defaultValue(ScanStartupMode.GROUP_OFFSETS)
                    .withDescription("Where the partitions start.");

    public static final ConfigOption<String> SCAN_STARTUP_SPECIFIC_OFFSETS =
            ConfigOptions.key("scan.startup.specific-offsets")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "The starts in 'specific-offsets' startup mode, e.g."
                                    + " 'partition:0,offset:42;partition:1,offset:300'.");

    public static final ConfigOption<Long> SCAN_STARTUP_TIMESTAMP_MILLIS =
            ConfigOptions.key("scan.startup.timestamp-millis")
                    .longType()
                    .noDefaultValue()
                    .withDescription("The start in 'timestamp' startup mode.");

    public static final ConfigOption<ScanBoundedMode> SCAN_BOUNDED_MODE =
            ConfigOptions.key("scan.bounded.mode")
                    .enumType(ScanBoundedMode.class)
                    .defaultValue(ScanBoundedMode.UNBOUNDED)
                    .withDescription("Where the partitions end, if they end.");

    public static final ConfigOption<String> SCAN_BOUNDED_SPECIFIC_OFFSETS =
            ConfigOptions.key("scan.bounded.specific-offsets")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "The ends in 'specific-offsets' bounded mode, in the format of"
                                    + " 'scan.startup.specific-offsets'.");

    public static final ConfigOption<Long> SCAN_BOUNDED_TIMESTAMP_MILLIS =
            ConfigOptions.key("scan.bounded.timestamp-millis")
                    .longType()
                    .noDefaultValue()
                    .withDescription("The end in 'timestamp' bounded mode.");

    public static final ConfigOption<Duration> SCAN_TOPIC_PARTITION_DISCOVERY =
            ConfigOptions.key("scan.topic-partition-discovery.interval")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(5))
                    .withDescription(
                            "How often an unbounded source looks for new partitions; 0: only at"
                                    + " start.");

    // Sluice: SluiceSourceBuilder's setters, with its defaults.

    public static final ConfigOption<ReadMode> SLUICE_MODE =
            ConfigOptions.key("sluice.mode")
                    .enumType(ReadMode.class)
                    .defaultValue(ReadMode.AUTO)
                    .withDescription(
                            "PUSH (through the sluice-brokerd on each TaskManager's host), PULL (a"
                                    + " KafkaConsumer per reader) or AUTO (PUSH where it can).");

    public static final ConfigOption<String> SLUICE_BROKERD_SOCKET =
            ConfigOptions.key("sluice.brokerd-socket")
                    .stringType()
                    .defaultValue(SluiceSourceBuilder.DEFAULT_SOCKET)
                    .withDescription(
                            "The control socket of the sluice-brokerd on every host, an absolute"
                                    + " path.");

    public static final ConfigOption<Integer> SLUICE_SLOTS_COUNT =
            ConfigOptions.key("sluice.slots.count")
                    .intType()
                    .defaultValue(SluiceSourceBuilder.DEFAULT_SLOT_COUNT)
                    .withDescription("PUSH: the slots of each subscription's segment, 1 to 65536.");

    public static final ConfigOption<Long> SLUICE_SLOTS_SIZE =
            ConfigOptions.key("sluice.slots.size")
                    .longType()
                    .defaultValue(SluiceSourceBuilder.DEFAULT_SLOT_SIZE)
                    .withDescription(
                            "PUSH: the bytes of each slot, a multiple of 64 from 256 to 2^31 -"
                                    + " 64.");

    public static final ConfigOption<Integer> SLUICE_MAX_OPEN_BATCHES =
            ConfigOptions.key("sluice.max-open-batches")
                    .intType()
                    .defaultValue(SluiceSourceBuilder.DEFAULT_MAX_OPEN_BATCHES)
                    .withDescription(
                            "PUSH: the batches a TaskManager's readers hold at once, at most"
                                    + " 'sluice.slots.count'.");

    /** Whether the value format reads the key's columns too. */
    public enum ValueFieldsStrategy {
        ALL,
        EXCEPT_KEY
    }

    /** Where the partitions start: {@code KafkaConnectorOptions.ScanStartupMode}'s values. */
    public enum ScanStartupMode implements DescribedEnum {
        EARLIEST_OFFSET("earliest-offset", "The earliest offset of each partition."),
        LATEST_OFFSET("latest-offset", "The latest offset of each partition."),
        GROUP_OFFSETS(
                "group-offsets",
                "The group's committed offsets; where it has none, 'properties.auto.offset.reset'"
                        + " (earliest, latest, or none: the job fails, the default)."),
        TIMESTAMP("timestamp", "The first offset at or after 'scan.startup.timestamp-millis'."),
        SPECIFIC_OFFSETS(
                "specific-offsets",
                "The offsets of 'scan.startup.specific-offsets'; for the others the group's"
                        + " committed offset, else the earliest.");

        private final String value;
        private final InlineElement description;

        ScanStartupMode(String value, String description) {
            this.value = value;
            this.description = text(description);
        }

        @Override
        public String toString() {
            return value;
        }

        @Override
        public InlineElement getDescription() {
            return description;
        }
    }

    /** Where the partitions end: {@code KafkaConnectorOptions.ScanBoundedMode}'s values. */
    public enum ScanBoundedMode implements DescribedEnum {
        UNBOUNDED("unbounded", "They do not end."),
        LATEST_OFFSET("latest-offset", "The latest offsets when a partition is first seen."),
        GROUP_OFFSETS(
                "group-offsets",
                "The group's committed offsets; a partition without one fails the job."),
        TIMESTAMP("timestamp", "The first offset at or after 'scan.bounded.timestamp-millis'."),
        SPECIFIC_OFFSETS(
                "specific-offsets",
                "The offsets of 'scan.bounded.specific-offsets'; the others end at the group's"
                        + " committed offset, else are not read.");

        private final String value;
        private final InlineElement description;

        ScanBoundedMode(String value, String description) {
            this.value = value;
            this.description = text(description);
        }

        @Override
        public String toString() {
            return value;
        }

        @Override
        public InlineElement getDescription() {
            return description;
        }
    }

    private SluiceConnectorOptions() {}
}
