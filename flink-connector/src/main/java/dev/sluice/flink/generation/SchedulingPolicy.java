package dev.sluice.flink.generation;

import dev.sluice.client.job.JobSpec;
import java.io.Serializable;
import java.util.List;
import java.util.Optional;
import org.apache.flink.annotation.PublicEvolving;

/**
 * Which compute task a producer asking for work gets: the scheduler's policy (seed 001 §3.1: a
 * customizable policy, one event loop deciding). The scheduler calls it on its one thread, each
 * time a producer has room for a task, with the running jobs that still have tasks to hand out.
 */
@PublicEvolving
public interface SchedulingPolicy extends Serializable {

    /** The task for {@code producer}, taken from one of {@code jobs}, or empty to give none. */
    Optional<ComputeTask> next(Producer producer, List<SchedulableJob> jobs);

    /** A producer: a GenerationSource reader. */
    record Producer(int subtask, String host, int tasksInFlight) {}

    /** A running job as a policy sees it. */
    interface SchedulableJob {
        JobSpec spec();

        /** The streams with tasks not handed out yet, in the spec's order. */
        List<String> streamsWithWork();

        /** The host of the stream's output location. */
        String hostOf(String stream);

        /** Hands out the next task of {@code stream}. */
        ComputeTask take(String stream);
    }
}
