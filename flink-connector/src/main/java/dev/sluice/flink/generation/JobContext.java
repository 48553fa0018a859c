package dev.sluice.flink.generation;

import dev.sluice.client.job.JobSpec;
import java.util.Map;
import org.apache.flink.annotation.PublicEvolving;

/** The job a generator works for: its spec, and the generator's parameters from it. */
@PublicEvolving
public record JobContext(JobSpec spec) {
    public String jobId() {
        return spec.id();
    }

    public Map<String, String> parameters() {
        return spec.generator().parameters();
    }
}
