package dev.sluice.flink.generation.scheduler;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceEvent;

/** What the scheduler and its producers tell each other besides splits. */
@Internal
public final class JobEvents {
    private JobEvents() {}

    /**
     * Producer → scheduler, when it starts: its capacity, the tasks it computes at once (one
     * computing while the other's chunks leave) and its configured speed factor
     * (docs/generation.md, "Producers of unequal speed").
     */
    public record ProducerReady(int tasksInFlight, double speedFactor) implements SourceEvent {}

    /**
     * Producer → scheduler: a task is done, all its chunks emitted, or it failed ({@code failure}
     * not empty), which fails the job, or it was dropped before its end ({@code dropped}: its job
     * ended, or another copy of it won). {@code bytesEmitted}: the payload bytes it emitted; {@code
     * preloadMillis}: how long it waited for its job's generator to be made and preloaded, 0 but
     * for the producer's first task of the job (docs/generation.md, "Producers of unequal speed").
     */
    public record TaskDone(
            String jobId,
            String taskId,
            String failure,
            long bytesEmitted,
            boolean dropped,
            long preloadMillis)
            implements SourceEvent {

        /** A task computed to its end, its generator ready. */
        public static TaskDone complete(String jobId, String taskId, long bytesEmitted) {
            return new TaskDone(jobId, taskId, "", bytesEmitted, false, 0);
        }

        boolean isComplete() {
            return failure.isEmpty() && !dropped;
        }
    }

    /** Scheduler → producers: drop the job's tasks (cancelled or failed). */
    public record DropJob(String jobId) implements SourceEvent {}

    /**
     * Scheduler → a producer: drop this task, another copy of it was computed first
     * (docs/generation.md, "Speculative duplicates").
     */
    public record DropTask(String taskId) implements SourceEvent {}
}
