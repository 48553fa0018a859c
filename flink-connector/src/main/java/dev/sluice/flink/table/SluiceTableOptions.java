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

import dev.sluice.flink.source.OffsetResetStrategy;
import dev.sluice.flink.source.SluiceOffsets;
import dev.sluice.flink.table.SluiceConnectorOptions.ScanBoundedMode;
import dev.sluice.flink.table.SluiceConnectorOptions.ScanStartupMode;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
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
                options.getOptional(TOPIC_PATTERN).orElse(null),
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

    /** The topics named in {@code topic}; empty when {@code topic-pattern} names them. */
    private static List<String> topics(ReadableConfig options) {
        Optional<List<String>> topics = options.getOptional(TOPIC);
        Optional<String> pattern = options.getOptional(TOPIC_PATTERN);
        if (topics.isPresent() == pattern.isPresent()) {
            throw new ValidationException(
                    String.format(
                            "Set either '%s' (topics separated by ';') or '%s' (a regular"
                                    + " expression of topic names), %s.",
                            TOPIC.key(),
                            TOPIC_PATTERN.key(),
                            topics.isPresent() ? "not both" : "neither is set"));
        }
        if (pattern.isPresent()) {
            try {
                Pattern.compile(pattern.get());
            } catch (PatternSyntaxException e) {
                throw new ValidationException(
                        String.format(
                                "Option '%s' is no regular expression: %s at index %d of '%s'.",
                                TOPIC_PATTERN.key(),
                                e.getDescription(),
                                e.getIndex(),
                                pattern.get()));
            }
            return List.of();
        }
        if (topics.get().isEmpty() || topics.get().stream().anyMatch(String::isBlank)) {
            throw new ValidationException(
                    String.format(
                            "Option '%s' is %s: name one or more topics, separated by ';'.",
                            TOPIC.key(), topics.get()));
        }
        return topics.get();
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
                yield SluiceOffsets.committedOffsets(offsetReset(properties));
            }
            case TIMESTAMP ->
                    timestamp(options, SCAN_STARTUP_MODE, mode, SCAN_STARTUP_TIMESTAMP_MILLIS);
            case SPECIFIC_OFFSETS ->
                    SluiceOffsets.offsets(
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
                yield SluiceOffsets.committedOffsets();
            }
            case TIMESTAMP ->
                    timestamp(options, SCAN_BOUNDED_MODE, mode, SCAN_BOUNDED_TIMESTAMP_MILLIS);
            // As with the Kafka connector, a partition not named stops at the group's committed
            // offset, else at its earliest: it is not read.
            case SPECIFIC_OFFSETS ->
                    SluiceOffsets.offsets(
                            specificOffsets(
                                    options,
                                    topics,
                                    SCAN_BOUNDED_MODE,
                                    mode,
                                    SCAN_BOUNDED_SPECIFIC_OFFSETS));
        };
    }

    /**
     * Where a partition without a committed offset starts in {@code group-offsets} mode: {@code
     * properties.auto.offset.reset}, and none (the job fails, naming it) when unset, as the Kafka
     * connector reads it.
     */
    private static OffsetResetStrategy offsetReset(Map<String, String> properties) {
        String reset = properties.get(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG);
        if (reset == null) {
            return OffsetResetStrategy.NONE;
        }
        for (OffsetResetStrategy strategy : OffsetResetStrategy.values()) {
            if (strategy.name().equalsIgnoreCase(reset)) {
                return strategy;
            }
        }
        throw new ValidationException(
                String.format(
                        "Option '%s%s' is '%s': set it to 'earliest', 'latest' or 'none'.",
                        PROPERTIES_PREFIX, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, reset));
    }

    private static SluiceOffsets timestamp(
            ReadableConfig options,
            ConfigOption<?> modeOption,
            Object mode,
            ConfigOption<Long> option) {
        required(options, modeOption, mode, option);
        long timestamp = options.get(option);
        if (timestamp < 0) {
            throw new ValidationException(
                    String.format(
                            "Option '%s' is %d: milliseconds since the epoch, 0 or more.",
                            option.key(), timestamp));
        }
        return SluiceOffsets.timestamp(timestamp);
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
                            "'%s' = '%s' needs a single topic in '%s' (not '%s'): the offsets"
                                    + " name partitions only, but %s.",
                            modeOption.key(),
                            mode,
                            TOPIC.key(),
                            TOPIC_PATTERN.key(),
                            topics.isEmpty()
                                    ? "'" + TOPIC_PATTERN.key() + "' is set"
                                    : "'" + TOPIC.key() + "' names " + topics.size()));
        }
        Map<TopicPartition, Long> offsets = new HashMap<>();
        SpecificOffsets.parse(options.get(option), option.key())
                .forEach(
                        (partition, offset) ->
                                offsets.put(new TopicPartition(topics.get(0), partition), offset));
        return offsets;
    }
}
