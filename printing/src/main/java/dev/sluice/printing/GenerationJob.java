package dev.sluice.printing;

import dev.sluice.client.job.JobSpec;
import dev.sluice.flink.generation.GenerationSource;
import dev.sluice.flink.generation.GenerationSourceBuilder;
import dev.sluice.flink.sink.SluiceSink;
import dev.sluice.flink.sink.SluiceSinkBuilder;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The generation pipeline as a Flink job: {@link GenerationSource} (the scheduler and the
 * producers) into {@link SluiceSink}. It runs every job submitted on the jobs topic, whatever its
 * generator, as long as the generator's class is in this job's jar: the printing module's job jar
 * carries the digital-printing RIP ({@code sluice-printing-*-job.jar}, submitted to a session
 * cluster as any Flink job is). {@link EmbeddedSluice} runs the same pipeline on a MiniCluster.
 *
 * <p>{@value #USAGE} (docs/generation.md, "Running the pipeline")
 */
public final class GenerationJob {
    static final String USAGE =
            "--bootstrap-servers HOST:PORT[,...] [--parallelism N] [--max-task-size BYTES]"
                    + " [--checkpoint-interval MS] [--output-location-host LOCATION=HOST]..."
                    + " [--brokerd-socket PATH] [--speculation true|false]"
                    + " [--producer-property KEY=VALUE]...";

    private GenerationJob() {}

    /**
     * Settings of the pipeline; {@link #parse} reads them from the job's arguments.
     *
     * @param parallelism the producers; 0 for the environment's default
     * @param maxTaskSizeBytes the largest task of the jobs to run: each stream's cap on bytes in
     *     flight follows from it (docs/sluice-sink.md)
     * @param brokerdSocket the socket of the daemon on the producers' host, through which the sink
     *     sends the chunks that go the local way; without it they go through Kafka
     *     (docs/sluice-sink.md, "Transports")
     * @param speculation whether the scheduler hands late paced tasks to a second producer
     *     (docs/generation.md, "Speculative duplicates"), true by default
     * @param producerProperties Kafka producer properties of the sink, as {@link
     *     SluiceSinkBuilder#setProperty} takes them: {@code max.request.size} for chunks larger
     *     than a stock producer sends, security settings
     */
    public record Settings(
            String bootstrapServers,
            int parallelism,
            long maxTaskSizeBytes,
            long checkpointIntervalMillis,
            Map<String, String> outputLocationHosts,
            Optional<Path> brokerdSocket,
            boolean speculation,
            Map<String, String> producerProperties) {

        public Settings {
            Objects.requireNonNull(bootstrapServers, "bootstrap servers");
            outputLocationHosts = Map.copyOf(outputLocationHosts);
            Objects.requireNonNull(brokerdSocket, "brokerd socket");
            producerProperties = Map.copyOf(producerProperties);
        }

        static Settings parse(String[] args) {
            String bootstrap = null;
            int parallelism = 0;
            long taskSize = JobSpec.DEFAULT_TASK_SIZE_BYTES;
            long checkpoint = 1000;
            Map<String, String> hosts = new TreeMap<>();
            Path socket = null;
            boolean speculation = true;
            Map<String, String> producer = new TreeMap<>();
            for (int i = 0; i < args.length; i += 2) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(args[i] + " needs a value");
                }
                String value = args[i + 1];
                switch (args[i]) {
                    case "--bootstrap-servers" -> bootstrap = value;
                    case "--parallelism" -> parallelism = positive(args[i], value);
                    case "--max-task-size" -> taskSize = positive(args[i], value);
                    case "--checkpoint-interval" -> checkpoint = positive(args[i], value);
                    case "--output-location-host" -> put(hosts, args[i], "LOCATION=HOST", value);
                    case "--brokerd-socket" -> socket = Path.of(value);
                    case "--speculation" -> speculation = bool(args[i], value);
                    case "--producer-property" -> put(producer, args[i], "KEY=VALUE", value);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (bootstrap == null) {
                throw new IllegalArgumentException("--bootstrap-servers is required");
            }
            return new Settings(
                    bootstrap,
                    parallelism,
                    taskSize,
                    checkpoint,
                    hosts,
                    Optional.ofNullable(socket),
                    speculation,
                    producer);
        }

        private static void put(
                Map<String, String> entries, String option, String form, String value) {
            int eq = value.indexOf('=');
            if (eq < 1 || eq == value.length() - 1) {
                throw new IllegalArgumentException(option + ": " + form + ", got '" + value + "'");
            }
            entries.put(value.substring(0, eq), value.substring(eq + 1));
        }

        private static boolean bool(String option, String value) {
            return switch (value) {
                case "true" -> true;
                case "false" -> false;
                default ->
                        throw new IllegalArgumentException(
                                option + ": true or false, got '" + value + "'");
            };
        }

        private static int positive(String option, String value) {
            try {
                int parsed = Integer.parseInt(value);
                if (parsed > 0) {
                    return parsed;
                }
            } catch (NumberFormatException e) {
                // answered below
            }
            throw new IllegalArgumentException(option + ": a positive number, got '" + value + "'");
        }
    }

    /**
     * Runs the pipeline until cancelled. Bad arguments throw, naming the argument: a job submitted
     * through Flink's REST API runs its {@code main} in the JobManager, which an exit would end.
     */
    public static void main(String[] args) throws Exception {
        Settings settings;
        try {
            settings = Settings.parse(args);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "generation job: " + e.getMessage() + "; usage: " + USAGE, e);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        define(env, settings);
        env.execute("sluice generation");
    }

    /** Adds the pipeline to {@code env}. */
    public static void define(StreamExecutionEnvironment env, Settings settings) {
        if (settings.parallelism() > 0) {
            env.setParallelism(settings.parallelism());
        }
        // Checkpoints flush the sink (at least once) and keep the scheduler's state restorable.
        env.enableCheckpointing(settings.checkpointIntervalMillis());
        // The sink neither keeps nor changes a chunk once its write returned (Kafka's producer and
        // the local channel copy it): without reuse Flink copies every payload between the chained
        // source and sink (docs/generation.md, "Transports").
        env.getConfig().enableObjectReuse();
        GenerationSourceBuilder source =
                GenerationSource.builder()
                        .setBootstrapServers(settings.bootstrapServers())
                        .setSpeculation(settings.speculation());
        settings.outputLocationHosts().forEach(source::setOutputLocationHost);
        SluiceSinkBuilder sink =
                SluiceSink.builder()
                        .setBootstrapServers(settings.bootstrapServers())
                        .setMaxTaskSizeBytes(settings.maxTaskSizeBytes());
        settings.producerProperties().forEach(sink::setProperty);
        settings.brokerdSocket().ifPresent(sink::setBrokerdSocket);
        env.fromSource(source.build(), WatermarkStrategy.noWatermarks(), "generation")
                .sinkTo(sink.build());
    }
}
