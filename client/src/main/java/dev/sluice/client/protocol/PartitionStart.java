package dev.sluice.client.protocol;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.Objects;

/** A SUBSCRIBE partition entry: a partition and where it starts ({@code offset} with OFFSET). */
@PublicEvolving
public record PartitionStart(int partition, StartPosition start, long offset) {
    public PartitionStart {
        Objects.requireNonNull(start, "start");
    }

    public static PartitionStart earliest(int partition) {
        return new PartitionStart(partition, StartPosition.EARLIEST, 0);
    }

    public static PartitionStart latest(int partition) {
        return new PartitionStart(partition, StartPosition.LATEST, 0);
    }

    public static PartitionStart at(int partition, long offset) {
        return new PartitionStart(partition, StartPosition.OFFSET, offset);
    }
}
