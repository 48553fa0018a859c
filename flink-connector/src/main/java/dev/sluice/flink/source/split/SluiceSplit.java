package dev.sluice.flink.source.split;

import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.kafka.common.TopicPartition;

/**
 * One Kafka partition to read, from {@code startingOffset} to just before {@code stoppingOffset}
 * ({@link #NO_STOPPING_OFFSET} when unbounded). {@code leaderHost} is where the partition's leader
 * was when the split was made: the enumerator's hint for placing it next to a {@code
 * sluice-brokerd}.
 */
@Internal
public final class SluiceSplit implements SourceSplit {
    public static final long NO_STOPPING_OFFSET = Long.MAX_VALUE;

    private final TopicPartition partition;
    private final long startingOffset;
    private final long stoppingOffset;
    private final String leaderHost;

    public SluiceSplit(
            TopicPartition partition, long startingOffset, long stoppingOffset, String leaderHost) {
        if (startingOffset < 0) {
            throw new IllegalArgumentException(
                    partition + ": starting offset " + startingOffset + " < 0");
        }
        this.partition = Objects.requireNonNull(partition);
        this.startingOffset = startingOffset;
        this.stoppingOffset = stoppingOffset;
        this.leaderHost = Objects.requireNonNull(leaderHost);
    }

    public static String splitId(TopicPartition partition) {
        return partition.toString();
    }

    @Override
    public String splitId() {
        return splitId(partition);
    }

    public TopicPartition partition() {
        return partition;
    }

    public long startingOffset() {
        return startingOffset;
    }

    public long stoppingOffset() {
        return stoppingOffset;
    }

    public boolean isBounded() {
        return stoppingOffset != NO_STOPPING_OFFSET;
    }

    /** Nothing is left to read: the split starts where it stops. */
    public boolean isExhausted() {
        return startingOffset >= stoppingOffset;
    }

    public String leaderHost() {
        return leaderHost;
    }

    public SluiceSplit withStartingOffset(long offset) {
        return new SluiceSplit(partition, offset, stoppingOffset, leaderHost);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SluiceSplit s
                && partition.equals(s.partition)
                && startingOffset == s.startingOffset
                && stoppingOffset == s.stoppingOffset
                && leaderHost.equals(s.leaderHost);
    }

    @Override
    public int hashCode() {
        return Objects.hash(partition, startingOffset, stoppingOffset, leaderHost);
    }

    @Override
    public String toString() {
        return splitId()
                + "["
                + startingOffset
                + ", "
                + (isBounded() ? Long.toString(stoppingOffset) : "∞")
                + ") leader "
                + leaderHost;
    }
}
