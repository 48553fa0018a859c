package dev.sluice.flink.table;

import static dev.sluice.flink.table.SluiceConnectorOptions.PROPS_GROUP_ID;
import static dev.sluice.flink.table.SluiceConnectorOptions.SCAN_BOUNDED_MODE;
import static dev.sluice.flink.table.SluiceConnectorOptions.SCAN_BOUNDED_SPECIFIC_OFFSETS;
import static dev.sluice.flink.table.SluiceConnectorOptions.SCAN_BOUNDED_TIMESTAMP_MILLIS;
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

import dev.sluice.flink.source.SluiceOffsets;
import dev.sluice.flink.table.SluiceConnectorOptions.ScanBoundedMode;
import dev.sluice.flink.table.SluiceConnectorOptions.ScanStartupMode;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;

/**
 * Reads a table's options into its {@link ScanSettings}, refusing combinations that do not make a
 * source with a message naming the options to set, as the Kafka SQL connector's {@code
 * KafkaConnectorOptionsUtil} does (docs/flink-sql.md, Options).
 */
@Internal
final class SluiceTableOptions {
    /** The prefix of the Kafka client properties. */
    static final String PROPERTIES_PREFIX = "properties.";

    /**
     * {@code KafkaSourceOptions.COMMIT_OFFSETS_ON_CHECKPOINT}'s key: a property of the source, not
     * of a Kafka client.
     */
    static final String COMMIT_OFFSETS_ON_CHECKPOINT = "commit.offsets.on.checkpoint";

    private SluiceTableOptions() {}

    /**
     * The settings of a table's source.
     *
     * @param options the table's options, validated by the factory's helper
     * @param rawOptions the same as written, for the {@code properties.*} ones
     */
    static ScanSettings scanSettings(ReadableConfig options, Map<String, String> rawOptions) {
        List<String> topics = topics(options);
        Map<String, String> properties = kafkaProperties(rawOptions);
        Boolean commit = commitOffsetsOnCheckpoint(properties.remove(COMMIT_OFFSETS_ON_CHECKPOINT));
        return new ScanSettings(
                topics,
                properties,
                commit,
                startingOffsets(options, topics, properties),
                stoppingOffsets(options, topics, properties),
                options.get(SCAN_TOPIC_PARTITION_DISCOVERY),
                options.get(SLUICE_MODE),
                options.get(SLUICE_BROKERD_SOCKET),
                options.get(SLUICE_SLOTS_COUNT),
                options.get(SLUICE_SLOTS_SIZE),
                options.get(SLUICE_MAX_OPEN_BATCHES));
    }

    private static List<String> topics(ReadableConfig options) {
        if (options.getOptional(TOPIC_PATTERN).isPresent()) {
            throw new ValidationException(
                    String.format(
                            "Option '%s' is not supported yet by the 'sluice' connector: name the"
                                    + " topics in '%s', separated by ';'.",
                            TOPIC_PATTERN.key(), TOPIC.key()));
        }
        List<String> topics =
                options.getOptional(TOPIC)
                        .orElseThrow(
                                () ->
                                        new ValidationException(
                                                String.format(
                                                        "Option '%s' must be set: the topics to"
                                                                + " read, separated by ';'.",
                                                        TOPIC.key())));
        if (topics.isEmpty() || topics.stream().anyMatch(String::isBlank)) {
            throw new ValidationException(
                    String.format(
                            "Option '%s' is %s: name one or more topics, separated by ';'.",
                            TOPIC.key(), topics));
        }
        return topics;
    }

    private static Map<String, String> kafkaProperties(Map<String, String> rawOptions) {
        Map<String, String> properties = new HashMap<>();
        rawOptions.forEach(
                (key, value) -> {
                    if (key.startsWith(PROPERTIES_PREFIX)) {
                        properties.put(key.substring(PROPERTIES_PREFIX.length()), value);
                    }
                });
        return properties;
    }

    private static Boolean commitOffsetsOnCheckpoint(String value) {
        if (value == null) {
            return null;
        }
        if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
            throw new ValidationException(
                    String.format(
                            "Option '%s%s' is '%s': set it to 'true' or 'false'.",
                            PROPERTIES_PREFIX, COMMIT_OFFSETS_ON_CHECKPOINT, value));
        }
        return Boolean.parseBoolean(value);
    }

    private static SluiceOffsets startingOffsets(
            ReadableConfig options, List<String> topics, Map<String, String> properties) {
        ScanStartupMode mode = options.get(SCAN_STARTUP_MODE);
        onlyIn(
                options,
                SCAN_STARTUP_MODE,
                mode,
                ScanStartupMode.TIMESTAMP,
                SCAN_STARTUP_TIMESTAMP_MILLIS);
        onlyIn(
                options,
                SCAN_STARTUP_MODE,
                mode,
                ScanStartupMode.SPECIFIC_OFFSETS,
                SCAN_STARTUP_SPECIFIC_OFFSETS);
        return switch (mode) {
            case EARLIEST_OFFSET -> SluiceOffsets.earliest();
            case LATEST_OFFSET -> SluiceOffsets.latest();
            case GROUP_OFFSETS -> {
                requireGroup(properties, SCAN_STARTUP_MODE, mode);
                yield committedStarts(properties);
            }
            case TIMESTAMP -> {
                required(options, SCAN_STARTUP_MODE, mode, SCAN_STARTUP_TIMESTAMP_MILLIS);
                throw notSupportedYet(SCAN_STARTUP_MODE, mode);
            }
            case SPECIFIC_OFFSETS ->
                    SluiceOffsets.of(
                            specificOffsets(
                                    options,
                                    topics,
                                    SCAN_STARTUP_MODE,
                                    mode,
                                    SCAN_STARTUP_SPECIFIC_OFFSETS));
        };
    }

    private static SluiceOffsets stoppingOffsets(
            ReadableConfig options, List<String> topics, Map<String, String> properties) {
        ScanBoundedMode mode = options.get(SCAN_BOUNDED_MODE);
        onlyIn(
                options,
                SCAN_BOUNDED_MODE,
                mode,
                ScanBoundedMode.TIMESTAMP,
                SCAN_BOUNDED_TIMESTAMP_MILLIS);
        onlyIn(
                options,
                SCAN_BOUNDED_MODE,
                mode,
                ScanBoundedMode.SPECIFIC_OFFSETS,
                SCAN_BOUNDED_SPECIFIC_OFFSETS);
        return switch (mode) {
            case UNBOUNDED -> null;
            case LATEST_OFFSET -> SluiceOffsets.latest();
            case GROUP_OFFSETS -> {
                requireGroup(properties, SCAN_BOUNDED_MODE, mode);
                yield SluiceOffsets.committedOrLatest();
            }
            case TIMESTAMP -> {
                required(options, SCAN_BOUNDED_MODE, mode, SCAN_BOUNDED_TIMESTAMP_MILLIS);
                throw notSupportedYet(SCAN_BOUNDED_MODE, mode);
            }
            // Partitions not named stop at their earliest offset: they are not read, as with
            // the Kafka connector.
            case SPECIFIC_OFFSETS ->
                    SluiceOffsets.of(
                            specificOffsets(
                                    options,
                                    topics,
                                    SCAN_BOUNDED_MODE,
                                    mode,
                                    SCAN_BOUNDED_SPECIFIC_OFFSETS));
        };
    }

    /**
     * Where a group without a committed offset starts: {@code properties.auto.offset.reset}, as the
     * Kafka connector's {@code group-offsets} reads it.
     */
    private static SluiceOffsets committedStarts(Map<String, String> properties) {
        String reset = properties.get(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG);
        if ("earliest".equals(reset)) {
            return SluiceOffsets.committedOrEarliest();
        }
        if ("latest".equals(reset)) {
            return SluiceOffsets.committedOrLatest();
        }
        throw new ValidationException(
                String.format(
                        "'%s' = '%s' with '%s%s' %s is not supported yet by the 'sluice'"
                                + " connector (a partition without a committed offset would fail"
                                + " the job): set '%s%s' to 'earliest' or 'latest'.",
                        SCAN_STARTUP_MODE.key(),
                        ScanStartupMode.GROUP_OFFSETS,
                        PROPERTIES_PREFIX,
                        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                        reset == null ? "unset" : "= '" + reset + "'",
                        PROPERTIES_PREFIX,
                        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG));
    }

    private static void requireGroup(
            Map<String, String> properties, ConfigOption<?> modeOption, Object mode) {
        String group = properties.get(ConsumerConfig.GROUP_ID_CONFIG);
        if (group == null || group.isBlank()) {
            throw new ValidationException(
                    String.format(
                            "'%s' = '%s' reads the committed offsets of a consumer group: set '%s',"
                                    + " or another '%s'.",
                            modeOption.key(), mode, PROPS_GROUP_ID.key(), modeOption.key()));
        }
    }

    private static void required(
            ReadableConfig options,
            ConfigOption<?> modeOption,
            Object mode,
            ConfigOption<?> option) {
        if (options.getOptional(option).isEmpty()) {
            throw new ValidationException(
                    String.format(
                            "'%s' is required in '%s' = '%s' but missing.",
                            option.key(), modeOption.key(), mode));
        }
    }

    /** Refuses an option that the mode in force does not read, which would be ignored. */
    private static <M> void onlyIn(
            ReadableConfig options,
            ConfigOption<M> modeOption,
            M mode,
            M readingMode,
            ConfigOption<?> option) {
        if (mode != readingMode && options.getOptional(option).isPresent()) {
            throw new ValidationException(
                    String.format(
                            "'%s' is read only in '%s' = '%s', but '%s' is '%s': remove it or set"
                                    + " '%s' to '%s'.",
                            option.key(),
                            modeOption.key(),
                            readingMode,
                            modeOption.key(),
                            mode,
                            modeOption.key(),
                            readingMode));
        }
    }

    private static ValidationException notSupportedYet(ConfigOption<?> modeOption, Object mode) {
        return new ValidationException(
                String.format(
                        "'%s' = '%s' is not supported yet by the 'sluice' connector.",
                        modeOption.key(), mode));
    }

    private static Map<TopicPartition, Long> specificOffsets(
            ReadableConfig options,
            List<String> topics,
            ConfigOption<?> modeOption,
            Object mode,
            ConfigOption<String> option) {
        required(options, modeOption, mode, option);
        if (topics.size() != 1) {
            throw new ValidationException(
                    String.format(
                            "'%s' = '%s' needs a single topic in '%s', which names %d; the"
                                    + " offsets name partitions only.",
                            modeOption.key(), mode, TOPIC.key(), topics.size()));
        }
        Map<TopicPartition, Long> offsets = new HashMap<>();
        SpecificOffsets.parse(options.get(option), option.key())
                .forEach(
                        (partition, offset) ->
                                offsets.put(new TopicPartition(topics.get(0), partition), offset));
        return offsets;
    }
}
