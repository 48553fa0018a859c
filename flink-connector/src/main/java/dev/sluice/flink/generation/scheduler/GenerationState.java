package dev.sluice.flink.generation.scheduler;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.annotation.Internal;

/**
 * The scheduler's checkpoint: the live jobs, the ids of those that ended (a submission of theirs
 * read again is ignored), and where the control plane had read to.
 */
@Internal
public record GenerationState(
        List<Job> jobs, Set<String> finishedJobs, Map<String, Long> positions) {

    public GenerationState {
        jobs = List.copyOf(jobs);
        finishedJobs = Set.copyOf(finishedJobs);
        positions = Map.copyOf(positions);
    }

    public static GenerationState empty() {
        return new GenerationState(List.of(), Set.of(), Map.of());
    }

    /**
     * A live job: its next task per stream, the tasks given back and not handed out again, the
     * streams whose readers said they are there, and how many tasks were handed out and how many of
     * those to a producer on the host of their stream's output location (its COMPLETED status
     * reports them, so they must outlive a failover: docs/generation.md, "Failover").
     */
    public record Job(
            JobSpec spec,
            JobState state,
            Map<String, Integer> nextTask,
            List<ComputeTaskSplit> returned,
            Set<String> ready,
            int tasksHandedOut,
            int tasksHandedOutLocally) {

        public Job {
            if (tasksHandedOut < 0
                    || tasksHandedOutLocally < 0
                    || tasksHandedOutLocally > tasksHandedOut) {
                throw new IllegalArgumentException(
                        spec.id()
                                + ": "
                                + tasksHandedOutLocally
                                + " of "
                                + tasksHandedOut
                                + " tasks handed out locally");
            }
        }
    }
}
