package dev.sluice.flink.generation;

import dev.sluice.client.job.GeneratorSpec;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.SplitRule;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.job.Transport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/** Job specs for the tests: channel streams to named output locations, small tasks and chunks. */
public final class TestJobs {
    private TestJobs() {}

    /**
     * A job of {@code streams} channel streams ({@code c0} to node {@code node-0}, ...), each of
     * {@code streamBytes}, in tasks of {@code taskBytes} and chunks of {@code chunkBytes}.
     */
    public static JobSpec job(
            String id,
            int streams,
            long streamBytes,
            long taskBytes,
            int chunkBytes,
            Class<?> generator,
            Map<String, String> parameters) {
        List<StreamSpec> specs = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
            specs.add(
                    new StreamSpec(
                            "c" + i,
                            "node-" + i,
                            new SplitRule.Channel("c" + i),
                            streamBytes,
                            OptionalLong.empty(),
                            chunkBytes));
        }
        return new JobSpec(
                id,
                List.of(),
                new GeneratorSpec(generator.getName(), parameters),
                taskBytes,
                specs);
    }

    /** {@code job} with its streams read at {@code rates} bytes per second, stream by stream. */
    public static JobSpec paced(JobSpec job, long... rates) {
        List<StreamSpec> specs = new ArrayList<>();
        for (int i = 0; i < job.streams().size(); i++) {
            StreamSpec s = job.streams().get(i);
            specs.add(
                    new StreamSpec(
                            s.name(),
                            s.outputLocation(),
                            s.split(),
                            s.sizeBytes(),
                            OptionalLong.of(rates[i]),
                            s.chunkSizeBytes()));
        }
        return new JobSpec(
                job.id(),
                job.inputs(),
                job.generator(),
                job.taskSizeBytes(),
                specs,
                job.weight(),
                job.transport());
    }

    /** {@code job} with weight {@code weight}. */
    public static JobSpec weighted(JobSpec job, int weight) {
        return new JobSpec(
                job.id(),
                job.inputs(),
                job.generator(),
                job.taskSizeBytes(),
                job.streams(),
                weight,
                job.transport());
    }

    /** {@code job} with its chunks sent by {@code transport}. */
    public static JobSpec transported(JobSpec job, Transport transport) {
        return new JobSpec(
                job.id(),
                job.inputs(),
                job.generator(),
                job.taskSizeBytes(),
                job.streams(),
                job.weight(),
                transport);
    }
}
