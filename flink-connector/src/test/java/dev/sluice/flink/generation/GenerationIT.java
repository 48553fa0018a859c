package dev.sluice.flink.generation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.JobStatus;
import dev.sluice.client.job.SplitRule;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.read.StreamReader;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.BrokerdExtension;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import dev.sluice.flink.sink.SluiceSink;
import dev.sluice.flink.sink.SluiceSinkBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.RestartStrategyUtils;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The generation runtime end to end on real parts: jobs submitted on the jobs topic, scheduled by
 * GenerationSource on a MiniCluster of parallelism 2, computed by PatternGenerator, written by
 * SluiceSink, ordered by a real sluice-brokerd and read by StreamReaders that check every byte; and
 * beside them, a job whose generator fails, one without readers, one whose readers leave, a
 * malformed submission, and a TaskManager lost mid-job.
 */
class GenerationIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
    @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final AtomicInteger TESTS = new AtomicInteger();
    // Each test its own control topics: a scheduler reads the jobs topic from its start.
    private final String jobsTopic = "gen-jobs-" + TESTS.incrementAndGet();
    private final String statusTopic = "gen-status-" + TESTS.get();
    private final String progressTopic = KAFKA.createTopic(1);
    private static BrokerdClient brokerd;

    @BeforeAll
    static void start() {
        brokerd = BrokerdClient.builder(BROKERD.socket()).build();
        for (String node : List.of("node-0", "node-1")) {
            KAFKA.broker().createTopic(ChunkTopics.forOutputLocation(node), 4);
        }
    }

    /** Two streams, c0 to node-0 and c1 to node-1, of 320 KiB in tasks of 48 KiB, chunks of 16. */
    private static JobSpec job(String id, Map<String, String> parameters) {
        return TestJobs.job(
                id, 2, 320 * 1024, 48 * 1024, 16 * 1024, PatternGenerator.class, parameters);
    }

    /** Submits to and watches this test's control topics. */
    private JobClient jobClient() {
        return JobClient.builder()
                .bootstrapServers(KAFKA.bootstrapServers())
                .jobsTopic(jobsTopic)
                .statusTopic(statusTopic)
                .build();
    }

    private StreamReader reader(String job, StreamSpec stream) throws Exception {
        return StreamReader.builder(brokerd, job, stream.name())
                .topic(ChunkTopics.forOutputLocation(stream.outputLocation()))
                .bootstrapServers(KAFKA.bootstrapServers())
                .progressTopic(progressTopic)
                .progressInterval(Duration.ofMillis(50))
                .open();
    }

    /**
     * Opens a reader of every stream of {@code jobs}, into {@code open}, each reading its stream to
     * the end on {@code readers}, every byte checked: the lengths read.
     */
    private List<Future<Long>> readEach(
            List<JobSpec> jobs, List<StreamReader> open, ExecutorService readers) throws Exception {
        List<Future<Long>> lengths = new ArrayList<>();
        for (JobSpec spec : jobs) {
            for (StreamSpec stream : spec.streams()) {
                StreamReader reader = reader(spec.id(), stream);
                open.add(reader);
                lengths.add(
                        readers.submit(() -> PatternStreams.readAll(reader, stream.name(), WAIT)));
            }
        }
        return lengths;
    }

    @Test
    void concurrentJobsArriveCompleteAndInOrderWhileOthersFailOrAreRefused() throws Exception {
        // Tasks of 48 KiB: 192 KiB per writer in flight per stream (docs/sluice-sink.md, "Bounded
        // buffering"), which an
        // abandoned stream of 320 KiB fills: its writer waits.
        var flinkJob = startGeneration(Duration.ofSeconds(3), 48 * 1024);
        ExecutorService readers = Executors.newCachedThreadPool();
        try (JobClient jobs = jobClient()) {
            List<JobSpec> good = List.of(job("print-a", Map.of()), job("print-b", Map.of()));
            JobSpec broken = job("broken", Map.of("failAt", "2"));
            List<StreamReader> open = new ArrayList<>();
            List<Future<Long>> lengths = readEach(good, open, readers);
            for (StreamSpec stream : broken.streams()) {
                open.add(reader(broken.id(), stream));
            }
            // Its readers say they are there, then go without reading: the job is aborted, and
            // the writers it held back at its streams' caps go on with the others.
            JobSpec abandoned = job("abandoned", Map.of());
            List<StreamReader> leaving = new ArrayList<>();
            for (StreamSpec stream : abandoned.streams()) {
                leaving.add(reader(abandoned.id(), stream));
            }
            jobs.submit(abandoned);
            jobs.awaitStatus("abandoned", s -> s.state() == JobState.RUNNING, WAIT);
            for (StreamReader reader : leaving) {
                reader.close();
            }
            good.forEach(jobs::submit);
            jobs.submit(broken);
            jobs.submit(job("orphan", Map.of()));
            Properties props = KAFKA.broker().clientProperties();
            try (KafkaProducer<byte[], byte[]> raw =
                    new KafkaProducer<>(
                            props, new ByteArraySerializer(), new ByteArraySerializer())) {
                raw.send(
                                new ProducerRecord<>(
                                        jobsTopic,
                                        bytes("garbled"),
                                        bytes("{\"type\": \"submit\"")))
                        .get();
            }

            for (JobSpec spec : good) {
                JobStatus done = jobs.awaitStatus(spec.id(), s -> s.state().isTerminal(), WAIT);
                assertThat(done.state()).as(spec.id()).isEqualTo(JobState.COMPLETED);
            }
            for (Future<Long> length : lengths) {
                assertThat(length.get()).isEqualTo(320 * 1024);
            }
            JobStatus failed = jobs.awaitStatus("broken", s -> s.state().isTerminal(), WAIT);
            assertThat(failed.state()).isEqualTo(JobState.FAILED);
            assertThat(failed.reason()).get().asString().contains("/2", "no ink for task 2");
            JobStatus orphan = jobs.awaitStatus("orphan", s -> s.state().isTerminal(), WAIT);
            assertThat(orphan.state()).isEqualTo(JobState.REFUSED);
            assertThat(orphan.reason()).get().asString().contains("no reader", "c0 at node-0");
            JobStatus gone = jobs.awaitStatus("abandoned", s -> s.state().isTerminal(), WAIT);
            assertThat(gone.state()).isEqualTo(JobState.FAILED);
            assertThat(gone.reason()).get().asString().contains("aborted", "is gone");
            JobStatus garbled = jobs.awaitStatus("garbled", s -> s.state().isTerminal(), WAIT);
            assertThat(garbled.state()).isEqualTo(JobState.REFUSED);
            assertThat(garbled.reason()).get().asString().contains("malformed");
            for (StreamReader reader : open) {
                reader.close();
            }
        } finally {
            readers.shutdownNow();
            flinkJob.cancel().get();
        }
    }

    /**
     * GenerationSource into SluiceSink, checkpointing often; readers silent for {@code
     * readerTimeout} abort their job, and the sink's cap follows from tasks of {@code taskSize}.
     */
    private org.apache.flink.core.execution.JobClient startGeneration(
            Duration readerTimeout, long taskSize) throws Exception {
        return startGeneration(readerTimeout, taskSize, SluiceSink.builder(), true);
    }

    /**
     * As above, the sink set up by {@code sink} besides; without {@code restarts} a failed task
     * fails the Flink job, so that a failure the pipeline should have ridden out shows.
     */
    private org.apache.flink.core.execution.JobClient startGeneration(
            Duration readerTimeout, long taskSize, SluiceSinkBuilder sink, boolean restarts)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(200);
        if (!restarts) {
            RestartStrategyUtils.configureNoRestartStrategy(env);
        }
        env.fromSource(
                        GenerationSource.builder()
                                .setBootstrapServers(KAFKA.bootstrapServers())
                                .setTopics(jobsTopic, statusTopic, progressTopic)
                                .setReaderTimeout(readerTimeout)
                                .build(),
                        WatermarkStrategy.noWatermarks(),
                        "generation")
                .sinkTo(
                        sink.setBootstrapServers(KAFKA.bootstrapServers())
                                .setProgressTopic(progressTopic)
                                .setJobsTopic(jobsTopic)
                                .setMaxTaskSizeBytes(taskSize)
                                .build());
        return env.executeAsync("generation");
    }

    @Test
    void aJobWhoseChunksCannotBeWrittenFailsAloneAndTheGenerationJobNeverRestarts()
            throws Exception {
        // Records of at most 100 KiB: chunks of 128 KiB cannot be written.
        var flinkJob =
                startGeneration(
                        Duration.ofSeconds(30),
                        256 * 1024,
                        SluiceSink.builder().setProperty("max.request.size", "102400"),
                        false);
        ExecutorService readers = Executors.newCachedThreadPool();
        JobSpec tooLarge =
                TestJobs.job(
                        "too-large",
                        2,
                        512 * 1024,
                        256 * 1024,
                        128 * 1024,
                        PatternGenerator.class,
                        Map.of());
        JobSpec topicless =
                new JobSpec(
                        "topicless",
                        List.of(),
                        tooLarge.generator(),
                        48 * 1024,
                        List.of(
                                new StreamSpec(
                                        "c0",
                                        "nowhere",
                                        new SplitRule.Channel("c0"),
                                        48 * 1024,
                                        OptionalLong.empty(),
                                        16 * 1024)));
        try (JobClient jobs = jobClient()) {
            List<StreamReader> open = new ArrayList<>();
            for (StreamSpec stream : tooLarge.streams()) {
                open.add(reader(tooLarge.id(), stream));
            }
            List<JobSpec> valid = List.of(job("before", Map.of()), job("after", Map.of()));
            List<Future<Long>> lengths = readEach(valid, open, readers);
            // A chunk topic that takes records of 64 KiB at most: chunks of 128 KiB do not fit.
            try (Admin admin = Admin.create(KAFKA.broker().clientProperties())) {
                admin.createTopics(
                                List.of(
                                        new NewTopic(
                                                        ChunkTopics.forOutputLocation("tight"),
                                                        1,
                                                        (short) 1)
                                                .configs(Map.of("max.message.bytes", "65536"))))
                        .all()
                        .get();
            }
            JobSpec oversized =
                    new JobSpec(
                            "oversized",
                            List.of(),
                            tooLarge.generator(),
                            256 * 1024,
                            List.of(
                                    new StreamSpec(
                                            "c0",
                                            "tight",
                                            new SplitRule.Channel("c0"),
                                            256 * 1024,
                                            OptionalLong.empty(),
                                            128 * 1024)));
            jobs.submit(valid.get(0));
            jobs.submit(tooLarge);
            jobs.submit(topicless);
            jobs.submit(oversized);

            JobStatus failed = jobs.awaitStatus("too-large", s -> s.state().isTerminal(), WAIT);
            assertThat(failed.state()).isEqualTo(JobState.FAILED);
            assertThat(failed.reason())
                    .get()
                    .asString()
                    .contains("too-large/c", "max.request.size (102400)", "chunkSizeBytes");
            JobStatus refused = jobs.awaitStatus("topicless", s -> s.state().isTerminal(), WAIT);
            assertThat(refused.state()).isEqualTo(JobState.REFUSED);
            assertThat(refused.reason())
                    .get()
                    .asString()
                    .startsWith("no chunk topic sluice.chunks.nowhere on the cluster");
            JobStatus tooLargeForItsTopic =
                    jobs.awaitStatus("oversized", s -> s.state().isTerminal(), WAIT);
            assertThat(tooLargeForItsTopic.state()).isEqualTo(JobState.REFUSED);
            assertThat(tooLargeForItsTopic.reason())
                    .get()
                    .asString()
                    .startsWith("stream c0: its chunks of 131072 B are up to ")
                    .contains("sluice.chunks.tight takes (max.message.bytes = 65536)");
            // A valid job submitted after the poisoned one runs too.
            jobs.submit(valid.get(1));
            for (JobSpec spec : valid) {
                JobStatus done = jobs.awaitStatus(spec.id(), s -> s.state().isTerminal(), WAIT);
                assertThat(done.state()).as(spec.id()).isEqualTo(JobState.COMPLETED);
            }
            for (Future<Long> length : lengths) {
                assertThat(length.get()).isEqualTo(320 * 1024);
            }
            // No restart strategy: a task that had failed would have failed the Flink job.
            assertThat(flinkJob.getJobStatus().get())
                    .isEqualTo(org.apache.flink.api.common.JobStatus.RUNNING);
            for (StreamReader reader : open) {
                reader.close();
            }
        } finally {
            readers.shutdownNow();
            flinkJob.cancel().get();
        }
    }

    @Test
    void aTaskManagerLostMidJobLeavesEveryStreamCompleteInOrderAndOnce(
            @InjectMiniCluster MiniCluster cluster) throws Exception {
        var flinkJob = startGeneration(Duration.ofSeconds(30), 128 * 1024);
        ExecutorService readers = Executors.newCachedThreadPool();
        // Two streams of 2 MiB: 16 tasks and 128 chunks each.
        JobSpec spec =
                TestJobs.job(
                        "survivor",
                        2,
                        2 << 20,
                        128 * 1024,
                        16 * 1024,
                        PatternGenerator.class,
                        Map.of());
        try (JobClient jobs = jobClient()) {
            List<StreamReader> open = new ArrayList<>();
            List<Future<Long>> lengths = new ArrayList<>();
            AtomicLong read = new AtomicLong();
            for (StreamSpec stream : spec.streams()) {
                StreamReader reader = reader(spec.id(), stream);
                open.add(reader);
                lengths.add(
                        readers.submit(
                                () -> PatternStreams.readAll(reader, stream.name(), read, WAIT)));
            }
            jobs.submit(spec);
            Await.until("40 chunks arrive", WAIT, () -> read.get() >= 40);
            cluster.terminateTaskManager(0).get();
            cluster.startTaskManager();

            JobStatus done = jobs.awaitStatus("survivor", s -> s.state().isTerminal(), WAIT);
            assertThat(done.state()).isEqualTo(JobState.COMPLETED);
            for (Future<Long> length : lengths) {
                assertThat(length.get()).isEqualTo(2 << 20);
            }
            assertThat(read.get()).isEqualTo(256);
            for (StreamReader reader : open) {
                reader.close();
            }
        } finally {
            readers.shutdownNow();
            flinkJob.cancel().get();
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
