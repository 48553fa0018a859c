package dev.sluice.flink.generation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.GeneratorSpec;
import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.JobStatus;
import dev.sluice.client.job.SplitRule;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.job.Transport;
import dev.sluice.client.read.StreamReader;
import dev.sluice.client.write.LocalChunkChannel;
import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.Directories;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import dev.sluice.flink.sink.SluiceSink;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.RestartStrategyUtils;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local way end to end on real parts (docs/generation.md, "Transports" and "Recovery"):
 * GenerationSource on a MiniCluster whose producers are on the output locations' host, SluiceSink
 * given the daemon's socket, a real {@code sluice-brokerd} reading the sink's producer segments,
 * and StreamReaders checking that every stream arrives complete, in order, each chunk once, across
 * a {@code kill -9} of the daemon and the loss of a TaskManager; beside them, an {@code auto} job
 * with a stream on the producers' host and one elsewhere, and a {@code kafka} job on the producers'
 * host.
 */
class LocalTransportIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    /**
     * The host a MiniCluster's producers name when they ask for work: Flink's local RPC has no
     * address, so it is the empty string (as in EmbeddedSluice). An output location mapped to it is
     * on the producers' host.
     */
    private static final String MINI_CLUSTER_HOST = "";

    private static final Duration WAIT = Duration.ofSeconds(60);
    // How long each look at the status topic waits before the Flink job is checked again.
    private static final Duration STATUS_POLL = Duration.ofSeconds(2);
    // Streams of 1 MiB in tasks of 64 KiB and chunks of 16 KiB: 16 tasks and 64 chunks each.
    private static final long STREAM_BYTES = 1 << 20;
    private static final long TASK_BYTES = 64 * 1024;
    private static final int CHUNK_BYTES = 16 * 1024;
    private static final int TASKS_PER_STREAM = (int) (STREAM_BYTES / TASK_BYTES);
    private static final int CHUNKS_PER_STREAM = (int) (STREAM_BYTES / CHUNK_BYTES);
    // Chunks read before the failure, and chunks the daemon took beyond them: the failure comes
    // mid-job, with chunks that went the local way and were not delivered.
    private static final int READ_BEFORE_FAILURE = 12;
    private static final int UNDELIVERED = 8;
    private static final Pattern LOCALITY =
            Pattern.compile("(\\d+) of (\\d+) tasks computed on their output location's host");

    private static final AtomicInteger TESTS = new AtomicInteger();
    // Each test its own control topics: a scheduler reads the jobs topic from its start.
    private final String jobsTopic = "local-jobs-" + TESTS.incrementAndGet();
    private final String statusTopic = "local-status-" + TESTS.get();
    private final String progressTopic = KAFKA.createTopic(1);

    @TempDir Path dir;
    private Path segments;
    private BrokerdProcess daemon;
    private BrokerdClient brokerd;

    @BeforeEach
    void startDaemon() throws Exception {
        // The sink's producer segments, in shared memory, in the daemon's own segment folder (the
        // only one PRODUCE takes, docs/brokerd.md, "Local producers"), removed after the test
        // whatever it left (a TaskManager lost leaves its writers' segments behind).
        segments = Files.createTempDirectory(Path.of("/dev/shm"), "sluice-local-it-");
        daemon =
                BrokerdProcess.start(
                        BrokerdProcess.defaultBinary(),
                        KAFKA.bootstrapServers(),
                        dir.resolve("brokerd.sock"),
                        Map.of("sluice.segment.dir", segments.toString()));
        // The readers' client outlives a daemon restart: it resubscribes on the same socket.
        brokerd = BrokerdClient.builder(daemon.socket()).reconnectTimeout(WAIT).build();
    }

    @AfterEach
    void stopDaemon() throws Exception {
        try {
            daemon.close();
        } finally {
            Directories.deleteRecursively(segments);
        }
    }

    /**
     * Streams {@code c0}, {@code c1}, ... of 1 MiB, one to each of {@code outputLocations}, sent by
     * {@code transport}; their chunk topics are created.
     */
    private static JobSpec job(String id, Transport transport, String... outputLocations) {
        List<StreamSpec> streams = new ArrayList<>();
        for (int i = 0; i < outputLocations.length; i++) {
            KAFKA.broker().createTopic(ChunkTopics.forOutputLocation(outputLocations[i]), 2);
            streams.add(
                    new StreamSpec(
                            "c" + i,
                            outputLocations[i],
                            new SplitRule.Channel("c" + i),
                            STREAM_BYTES,
                            OptionalLong.empty(),
                            CHUNK_BYTES));
        }
        return new JobSpec(
                id,
                List.of(),
                new GeneratorSpec(PatternGenerator.class.getName(), Map.of()),
                TASK_BYTES,
                streams,
                JobSpec.DEFAULT_WEIGHT,
                transport);
    }

    /** Every output location of {@code jobs} mapped to the producers' host. */
    private static Map<String, String> onProducersHost(JobSpec... jobs) {
        Map<String, String> hosts = new HashMap<>();
        for (JobSpec job : jobs) {
            job.streams().forEach(s -> hosts.put(s.outputLocation(), MINI_CLUSTER_HOST));
        }
        return hosts;
    }

    /** Submits to and watches this test's control topics. */
    private JobClient jobClient() {
        return JobClient.builder()
                .bootstrapServers(KAFKA.bootstrapServers())
                .jobsTopic(jobsTopic)
                .statusTopic(statusTopic)
                .build();
    }

    /**
     * GenerationSource into SluiceSink with the daemon's socket, checkpointing often, the output
     * locations on the hosts {@code hosts} says. Without {@code restarts} a failed task fails the
     * Flink job, so that a failure the transport should have ridden out shows.
     */
    private Generation startGeneration(Map<String, String> hosts, boolean restarts)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(200);
        if (!restarts) {
            RestartStrategyUtils.configureNoRestartStrategy(env);
        }
        GenerationSourceBuilder source =
                GenerationSource.builder()
                        .setBootstrapServers(KAFKA.bootstrapServers())
                        .setTopics(jobsTopic, statusTopic, progressTopic)
                        .setReaderTimeout(WAIT);
        hosts.forEach(source::setOutputLocationHost);
        env.fromSource(source.build(), WatermarkStrategy.noWatermarks(), "generation")
                .sinkTo(
                        SluiceSink.builder()
                                .setBootstrapServers(KAFKA.bootstrapServers())
                                .setProgressTopic(progressTopic)
                                .setMaxTaskSizeBytes(TASK_BYTES)
                                .setBrokerdSocket(daemon.socket())
                                .setLocalChannel(new LocalChunkChannel.Settings(segments, 8, WAIT))
                                .build());
        org.apache.flink.core.execution.JobClient flinkJob = env.executeAsync("generation");
        return new Generation(flinkJob, flinkJob.getJobExecutionResult());
    }

    /**
     * The running generation job, and the future of its end: the job never ends on its own, so an
     * end is a failure that no restart (where there are none) covers, seen without asking the
     * cluster.
     */
    private record Generation(
            org.apache.flink.core.execution.JobClient flinkJob,
            CompletableFuture<JobExecutionResult> ended) {

        /** Fails with the Flink job's cause once it ended. */
        void assertRunning() throws InterruptedException {
            if (ended.isDone()) {
                try {
                    ended.get();
                    throw new AssertionError("the generation job ended");
                } catch (ExecutionException | CancellationException failed) {
                    throw new AssertionError("the generation job failed", failed.getCause());
                }
            }
        }

        /** Asks the cluster: no task of it failed since it started (it runs no restarts). */
        void assertNeverFailed() throws Exception {
            assertRunning();
            assertThat(flinkJob.getJobStatus().get())
                    .isEqualTo(org.apache.flink.api.common.JobStatus.RUNNING);
        }

        /**
         * Cancels the job and waits until it has ended, so that its writers have closed their
         * channels before the test stops the daemon.
         */
        void stop() throws Exception {
            if (!ended.isDone()) {
                flinkJob.cancel().get();
            }
            ended.handle((result, failure) -> null).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * The job's readers, one per stream, each read to its end on a thread of {@code threads},
     * reading nothing while {@code hold} says so.
     */
    private List<Future<Long>> readAll(
            JobSpec spec,
            ExecutorService threads,
            List<StreamReader> open,
            AtomicLong chunks,
            BooleanSupplier hold)
            throws Exception {
        List<Future<Long>> lengths = new ArrayList<>();
        for (StreamSpec stream : spec.streams()) {
            StreamReader reader =
                    StreamReader.builder(brokerd, spec, stream.name())
                            .bootstrapServers(KAFKA.bootstrapServers())
                            .progressTopic(progressTopic)
                            .progressInterval(Duration.ofMillis(50))
                            .open();
            open.add(reader);
            lengths.add(
                    threads.submit(
                            () ->
                                    PatternStreams.readAll(
                                            reader, stream.name(), chunks, hold, WAIT)));
        }
        return lengths;
    }

    /**
     * The job's COMPLETED status, after checking that every stream arrived whole; fails at once,
     * with its cause, when the Flink job fails meanwhile.
     */
    private static JobStatus awaitCompleted(
            JobClient jobs, JobSpec spec, List<Future<Long>> lengths, Generation generation)
            throws Exception {
        JobStatus done =
                Await.untilNonNull(
                        spec.id() + " ends",
                        WAIT,
                        () -> {
                            generation.assertRunning();
                            try {
                                return jobs.awaitStatus(
                                        spec.id(), s -> s.state().isTerminal(), STATUS_POLL);
                            } catch (TimeoutException notYet) {
                                return null;
                            }
                        });
        assertThat(done.state()).as(spec.id() + ": " + done.reason()).isEqualTo(JobState.COMPLETED);
        for (Future<Long> length : lengths) {
            assertThat(length.get()).as(spec.id() + " stream length").isEqualTo(STREAM_BYTES);
        }
        return done;
    }

    /**
     * Returns once the readers, holding after their first chunks, have read them and the daemon has
     * taken {@link #UNDELIVERED} more from the sink's segments: chunks that reached it only through
     * shared memory, which a failure now finds undelivered. Fails if the Flink job fails first.
     */
    private void awaitUndeliveredChunks(AtomicLong read, Generation generation) throws Exception {
        Await.until(
                () -> READ_BEFORE_FAILURE + " chunks read, " + UNDELIVERED + " more in the daemon",
                WAIT,
                () -> {
                    generation.assertRunning();
                    return read.get() >= READ_BEFORE_FAILURE
                            && daemon.metric("sluice_local_chunks_total")
                                    >= read.get() + UNDELIVERED;
                });
    }

    /**
     * The COMPLETED status's counts (docs/generation.md, "The scheduler"): tasks computed on their
     * output location's host, and tasks handed out, each again when handed out again.
     */
    private record Locality(int local, int handedOut) {
        static Locality of(JobStatus completed) {
            String reason = completed.reason().orElseThrow();
            Matcher counts = LOCALITY.matcher(reason);
            assertThat(counts.matches()).as("locality in '%s'", reason).isTrue();
            return new Locality(
                    Integer.parseInt(counts.group(1)), Integer.parseInt(counts.group(2)));
        }
    }

    private static long chunksInKafka(String outputLocation) {
        return KAFKA.broker().records(ChunkTopics.forOutputLocation(outputLocation));
    }

    /** What a test does to the pipeline while the daemon holds chunks nobody read yet. */
    @FunctionalInterface
    private interface Failure {
        void strike() throws Exception;
    }

    /**
     * Runs job {@code id}, two streams to output locations on the producers' host, through {@code
     * failure}, struck once the readers hold after their first chunks and the daemon has taken
     * more; checks that both streams arrived complete, in order, each chunk once, every task
     * computed on its output location's host, and without {@code restarts} that none of their
     * chunks went through Kafka and no Flink task failed: the transport rode the failure out. With
     * {@code restarts}, the tasks Flink restores from the checkpoint send their remaining chunks
     * through Kafka (docs/generation.md, "Recovery"), and each stream merges both ways. Returns the
     * job's locality.
     */
    private Locality completeThrough(String id, boolean restarts, Failure failure)
            throws Exception {
        JobSpec spec = job(id, Transport.AUTO, id + "-0", id + "-1");
        Generation generation = startGeneration(onProducersHost(spec), restarts);
        ExecutorService threads = Executors.newCachedThreadPool();
        List<StreamReader> open = new ArrayList<>();
        try (JobClient jobs = jobClient()) {
            AtomicLong read = new AtomicLong();
            AtomicBoolean struck = new AtomicBoolean();
            List<Future<Long>> lengths =
                    readAll(
                            spec,
                            threads,
                            open,
                            read,
                            () -> !struck.get() && read.get() >= READ_BEFORE_FAILURE);
            jobs.submit(spec);
            awaitUndeliveredChunks(read, generation);
            failure.strike();
            struck.set(true);

            Locality locality = Locality.of(awaitCompleted(jobs, spec, lengths, generation));
            assertThat(read.get()).as("chunks read").isEqualTo(2 * CHUNKS_PER_STREAM);
            assertThat(locality.local()).isEqualTo(locality.handedOut());
            if (!restarts) {
                for (StreamSpec stream : spec.streams()) {
                    assertThat(chunksInKafka(stream.outputLocation()))
                            .as("chunks of %s through Kafka", stream.name())
                            .isZero();
                }
                generation.assertNeverFailed();
            }
            return locality;
        } finally {
            for (StreamReader reader : open) {
                reader.close();
            }
            threads.shutdownNow();
            generation.stop();
        }
    }

    @Test
    void aDaemonKilledMidJobLeavesEveryLocalStreamCompleteInOrderAndOnce() throws Exception {
        Locality locality =
                completeThrough(
                        "killed",
                        false,
                        () -> {
                            long pid = daemon.pid();
                            daemon.kill();
                            daemon.restart();
                            assertThat(daemon.pid()).isNotEqualTo(pid);
                        });
        // The chunks the daemon had taken and not delivered when it died are in no log: the
        // readers' RESUBSCRIBED records put their tasks back, and they went out again.
        assertThat(locality.handedOut())
                .as("tasks handed out, with those handed out again")
                .isGreaterThan(2 * TASKS_PER_STREAM);
    }

    @Test
    void aTaskManagerLostMidJobLeavesEveryLocalStreamCompleteInOrderAndOnce(
            @InjectMiniCluster MiniCluster cluster) throws Exception {
        // Flink restores the producers from their checkpoint; the daemon takes what the dead
        // writers had published before it lets their segments go (docs/generation.md, "Recovery").
        completeThrough(
                "survivor",
                true,
                () -> {
                    cluster.terminateTaskManager(0).get();
                    cluster.startTaskManager();
                });
    }

    @Test
    void autoGoesTheLocalWayOnlyOnTheProducersHostAndKafkaAlwaysThroughTheLog() throws Exception {
        JobSpec mixed = job("mixed", Transport.AUTO, "auto-near", "auto-far");
        JobSpec logged = job("logged", Transport.KAFKA, "kafka-near");
        // auto-far is not mapped: its host is its own name, where no producer runs.
        Map<String, String> hosts =
                Map.of("auto-near", MINI_CLUSTER_HOST, "kafka-near", MINI_CLUSTER_HOST);
        Generation generation = startGeneration(hosts, false);
        ExecutorService threads = Executors.newCachedThreadPool();
        List<StreamReader> open = new ArrayList<>();
        try (JobClient jobs = jobClient()) {
            List<Future<Long>> mixedLengths =
                    readAll(mixed, threads, open, new AtomicLong(), () -> false);
            List<Future<Long>> loggedLengths =
                    readAll(logged, threads, open, new AtomicLong(), () -> false);
            jobs.submit(mixed);
            jobs.submit(logged);

            Locality mixedLocality =
                    Locality.of(awaitCompleted(jobs, mixed, mixedLengths, generation));
            Locality loggedLocality =
                    Locality.of(awaitCompleted(jobs, logged, loggedLengths, generation));
            assertThat(chunksInKafka("auto-near")).as("chunks of the stream on the host").isZero();
            assertThat(chunksInKafka("auto-far"))
                    .as("chunks of the stream elsewhere")
                    .isGreaterThanOrEqualTo(CHUNKS_PER_STREAM);
            assertThat(mixedLocality)
                    .isEqualTo(new Locality(TASKS_PER_STREAM, 2 * TASKS_PER_STREAM));
            // On the producers' host, yet through the log: replayable wins.
            assertThat(chunksInKafka("kafka-near"))
                    .as("chunks of the kafka job")
                    .isGreaterThanOrEqualTo(CHUNKS_PER_STREAM);
            assertThat(loggedLocality).isEqualTo(new Locality(TASKS_PER_STREAM, TASKS_PER_STREAM));
            generation.assertNeverFailed();
        } finally {
            for (StreamReader reader : open) {
                reader.close();
            }
            threads.shutdownNow();
            generation.stop();
        }
    }
}
