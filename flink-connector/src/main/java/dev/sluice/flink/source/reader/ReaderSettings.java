package dev.sluice.flink.source.reader;

import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.reader.push.PushSettings;
import java.io.Serializable;
import java.util.Properties;
import org.apache.flink.annotation.Internal;

/**
 * What a source reader is made from.
 *
 * @param sourceId the same for every reader of one source, in every run of its job
 * @param groupId the consumer group offsets are committed to; empty for none
 * @param probeTopic a topic of the source, which a reader subscribes to for a moment to check what
 *     PUSH needs
 */
@Internal
public record ReaderSettings(
        ReadMode mode,
        PushSettings push,
        Properties kafkaProperties,
        String groupId,
        boolean commitOffsetsOnCheckpoint,
        String sourceId,
        String probeTopic)
        implements Serializable {}
