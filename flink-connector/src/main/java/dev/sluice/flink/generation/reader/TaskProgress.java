package dev.sluice.flink.generation.reader;

import dev.sluice.flink.generation.split.ComputeTaskSplit;

/** A task being emitted: how many of its chunks went out. */
final class TaskProgress {
    private final ComputeTaskSplit split;
    private int emitted;

    TaskProgress(ComputeTaskSplit split) {
        this.split = split;
        this.emitted = split.emittedChunks();
    }

    void emitted() {
        emitted++;
    }

    ComputeTaskSplit toSplit() {
        return new ComputeTaskSplit(split.task(), emitted, split.transport());
    }

    String jobId() {
        return split.jobId();
    }
}
