package dev.sluice.flink.generation.scheduler;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceEvent;

/** What the scheduler and its producers tell each other besides splits. */
@Internal
public final class JobEvents {
    private JobEvents() {}

    /**
     * Producer → scheduler: a task is done, all its chunks emitted, or it failed ({@code failure}
     * not empty), which fails the job.
     */
    public record TaskDone(String jobId, String taskId, String failure) implements SourceEvent {}

    /** Scheduler → producers: drop the job's tasks (cancelled or failed). */
    public record DropJob(String jobId) implements SourceEvent {}
}
