package dev.sluice.flink.table;

import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.SluiceOffsets;
import dev.sluice.flink.source.SluiceSource;
import dev.sluice.flink.source.SluiceSourceBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What a table's options ask of its {@link SluiceSource}, read by {@link SluiceTableOptions}: one
 * value per setter of {@link SluiceSourceBuilder}, so that a table reads as the DataStream source
 * built with the same settings does.
 *
 * @param topics the topics to read; empty when {@code topicPattern} is set
 * @param topicPattern the regular expression of the topics to read; null when {@code topics} are
 *     named
 * @param properties the Kafka client properties ({@code properties.*} without the prefix), the
 *     group id among them
 * @param commitOffsetsOnCheckpoint {@code properties.commit.offsets.on.checkpoint}, null when not
 *     set (on whenever there is a group)
 * @param stoppingOffsets where a bounded table ends; null for an unbounded one
 */
record ScanSettings(
        List<String> topics,
        String topicPattern,
        Map<String, String> properties,
        Boolean commitOffsetsOnCheckpoint,
        SluiceOffsets startingOffsets,
        SluiceOffsets stoppingOffsets,
        Duration partitionDiscoveryInterval,
        ReadMode readMode,
        String brokerdSocket,
        int slotCount,
        long slotSize,
        int maxOpenBatches) {

    ScanSettings {
        topics = List.copyOf(topics);
        properties = Map.copyOf(properties);
    }

    /** A builder with these settings; the caller adds the deserializer. */
    <T> SluiceSourceBuilder<T> builder() {
        SluiceSourceBuilder<T> builder = SluiceSource.<T>builder();
        if (topicPattern == null) {
            builder.setTopics(topics);
        } else {
            builder.setTopicPattern(Pattern.compile(topicPattern));
        }
        builder.setStartingOffsets(startingOffsets)
                .setPartitionDiscoveryInterval(partitionDiscoveryInterval)
                .setReadMode(readMode)
                .setBrokerdSocket(Path.of(brokerdSocket))
                .setSlots(slotCount, slotSize, maxOpenBatches);
        properties.forEach(builder::setProperty);
        if (commitOffsetsOnCheckpoint != null) {
            builder.setCommitOffsetsOnCheckpoint(commitOffsetsOnCheckpoint);
        }
        if (stoppingOffsets != null) {
            builder.setBounded(stoppingOffsets);
        }
        return builder;
    }
}
