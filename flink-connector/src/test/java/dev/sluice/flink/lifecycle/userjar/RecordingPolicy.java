package dev.sluice.flink.lifecycle.userjar;

import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.SchedulingPolicy;
import dev.sluice.flink.generation.scheduler.OnDemandPolicy;
import dev.sluice.flink.lifecycle.UserCodeLoaders;
import java.util.List;
import java.util.Optional;

/**
 * The default policy, from the user jar: it is deserialized with the scheduler on the JobManager.
 */
public final class RecordingPolicy implements SchedulingPolicy {
    private static final long serialVersionUID = 1L;

    static {
        UserCodeLoaders.record(RecordingPolicy.class);
    }

    private final OnDemandPolicy policy = new OnDemandPolicy();

    @Override
    public Optional<ComputeTask> next(Producer producer, List<SchedulableJob> jobs) {
        return policy.next(producer, jobs);
    }
}
