package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;
import dev.sluice.client.segment.ObjectKind;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * SUBSCRIBED: the subscription's id, the segment that carries its objects (a file named {@code
 * segmentName} in the folder {@code segmentDir}, the daemon's {@code sluice.segment.dir}), the
 * Arrow Schema message of its objects, the lane to try first ({@link #NO_LANE_HINT} for any) and
 * the partitions it reads. {@code segmentDir} is empty in protocol version 1, which does not carry
 * it.
 */
@Internal
public record Subscribed(
        long subscriptionId,
        ObjectKind objectKind,
        int laneHint,
        List<Integer> partitions,
        String segmentName,
        byte[] schema,
        String segmentDir)
        implements ControlMessage {
    public static final int NO_LANE_HINT = 65535;

    public Subscribed {
        Objects.requireNonNull(objectKind, "objectKind");
        partitions = List.copyOf(partitions);
        Objects.requireNonNull(segmentName, "segmentName");
        schema = schema.clone();
        Objects.requireNonNull(segmentDir, "segmentDir");
    }

    @Override
    public byte[] schema() {
        return schema.clone();
    }

    @Override
    public MessageType type() {
        return MessageType.SUBSCRIBED;
    }

    // The schema is compared by content, not by array identity.
    @Override
    public boolean equals(Object other) {
        return other instanceof Subscribed that
                && subscriptionId == that.subscriptionId
                && objectKind == that.objectKind
                && laneHint == that.laneHint
                && partitions.equals(that.partitions)
                && segmentName.equals(that.segmentName)
                && Arrays.equals(schema, that.schema)
                && segmentDir.equals(that.segmentDir);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                        subscriptionId, objectKind, laneHint, partitions, segmentName, segmentDir)
                + 31 * Arrays.hashCode(schema);
    }

    @Override
    public String toString() {
        return "Subscribed[subscriptionId="
                + Long.toUnsignedString(subscriptionId)
                + ", objectKind="
                + objectKind
                + ", laneHint="
                + laneHint
                + ", partitions="
                + partitions
                + ", segmentName="
                + segmentName
                + ", schema="
                + HexFormat.of().formatHex(schema)
                + ", segmentDir="
                + segmentDir
                + "]";
    }
}
