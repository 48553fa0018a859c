package dev.sluice.printing;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.read.StreamReader;
import dev.sluice.client.read.StreamReaderBuilder;
import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.Directories;
import dev.sluice.embedded.KafkaBroker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Every part of Sluice on this host, real and started in order: a KRaft Kafka broker (a child JVM
 * from Maven artifacts), {@code sluice-brokerd} on a Unix socket next to it, and the generation
 * pipeline ({@link GenerationJob}) running on a Flink MiniCluster, its sink given the daemon's
 * socket for the chunks that go the local way. Jobs go in through {@link #jobs()}, the real
 * submission path, and their streams come out through {@link #reader}, as on an output-location
 * node. The demo and the generation benchmarks run on it; closing it stops everything it started,
 * in reverse.
 */
public final class EmbeddedSluice implements AutoCloseable {
    private final KafkaBroker broker;
    private final BrokerdProcess daemon;
    private final BrokerdClient brokerd;
    private final JobClient jobs;
    private final org.apache.flink.core.execution.JobClient generation;
    private final int parallelism;
    private final boolean speculation;
    private final Path temporaryDir;

    /**
     * The host a MiniCluster's producers name when they ask for work: Flink's local RPC has no
     * address, so its TaskManagers' location is the empty string, whatever {@code taskmanager.host}
     * says.
     */
    private static final String MINI_CLUSTER_HOST = "";

    private EmbeddedSluice(Builder settings) throws Exception {
        List<AutoCloseable> started = new ArrayList<>();
        temporaryDir = settings.workDir == null ? Files.createTempDirectory("sluice-") : null;
        if (temporaryDir != null) {
            started.add(() -> Directories.deleteRecursively(temporaryDir));
        }
        try {
            Path work = temporaryDir != null ? temporaryDir : settings.workDir;
            KafkaBroker.Builder kafka = KafkaBroker.builder().workDir(work.resolve("kafka"));
            settings.brokerProperties.forEach(kafka::brokerProperty);
            broker = kafka.build();
            started.add(broker);
            broker.createTopic(JobClient.DEFAULT_JOBS_TOPIC, 1);
            broker.createTopic(JobClient.DEFAULT_STATUS_TOPIC, 1);
            broker.createTopic(DeliveryProgress.DEFAULT_TOPIC, 1);
            for (String location : settings.outputLocations) {
                broker.createTopic(
                        ChunkTopics.forOutputLocation(location), settings.partitionsPerLocation);
            }
            daemon =
                    BrokerdProcess.start(
                            settings.brokerdBinary,
                            broker.bootstrapServers(),
                            work.resolve("brokerd.sock"),
                            Map.of());
            started.add(daemon);
            brokerd = BrokerdClient.builder(daemon.socket()).build();
            jobs = JobClient.builder().bootstrapServers(broker.bootstrapServers()).build();
            started.add(jobs);
            parallelism = settings.parallelism;
            speculation = settings.speculation;
            generation = startGeneration(settings);
        } catch (Exception e) {
            for (int i = started.size() - 1; i >= 0; i--) {
                try {
                    started.get(i).close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    private org.apache.flink.core.execution.JobClient startGeneration(Builder settings)
            throws Exception {
        Configuration conf = new Configuration();
        // The MiniCluster's web UI would listen on a port: nothing listens but what is asked for.
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(RestOptions.ADDRESS, "127.0.0.1");
        if (settings.fixedRestartDelay != null) {
            conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
            conf.set(
                    RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS,
                    Integer.MAX_VALUE);
            conf.set(
                    RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY,
                    settings.fixedRestartDelay);
        }
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.createLocalEnvironment(settings.parallelism, conf);
        Map<String, String> hosts = new TreeMap<>();
        if (settings.outputLocationsOnProducersHost) {
            settings.outputLocations.forEach(location -> hosts.put(location, MINI_CLUSTER_HOST));
        }
        GenerationJob.define(
                env,
                new GenerationJob.Settings(
                        broker.bootstrapServers(),
                        settings.parallelism,
                        settings.maxTaskSizeBytes,
                        1000,
                        hosts,
                        Optional.of(daemon.socket()),
                        settings.speculation,
                        Map.of()));
        return env.executeAsync("sluice generation");
    }

    /** Whether the scheduler speculates (docs/generation.md, "Speculative duplicates"). */
    public boolean speculation() {
        return speculation;
    }

    public String bootstrapServers() {
        return broker.bootstrapServers();
    }

    public KafkaBroker broker() {
        return broker;
    }

    public BrokerdProcess daemon() {
        return daemon;
    }

    /** Submits, watches and cancels jobs on the jobs and status topics. */
    public JobClient jobs() {
        return jobs;
    }

    /** The Flink parallelism of the generation pipeline: how many producers compute tasks. */
    public int parallelism() {
        return parallelism;
    }

    /** A reader of one stream of {@code job} through the daemon, reporting delivery progress. */
    public StreamReaderBuilder reader(JobSpec job, String stream) {
        return StreamReader.builder(brokerd, job, stream).bootstrapServers(bootstrapServers());
    }

    /** Whether the generation pipeline is still running (it runs until closed, or it failed). */
    public boolean isGenerationRunning() throws Exception {
        return generation.getJobStatus().get() == org.apache.flink.api.common.JobStatus.RUNNING;
    }

    @Override
    public void close() throws Exception {
        try (AutoCloseable cleanup =
                        () -> {
                            if (temporaryDir != null) {
                                Directories.deleteRecursively(temporaryDir);
                            }
                        };
                broker;
                daemon;
                jobs) {
            if (!generation.getJobStatus().get().isGloballyTerminalState()) {
                generation.cancel().get();
            }
        }
    }

    /** Settings; {@link #start()} starts the parts. */
    public static final class Builder {
        private Path workDir;
        private Path brokerdBinary;
        private int parallelism = 2;
        private List<String> outputLocations = List.of();
        private int partitionsPerLocation = 4;
        private long maxTaskSizeBytes = JobSpec.DEFAULT_TASK_SIZE_BYTES;
        private boolean outputLocationsOnProducersHost;
        private boolean speculation = true;
        private Duration fixedRestartDelay;
        private final Map<String, String> brokerProperties = new TreeMap<>();

        private Builder() {}

        /** A setting of the Kafka broker's {@code server.properties}. */
        public Builder brokerProperty(String key, String value) {
            brokerProperties.put(Objects.requireNonNull(key), Objects.requireNonNull(value));
            return this;
        }

        /**
         * Where the broker's data and log, the daemon's socket and log go, kept after close; if
         * unset, a temporary directory removed on close.
         */
        public Builder workDir(Path dir) {
            this.workDir = Objects.requireNonNull(dir);
            return this;
        }

        /**
         * The {@code sluice-brokerd} executable; {@link BrokerdProcess#defaultBinary()} if unset.
         */
        public Builder brokerdBinary(Path binary) {
            this.brokerdBinary = Objects.requireNonNull(binary);
            return this;
        }

        /** Producers of the generation pipeline (2). */
        public Builder parallelism(int parallelism) {
            this.parallelism = parallelism;
            return this;
        }

        /** The output locations whose chunk topics are created, each with {@code partitions}. */
        public Builder outputLocations(List<String> locations, int partitions) {
            this.outputLocations = List.copyOf(locations);
            this.partitionsPerLocation = partitions;
            return this;
        }

        /**
         * Puts every output location on the producers' host, as they are on this machine: a job's
         * streams may then go the local way (docs/generation.md, Transports), those of {@code auto}
         * jobs included. Without it each output location is a host of its own name, and only {@code
         * local} jobs' streams would wait for a producer there.
         */
        public Builder outputLocationsOnProducersHost() {
            this.outputLocationsOnProducersHost = true;
            return this;
        }

        /**
         * Whether the scheduler hands late paced tasks to a second producer (true):
         * docs/generation.md, "Speculative duplicates".
         */
        public Builder speculation(boolean speculation) {
            this.speculation = speculation;
            return this;
        }

        /**
         * Flink restores a failed producer after this delay, however many failed before: a
         * benchmark that fails one producer per job measures each fault, not Flink's exponential
         * backoff over the ones before it (1 s, growing 1.5 times with each failure, Flink's
         * default with checkpoints). Unset: Flink's default.
         */
        public Builder fixedRestartDelay(Duration delay) {
            this.fixedRestartDelay = Objects.requireNonNull(delay, "delay");
            return this;
        }

        /** The largest task size of the jobs to run: the sink's in-flight cap follows from it. */
        public Builder maxTaskSizeBytes(long bytes) {
            this.maxTaskSizeBytes = bytes;
            return this;
        }

        public EmbeddedSluice start() throws Exception {
            if (parallelism < 1) {
                throw new IllegalArgumentException("parallelism: at least 1, got " + parallelism);
            }
            if (outputLocations.isEmpty() || partitionsPerLocation < 1) {
                throw new IllegalArgumentException(
                        "outputLocations: at least one, with at least one partition each");
            }
            if (brokerdBinary == null) {
                brokerdBinary = BrokerdProcess.defaultBinary();
            }
            if (!Files.isExecutable(brokerdBinary)) {
                throw new IOException(
                        "no sluice-brokerd at " + brokerdBinary + ": build it with ./sluice build");
            }
            return new EmbeddedSluice(this);
        }
    }
}
