package dev.sluice.flink.generation.scheduler;

import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.SchedulingPolicy;
import java.util.List;
import java.util.Optional;
import org.apache.flink.annotation.Internal;

/**
 * Seed 001 §4.1's policy: tasks are created as producers ask for them; jobs take turns (the job
 * after the one served last goes first), and within a job the producer gets a stream whose output
 * location is on its own host when one has work, else the stream whose turn it is.
 */
@Internal
public final class OnDemandPolicy implements SchedulingPolicy {
    private static final long serialVersionUID = 1L;

    private String lastJob = "";
    private int streamTurn;

    @Override
    public Optional<ComputeTask> next(Producer producer, List<SchedulableJob> jobs) {
        if (jobs.isEmpty()) {
            return Optional.empty();
        }
        int start = 0;
        for (int i = 0; i < jobs.size(); i++) {
            if (jobs.get(i).spec().id().equals(lastJob)) {
                start = i + 1;
            }
        }
        SchedulableJob job = jobs.get(start % jobs.size());
        lastJob = job.spec().id();
        List<String> streams = job.streamsWithWork();
        for (String stream : streams) {
            if (job.hostOf(stream).equals(producer.host())) {
                return Optional.of(job.take(stream));
            }
        }
        return Optional.of(job.take(streams.get(Math.floorMod(streamTurn++, streams.size()))));
    }
}
