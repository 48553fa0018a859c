package dev.sluice.flink.generation.reader;

import dev.sluice.client.job.Transport;
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

    /**
     * The task as a checkpoint keeps it: its chunks still to come go through Kafka. A producer
     * restored from the checkpoint may run on another host than the one the scheduler chose the
     * local way for, and a local chunk handed to that host's daemon would reach no reader of the
     * stream (docs/generation.md, "Recovery").
     */
    ComputeTaskSplit toSplit() {
        return new ComputeTaskSplit(split.task(), emitted, Transport.KAFKA);
    }

    String jobId() {
        return split.jobId();
    }
}
