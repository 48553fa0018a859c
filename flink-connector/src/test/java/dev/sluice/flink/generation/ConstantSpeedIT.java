package dev.sluice.flink.generation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.GeneratorSpec;
import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.SplitRule;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.job.Transport;
import dev.sluice.client.read.StreamChunk;
import dev.sluice.client.read.StreamReader;
import dev.sluice.client.read.StreamReaderBuilder;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.BrokerdExtension;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import dev.sluice.flink.sink.SluiceSink;
import dev.sluice.flink.sink.SluiceSinkBuilder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Paced streams keep their speed on real parts (embedded Kafka, a real sluice-brokerd,
 * GenerationSource into SluiceSink on a MiniCluster): a stream whose reader stalls does not hold up
 * another stream of the same producer, a greedy job beside a paced one does not starve it, and
 * neither does a producer that is slow, stalls or hangs, on the Kafka way and the local way
 * (docs/generation.md, "Room admission", "Scheduling policy", "Producers of unequal speed" and
 * "Speculative duplicates").
 */
class ConstantSpeedIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
    @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(3)
                            .build());

    private static final Duration WAIT = Duration.ofSeconds(40);
    private static final long TASK = 256 * 1024;
    private static final int CHUNK = 64 * 1024;
    private static final long CHUNKS_PER_TASK = TASK / CHUNK;
    // GenerationSourceBuilder's default.
    private static final int TASKS_AHEAD = 2;
    private static final AtomicInteger TESTS = new AtomicInteger();

    private final int test = TESTS.incrementAndGet();
    private final String jobsTopic = "speed-jobs-" + test;
    private final String statusTopic = "speed-status-" + test;
    private final String progressTopic = KAFKA.createTopic(1);
    // Straggler jobs: tasks of 4 chunks of 64 KiB, each chunk computing for 25 ms, so 100 ms a
    // task on a producer of the common speed, streams read at 1 MB/s, a task every 262 ms.
    private static final long STRAGGLER_CHUNK_MILLIS = 25;
    private static final long STRAGGLER_RATE = 1_000_000;
    private static final Pattern DUPLICATES =
            Pattern.compile("(\\d+) duplicates issued, (\\d+) won, (\\d+) bytes wasted");

    private final ExecutorService readers = Executors.newCachedThreadPool();
    private final List<StreamReader> open = new ArrayList<>();
    private org.apache.flink.core.execution.JobClient flinkJob;
    private static BrokerdClient brokerd;

    @BeforeAll
    static void connect() {
        brokerd = BrokerdClient.builder(BROKERD.socket()).build();
    }

    @AfterEach
    void stop() throws Exception {
        StragglerGenerator.releaseHung();
        readers.shutdownNow();
        for (StreamReader reader : open) {
            reader.close();
        }
        if (flinkJob != null) {
            flinkJob.cancel().get();
        }
    }

    /** A channel stream of this test to its own output location, paced if {@code rate} > 0. */
    private StreamSpec stream(String name, long bytes, long rate) {
        String location = "speed-" + test + "-" + name;
        KAFKA.broker().createTopic(ChunkTopics.forOutputLocation(location), 2);
        return new StreamSpec(
                name,
                location,
                new SplitRule.Channel(name),
                bytes,
                rate > 0 ? OptionalLong.of(rate) : OptionalLong.empty(),
                CHUNK);
    }

    private static JobSpec job(String id, Map<String, String> parameters, StreamSpec... streams) {
        return new JobSpec(
                id,
                List.of(),
                new GeneratorSpec(PatternGenerator.class.getName(), parameters),
                TASK,
                List.of(streams));
    }

    /**
     * A reader of the stream, paced at its spec's rate with a start delay of one task at that rate
     * (set here, so that the test does not depend on the reader's default), or the buffer model's
     * for a job that must survive a producer's loss (docs/generation.md, "Buffer model"), else
     * unpaced.
     */
    private StreamReader reader(JobSpec job, StreamSpec stream) throws Exception {
        StreamReaderBuilder builder =
                StreamReader.builder(brokerd, job, stream.name())
                        .bootstrapServers(KAFKA.bootstrapServers())
                        .progressTopic(progressTopic)
                        .progressInterval(Duration.ofMillis(50));
        if (stream.rateBytesPerSecond().isPresent()) {
            long rate = stream.rateBytesPerSecond().getAsLong();
            if (!job.survivesProducerLoss()) {
                builder.startDelay(Duration.ofNanos(TASK * 1_000_000_000L / rate));
            }
        } else {
            builder.noPacing();
        }
        StreamReader reader = builder.open();
        open.add(reader);
        return reader;
    }

    /** A reader reading its stream to the end on a thread of its own. */
    private final class Reading {
        final StreamReader reader;
        final String stream;
        final AtomicLong bytes = new AtomicLong();
        final AtomicLong chunks = new AtomicLong();
        final Future<Long> length;

        /** Reads all; after {@code pauseAfter} chunks (if positive) waits for {@code resume}. */
        Reading(JobSpec job, StreamSpec spec, long pauseAfter, CountDownLatch resume)
                throws Exception {
            reader = reader(job, spec);
            stream = spec.name();
            length = readers.submit(() -> readAll(pauseAfter, resume));
        }

        Reading(JobSpec job, StreamSpec spec) throws Exception {
            this(job, spec, 0, new CountDownLatch(0));
        }

        private long readAll(long pauseAfter, CountDownLatch resume) throws Exception {
            Await.until(
                    stream + " reads its first " + pauseAfter + " chunks",
                    WAIT,
                    () -> chunks.get() >= pauseAfter || readNext());
            // Stalled: the reader stays open, so it still sends its progress.
            assertThat(resume.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            Await.until(stream + " ends", WAIT, this::readNext);
            return bytes.get();
        }

        /** Reads and checks the next chunk if one comes in 200 ms; true at the stream's end. */
        private boolean readNext() throws IOException {
            if (reader.isEndOfStream()) {
                return true;
            }
            StreamChunk chunk = reader.acquire(Duration.ofMillis(200));
            if (chunk != null) {
                assertThat(chunk.seq()).as(stream + " in order, once").isEqualTo(chunks.get());
                ByteBuffer payload = chunk.payload();
                long at = bytes.get();
                while (payload.hasRemaining()) {
                    byte b = payload.get();
                    if (b != PatternGenerator.byteAt(stream, at)) {
                        fail(stream + ": wrong byte at " + at);
                    }
                    at++;
                }
                chunk.release();
                bytes.set(at);
                chunks.incrementAndGet();
            }
            return false;
        }
    }

    private void startGeneration(int parallelism, SluiceSinkBuilder sink) throws Exception {
        startGeneration(parallelism, sink, source -> {});
    }

    /** As above, the GenerationSource set up further by {@code source}. */
    private void startGeneration(
            int parallelism, SluiceSinkBuilder sink, Consumer<GenerationSourceBuilder> source)
            throws Exception {
        startGeneration(parallelism, sink, source, env -> {});
    }

    /** As above, the environment set up further by {@code environment}. */
    private void startGeneration(
            int parallelism,
            SluiceSinkBuilder sink,
            Consumer<GenerationSourceBuilder> source,
            Consumer<StreamExecutionEnvironment> environment)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        environment.accept(env);
        GenerationSourceBuilder generation =
                GenerationSource.builder()
                        .setBootstrapServers(KAFKA.bootstrapServers())
                        .setTopics(jobsTopic, statusTopic, progressTopic);
        source.accept(generation);
        env.fromSource(generation.build(), WatermarkStrategy.noWatermarks(), "generation")
                .sinkTo(
                        sink.setBootstrapServers(KAFKA.bootstrapServers())
                                .setProgressTopic(progressTopic)
                                .build());
        flinkJob = env.executeAsync("constant-speed");
    }

    private JobClient jobClient() {
        return JobClient.builder()
                .bootstrapServers(KAFKA.bootstrapServers())
                .jobsTopic(jobsTopic)
                .statusTopic(statusTopic)
                .build();
    }

    /** The chunk records written to a stream's output location: the sum of its end offsets. */
    private static long chunksWritten(StreamSpec stream) {
        return KAFKA.broker().records(ChunkTopics.forOutputLocation(stream.outputLocation()));
    }

    @Test
    void aStalledStreamDoesNotHoldUpAnotherStreamOfTheSameProducer() throws Exception {
        // One producer and one writer, whose share of each stream is 4 tasks: the writer would
        // wait at a stalled stream's cap, and the paced stream behind it would starve.
        startGeneration(1, SluiceSink.builder().setInFlightBytesPerStream(4 * TASK));
        StreamSpec x = stream("x", 4 << 20, 2_000_000);
        StreamSpec y = stream("y", 2 << 20, 0);
        JobSpec job = job("stall-" + test, Map.of(), x, y);
        Reading paced = new Reading(job, x);
        CountDownLatch resume = new CountDownLatch(1);
        long stalledAfter = 3;
        Reading stalled = new Reading(job, y, stalledAfter, resume);
        try (JobClient jobs = jobClient()) {
            jobs.submit(job);
            Await.until(
                    "y's reader reads its first chunks",
                    WAIT,
                    () -> stalled.chunks.get() == stalledAfter);

            // While y stalls, its producer holds at most tasksAheadPerStream undelivered tasks.
            long bound = (stalledAfter / CHUNKS_PER_TASK + TASKS_AHEAD) * CHUNKS_PER_TASK;
            AtomicInteger samples = new AtomicInteger();
            Await.until(
                    "x ends, y sampled at least 3 times",
                    WAIT,
                    () -> {
                        if (paced.reader.isEndOfStream() && samples.get() >= 3) {
                            return true;
                        }
                        assertThat(chunksWritten(y))
                                .as("y's chunks written while it stalls")
                                .isLessThanOrEqualTo(bound);
                        samples.incrementAndGet();
                        // Samples 100 ms apart, so that they span the stall, not one instant.
                        TimeUnit.MILLISECONDS.sleep(100);
                        return false;
                    });
            assertThat(paced.length.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .isEqualTo(x.sizeBytes());
            assertThat(paced.reader.stats().starvationEvents())
                    .as("x starved: " + paced.reader.stats())
                    .isZero();

            resume.countDown();
            assertThat(stalled.length.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .isEqualTo(y.sizeBytes());
            assertThat(jobs.awaitStatus(job.id(), s -> s.state().isTerminal(), WAIT).state())
                    .isEqualTo(JobState.COMPLETED);
        }
    }

    @Test
    void greedyJobsBesideAPacedOneTakeTheRestWithoutStarvingIt() throws Exception {
        startGeneration(2, SluiceSink.builder().setMaxTaskSizeBytes(TASK));
        // Every task computes for 100 ms (a sleep, so the machine's load hardly matters): the two
        // producers make 20 tasks (5.2 MB) a second. The paced job needs 2 MB/s, 7.6 tasks a
        // second; served in turns with the three greedy jobs it would get a quarter of the
        // tasks, 5 a second, and starve. Served first, it gets what its rate needs and the
        // greedy jobs share the rest.
        Map<String, String> compute = Map.of("computeMillis", "100");
        JobSpec paced =
                job(
                        "paced-" + test,
                        compute,
                        stream("p0", 3 << 20, 1_000_000),
                        stream("p1", 3 << 20, 1_000_000));
        List<JobSpec> greedy = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            greedy.add(
                    job(
                            "greedy-" + i + "-" + test,
                            compute,
                            stream("g" + i + "a", 3 << 20, 0),
                            stream("g" + i + "b", 3 << 20, 0)));
        }
        List<Reading> pacedReadings = new ArrayList<>();
        for (StreamSpec stream : paced.streams()) {
            pacedReadings.add(new Reading(paced, stream));
        }
        List<Reading> greedyReadings = new ArrayList<>();
        for (JobSpec job : greedy) {
            for (StreamSpec stream : job.streams()) {
                greedyReadings.add(new Reading(job, stream));
            }
        }
        try (JobClient jobs = jobClient()) {
            for (JobSpec job : greedy) {
                jobs.submit(job);
            }
            jobs.submit(paced);
            for (Reading reading : pacedReadings) {
                assertThat(reading.length.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                        .isEqualTo(3 << 20);
            }
            long greedyBytesWhenPacedEnded =
                    greedyReadings.stream().mapToLong(r -> r.bytes.get()).sum();
            for (Reading reading : pacedReadings) {
                assertThat(reading.reader.stats().starvationEvents())
                        .as(reading.stream + " starved: " + reading.reader.stats())
                        .isZero();
            }
            assertThat(greedyBytesWhenPacedEnded)
                    .as("the greedy jobs were not shut out")
                    .isPositive();
            for (Reading reading : greedyReadings) {
                assertThat(reading.length.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                        .isEqualTo(3 << 20);
            }
            List<JobSpec> all = new ArrayList<>(greedy);
            all.add(paced);
            for (JobSpec job : all) {
                assertThat(jobs.awaitStatus(job.id(), s -> s.state().isTerminal(), WAIT).state())
                        .as(job.id())
                        .isEqualTo(JobState.COMPLETED);
            }
        }
    }

    /**
     * A job of StragglerGenerator with {@code parameters} besides its chunks' compute time, that
     * must survive a producer's loss: its readers start with the buffer model's delay, 1.3 s.
     */
    private static JobSpec stragglerJob(
            String id, Map<String, String> parameters, StreamSpec... streams) {
        Map<String, String> all = new HashMap<>(parameters);
        all.put("chunkMillis", Long.toString(STRAGGLER_CHUNK_MILLIS));
        return new JobSpec(
                id,
                List.of(),
                new GeneratorSpec(StragglerGenerator.class.getName(), all),
                TASK,
                List.of(streams),
                JobSpec.DEFAULT_WEIGHT,
                Transport.AUTO,
                true);
    }

    /**
     * Submits {@code job}, reads each of its streams to the end, each byte checked, and checks that
     * no paced stream starved and that the job completed; returns its COMPLETED status's counts of
     * duplicates issued, won and bytes wasted (0 each without duplicates).
     */
    private long[] readStarvationFree(JobSpec job) throws Exception {
        List<Reading> readings = new ArrayList<>();
        for (StreamSpec stream : job.streams()) {
            readings.add(new Reading(job, stream));
        }
        try (JobClient jobs = jobClient()) {
            jobs.submit(job);
            for (Reading reading : readings) {
                assertThat(reading.length.get(2 * WAIT.toSeconds(), TimeUnit.SECONDS))
                        .isEqualTo(job.stream(reading.stream).orElseThrow().sizeBytes());
                if (job.stream(reading.stream).orElseThrow().rateBytesPerSecond().isPresent()) {
                    assertThat(reading.reader.stats().starvationEvents())
                            .as(reading.stream + " starved: " + reading.reader.stats())
                            .isZero();
                }
            }
            var status = jobs.awaitStatus(job.id(), s -> s.state().isTerminal(), WAIT);
            assertThat(status.state()).isEqualTo(JobState.COMPLETED);
            Matcher duplicates = DUPLICATES.matcher(status.reason().orElse(""));
            if (!duplicates.find()) {
                return new long[3];
            }
            return new long[] {
                Long.parseLong(duplicates.group(1)),
                Long.parseLong(duplicates.group(2)),
                Long.parseLong(duplicates.group(3))
            };
        }
    }

    @Test
    void aProducerFourTimesSlowerComputesAQuarterOfAFastOnesBytesAndNoPacedStreamStarves()
            throws Exception {
        startGeneration(3, SluiceSink.builder().setMaxTaskSizeBytes(TASK));
        JobSpec job =
                stragglerJob(
                        "unequal-" + test,
                        Map.of("slowProducer", "2", "slowFactor", "4"),
                        stream("p0", 4 << 20, STRAGGLER_RATE),
                        stream("p1", 4 << 20, STRAGGLER_RATE),
                        // Greedy streams enough that a fast producer is bound by its compute,
                        // not by its room in each stream (docs/generation.md, "Room admission").
                        stream("g0", 4 << 20, 0),
                        stream("g1", 4 << 20, 0),
                        stream("g2", 4 << 20, 0),
                        stream("g3", 4 << 20, 0));
        readStarvationFree(job);
        Map<Integer, AtomicLong> computed = StragglerGenerator.computed(job.id());
        double fast = (computed.get(0).get() + computed.get(1).get()) / 2.0;
        assertThat(computed.get(2).get() / fast)
                .as("the slow producer's bytes against a fast one's: " + computed)
                .isBetween(0.1, 0.4);
    }

    @Test
    void aProducerStalledMidJobForTenSecondsIsOvertakenByDuplicatesOnTheKafkaWay()
            throws Exception {
        startGeneration(3, SluiceSink.builder().setMaxTaskSizeBytes(TASK));
        JobSpec job = stalledJob();
        long[] duplicates = readStarvationFree(job);
        assertThat(duplicates[0]).as("duplicates issued").isPositive();
        assertThat(duplicates[1]).as("duplicates that won").isPositive();
    }

    @Test
    void aProducerStalledMidJobForTenSecondsIsOvertakenByDuplicatesOnTheLocalWay()
            throws Exception {
        JobSpec job = stalledJob();
        startGeneration(
                3,
                SluiceSink.builder().setMaxTaskSizeBytes(TASK).setBrokerdSocket(BROKERD.socket()),
                source ->
                        // A MiniCluster's producers name the empty host (LocalTransportIT).
                        job.streams()
                                .forEach(
                                        s -> source.setOutputLocationHost(s.outputLocation(), "")));
        long[] duplicates = readStarvationFree(job);
        assertThat(duplicates[1]).as("duplicates that won").isPositive();
        for (StreamSpec stream : job.streams()) {
            assertThat(chunksWritten(stream)).as(stream.name() + " went the local way").isZero();
        }
    }

    /** Two paced streams of 12 s whose task 4 stops its first producer for 10 s, mid-task. */
    private JobSpec stalledJob() {
        return stragglerJob(
                "stalled-" + test,
                Map.of("stallTask", "4", "stallMillis", "10000"),
                stream("p0", 12 << 20, STRAGGLER_RATE),
                stream("p1", 12 << 20, STRAGGLER_RATE));
    }

    @Test
    void aStalledProducerThatFlinkThenFailsAndRestoresLosesNoChunkAndRepeatsNone()
            throws Exception {
        startGeneration(
                3,
                SluiceSink.builder().setMaxTaskSizeBytes(TASK),
                source -> {},
                // Checkpoints, so that Flink restores the failed producer with its tasks.
                env -> env.enableCheckpointing(200));
        JobSpec job =
                stragglerJob(
                        "restored-" + test,
                        Map.of("stallTask", "4", "stallMillis", "3000", "stallThenFail", "true"),
                        stream("p0", 8 << 20, STRAGGLER_RATE),
                        stream("p1", 8 << 20, STRAGGLER_RATE));
        long[] duplicates = readStarvationFree(job);
        assertThat(duplicates[1]).as("duplicates that won").isPositive();
        assertThat(flinkJob.getJobStatus().get())
                .isEqualTo(org.apache.flink.api.common.JobStatus.RUNNING);
    }

    @Test
    void aProducerThatNeverFinishesItsTaskIsOvertakenByADuplicate() throws Exception {
        startGeneration(3, SluiceSink.builder().setMaxTaskSizeBytes(TASK));
        JobSpec job =
                stragglerJob(
                        "hung-" + test,
                        Map.of("hangTask", "4"),
                        stream("p0", 6 << 20, STRAGGLER_RATE));
        long[] duplicates = readStarvationFree(job);
        assertThat(duplicates[1]).as("duplicates that won").isPositive();
    }
}
