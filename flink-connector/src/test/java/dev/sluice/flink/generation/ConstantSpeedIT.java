package dev.sluice.flink.generation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.GeneratorSpec;
import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.SplitRule;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.stream.ChunkTopics;
import dev.sluice.client.stream.StreamChunk;
import dev.sluice.client.stream.StreamReader;
import dev.sluice.client.stream.StreamReaderBuilder;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.BrokerdExtension;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import dev.sluice.flink.sink.SluiceSink;
import dev.sluice.flink.sink.SluiceSinkBuilder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
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
 * another stream of the same producer, and a greedy job beside a paced one does not starve it
 * (docs/generation.md, "Room admission" and "Scheduling policy").
 */
class ConstantSpeedIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
    @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
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
     * (set here, so that the test does not depend on the reader's default), else unpaced.
     */
    private StreamReader reader(JobSpec job, StreamSpec stream) throws Exception {
        StreamReaderBuilder builder =
                StreamReader.builder(brokerd, job, stream.name())
                        .bootstrapServers(KAFKA.bootstrapServers())
                        .progressTopic(progressTopic)
                        .progressInterval(Duration.ofMillis(50));
        if (stream.rateBytesPerSecond().isPresent()) {
            long rate = stream.rateBytesPerSecond().getAsLong();
            builder.startDelay(Duration.ofNanos(TASK * 1_000_000_000L / rate));
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
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        env.fromSource(
                        GenerationSource.builder()
                                .setBootstrapServers(KAFKA.bootstrapServers())
                                .setTopics(jobsTopic, statusTopic, progressTopic)
                                .build(),
                        WatermarkStrategy.noWatermarks(),
                        "generation")
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
}
