package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A job as the user submits it (docs/formats.md, "Job spec"): everything needed to produce its
 * streams.
 *
 * <p>The scheduler splits each stream into compute tasks of {@code taskSizeBytes} (the last one
 * shorter), created progressively as producers ask for work; a task's bytes leave as chunks of the
 * stream's {@code chunkSizeBytes}. Every task but the last of a stream therefore holds the same
 * number of chunks, so any producer can number its chunks ({@code seq}) without asking anyone.
 *
 * @param id the job's id, unique among live jobs; the key of its commands and statuses
 * @param inputs absolute URIs of the input data; each producer fetches them once, in its preload
 *     task
 * @param generator the user code that computes the bytes
 * @param taskSizeBytes the output of one compute task, per stream
 * @param streams the job's output streams, at least one, names unique
 * @param weight the job's share of the producers beside other unpaced jobs, from {@value
 *     #MIN_WEIGHT} to {@value #MAX_WEIGHT}: a job of weight 2 gets twice the tasks of one of weight
 *     1 (docs/generation.md, "Scheduling policy"); its paced streams go first whatever the weight
 * @param transport how the job's chunks go to their output locations (docs/generation.md,
 *     "Transports"), {@link Transport#AUTO} by default; an output location's own choice combines
 *     with it ({@link Transport#combine})
 * @param survivesProducerLoss whether its paced streams' readers start with the buffer that rides
 *     out the loss of one producer (docs/generation.md, "Buffer model"), rather than one task
 */
@PublicEvolving
public record JobSpec(
        String id,
        List<String> inputs,
        GeneratorSpec generator,
        long taskSizeBytes,
        List<StreamSpec> streams,
        int weight,
        Transport transport,
        boolean survivesProducerLoss) {

    /**
     * 64 MiB: large enough that the scheduler's event loop sees few events per job, small enough
     * that a job of a few GiB still spreads over many producers (docs/generation.md, "The
     * scheduler").
     */
    public static final long DEFAULT_TASK_SIZE_BYTES = 64L << 20;

    public static final long MAX_TASK_SIZE_BYTES = 1L << 30;

    public static final int DEFAULT_WEIGHT = 1;
    public static final int MIN_WEIGHT = 1;
    public static final int MAX_WEIGHT = 1000;

    public JobSpec {
        Names.check("id", id);
        if (inputs == null) {
            throw new JobSpecException("inputs", "is required");
        }
        for (int i = 0; i < inputs.size(); i++) {
            checkInput("inputs[" + i + "]", inputs.get(i));
        }
        inputs = List.copyOf(inputs);
        if (generator == null) {
            throw new JobSpecException("generator", "is required");
        }
        if (streams == null || streams.isEmpty()) {
            throw new JobSpecException("streams", "must hold at least one stream");
        }
        for (int i = 0; i < streams.size(); i++) {
            if (streams.get(i) == null) {
                throw new JobSpecException("streams[" + i + "]", "is required");
            }
        }
        streams = List.copyOf(streams);
        checkStreamsPartitionTheOutput(streams);
        int largestChunk =
                streams.stream().mapToInt(StreamSpec::chunkSizeBytes).max().orElseThrow();
        if (taskSizeBytes < largestChunk || taskSizeBytes > MAX_TASK_SIZE_BYTES) {
            throw new JobSpecException(
                    "taskSizeBytes",
                    "must be between the largest chunk size ("
                            + largestChunk
                            + ") and "
                            + MAX_TASK_SIZE_BYTES
                            + ", got "
                            + taskSizeBytes);
        }
        checkWeight(weight);
        if (transport == null) {
            throw new JobSpecException("transport", "is required");
        }
    }

    /** Checks a weight, also one parsed as a long before it is narrowed to an int. */
    static void checkWeight(long weight) {
        if (weight < MIN_WEIGHT || weight > MAX_WEIGHT) {
            throw new JobSpecException(
                    "weight",
                    "must be between " + MIN_WEIGHT + " and " + MAX_WEIGHT + ", got " + weight);
        }
    }

    /** A job whose paced streams' readers start with one task's buffer. */
    public JobSpec(
            String id,
            List<String> inputs,
            GeneratorSpec generator,
            long taskSizeBytes,
            List<StreamSpec> streams,
            int weight,
            Transport transport) {
        this(id, inputs, generator, taskSizeBytes, streams, weight, transport, false);
    }

    /** A job whose chunks go the way the scheduler finds best ({@link Transport#AUTO}). */
    public JobSpec(
            String id,
            List<String> inputs,
            GeneratorSpec generator,
            long taskSizeBytes,
            List<StreamSpec> streams,
            int weight) {
        this(id, inputs, generator, taskSizeBytes, streams, weight, Transport.AUTO);
    }

    /** A job of the default weight. */
    public JobSpec(
            String id,
            List<String> inputs,
            GeneratorSpec generator,
            long taskSizeBytes,
            List<StreamSpec> streams) {
        this(id, inputs, generator, taskSizeBytes, streams, DEFAULT_WEIGHT);
    }

    /** A job with the default task size. */
    public JobSpec(
            String id, List<String> inputs, GeneratorSpec generator, List<StreamSpec> streams) {
        this(id, inputs, generator, DEFAULT_TASK_SIZE_BYTES, streams);
    }

    /** This job, its readers' buffer made to survive a producer's loss or not. */
    public JobSpec withSurvivesProducerLoss(boolean survives) {
        return new JobSpec(
                id, inputs, generator, taskSizeBytes, streams, weight, transport, survives);
    }

    /** The stream of that name, if the job has one. */
    public Optional<StreamSpec> stream(String name) {
        return streams.stream().filter(s -> s.name().equals(name)).findFirst();
    }

    private static void checkInput(String path, String input) {
        if (input == null) {
            throw new JobSpecException(path, "is required");
        }
        try {
            if (!new URI(input).isAbsolute()) {
                throw new JobSpecException(
                        path, "must be an absolute URI (with a scheme), got '" + input + "'");
            }
        } catch (URISyntaxException e) {
            throw new JobSpecException(path, "is not a URI: " + e.getMessage());
        }
    }

    private static void checkStreamsPartitionTheOutput(List<StreamSpec> streams) {
        Set<String> names = new HashSet<>();
        Map<String, String> channelOwners = new HashMap<>();
        for (int i = 0; i < streams.size(); i++) {
            StreamSpec stream = streams.get(i);
            String path = "streams[" + i + "]";
            if (!names.add(stream.name())) {
                throw new JobSpecException(
                        path + ".name", "duplicate stream name '" + stream.name() + "'");
            }
            if (stream.split() instanceof SplitRule.Whole && streams.size() > 1) {
                throw new JobSpecException(
                        path + ".split",
                        "a stream that carries the whole output must be the job's only stream");
            }
            if (stream.split() instanceof SplitRule.Channel channel) {
                String owner = channelOwners.putIfAbsent(channel.channel(), stream.name());
                if (owner != null) {
                    throw new JobSpecException(
                            path + ".split.channel",
                            "channel '"
                                    + channel.channel()
                                    + "' is already carried by stream '"
                                    + owner
                                    + "'");
                }
            }
        }
    }
}
