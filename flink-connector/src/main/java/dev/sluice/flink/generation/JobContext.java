package dev.sluice.flink.generation;

import dev.sluice.client.job.JobSpec;
import java.util.Map;
import org.apache.flink.annotation.PublicEvolving;

/**
 * The job a generator works for: its spec, the generator's parameters from it, and the producer it
 * runs on (the GenerationSource's subtask index, from 0).
 */
@PublicEvolving
public record JobContext(JobSpec spec, int producer) {
    public String jobId() {
        return spec.id();
    }

    public Map<String, String> parameters() {
        return spec.generator().parameters();
    }
}
