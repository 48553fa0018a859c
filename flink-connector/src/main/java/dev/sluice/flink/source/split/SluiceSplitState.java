package dev.sluice.flink.source.split;

import org.apache.flink.annotation.Internal;

/** A split being read: the offset of the next record to emit moves as records are emitted. */
@Internal
public final class SluiceSplitState {
    private final SluiceSplit split;
    private long nextOffset;

    public SluiceSplitState(SluiceSplit split) {
        this.split = split;
        this.nextOffset = split.startingOffset();
    }

    public void emitted(long offset) {
        nextOffset = offset + 1;
    }

    public long nextOffset() {
        return nextOffset;
    }

    /** What a checkpoint holds: the split, starting at the next record to emit. */
    public SluiceSplit toSplit() {
        return split.withStartingOffset(nextOffset);
    }
}
