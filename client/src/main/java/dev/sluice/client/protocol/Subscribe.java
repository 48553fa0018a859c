package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;
import java.util.List;
import java.util.Objects;

/**
 * SUBSCRIBE: the reader asks for a topic's records or chunk streams in a segment of {@code
 * slotCount} slots of {@code slotSize} bytes. {@code localLeaders} lets the daemon pick the
 * partitions led by its broker, {@code partitions} then only naming starts; {@code readUncommitted}
 * (version 3 on) reads the records of open and aborted transactions too, where clear only committed
 * ones (in versions 1 and 2 the daemon's {@code isolation.level} decides); an empty {@code groupId}
 * means no consumer group, an empty {@code jobFilter} every job, a {@code reorderWindowBytes} of 0
 * the daemon's default; {@code streams} (CHUNK_STREAMS only) resume streams past the chunks the
 * reader has.
 */
@Internal
public record Subscribe(
        int slotCount,
        boolean localLeaders,
        boolean readUncommitted,
        long slotSize,
        long reorderWindowBytes,
        Mode mode,
        StartPosition defaultStart,
        List<PartitionStart> partitions,
        String topic,
        String groupId,
        String jobFilter,
        List<StreamStart> streams)
        implements ControlMessage {
    public Subscribe {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(defaultStart, "defaultStart");
        partitions = List.copyOf(partitions);
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(jobFilter, "jobFilter");
        streams = List.copyOf(streams);
    }

    @Override
    public MessageType type() {
        return MessageType.SUBSCRIBE;
    }
}
