package dev.sluice.client.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.BufferModel;
import dev.sluice.client.job.GeneratorSpec;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.SplitRule;
import dev.sluice.client.job.StreamSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/** Every wrong setting is refused with a clear message before anything is opened. */
class StreamReaderBuilderTest {
    // Never connected to: the checks come first.
    private static final BrokerdClient BROKERD =
            BrokerdClient.builder(Path.of("/nonexistent/brokerd.sock")).build();

    private static final JobSpec JOB =
            new JobSpec(
                    "job-1",
                    List.of(),
                    new GeneratorSpec("com.example.Gen", Map.of()),
                    1 << 20,
                    List.of(
                            new StreamSpec(
                                    "cyan",
                                    "printer-1",
                                    new SplitRule.Channel("cyan"),
                                    10_000_000,
                                    OptionalLong.of(4_000_000),
                                    256 << 10),
                            new StreamSpec(
                                    "magenta",
                                    "printer-2",
                                    new SplitRule.Channel("magenta"),
                                    10_000_000)));

    private static StreamReaderBuilder reader() {
        return StreamReader.builder(BROKERD, "job-1", "cyan").topic("chunks").partitions(1);
    }

    @Test
    void refusesEmptyOrMalformedNames() {
        assertThatThrownBy(() -> StreamReader.builder(BROKERD, "", "cyan").topic("t").open())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("job = : 1 to 128 characters of [A-Za-z0-9._-]");
        assertThatThrownBy(() -> StreamReader.builder(BROKERD, "job-1", "").topic("t").open())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("stream = : 1 to 128 characters of [A-Za-z0-9._-]");
        assertThatThrownBy(() -> StreamReader.builder(BROKERD, "job 1", "cyan").topic("t").open())
                .hasMessage("job = job 1: 1 to 128 characters of [A-Za-z0-9._-]");
        assertThatThrownBy(() -> reader().topic("").open())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("topic: must be a Kafka topic name ([A-Za-z0-9._-], 1 to 249), got ''");
        assertThatThrownBy(() -> StreamReader.builder(BROKERD, "job-1", "cyan").open())
                .hasMessage("topic: none given; name it, or build from the job spec");
    }

    @Test
    void refusesARateBelowOneBytePerSecond() {
        assertThatThrownBy(() -> reader().pacing(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("rate: at least 1 byte/s, got 0");
        assertThatThrownBy(() -> reader().pacing(-5)).hasMessage("rate: at least 1 byte/s, got -5");
    }

    @Test
    void refusesANegativeHeapBuffer() {
        assertThatThrownBy(() -> reader().heapBufferBytes(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("heap buffer: at least 0 bytes, got -1");
    }

    @Test
    void refusesANegativeStartDelay() {
        assertThatThrownBy(() -> reader().startDelay(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("start delay: negative, PT-0.001S");
    }

    @Test
    void refusesAReaderIndexOutsideItsCount() {
        assertThatThrownBy(() -> reader().share(2, 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("share: reader index must be 0 to 1, got 2");
        assertThatThrownBy(() -> reader().share(-1, 2))
                .hasMessage("share: reader index must be 0 to 1, got -1");
        assertThatThrownBy(() -> reader().share(0, 0))
                .hasMessage("share: reader count must be 1 to 65535, got 0");
        assertThatThrownBy(() -> reader().share(0, 65536))
                .hasMessage("share: reader count must be 1 to 65535, got 65536");
    }

    @Test
    void refusesMissingPartitionsAndBadProgressSettings() {
        assertThatThrownBy(() -> StreamReader.builder(BROKERD, "job-1", "cyan").topic("t").open())
                .hasMessageStartingWith("partitions: none given");
        assertThatThrownBy(() -> reader().partitions(0))
                .hasMessage("partitions: at least 1, got 0");
        assertThatThrownBy(() -> reader().bootstrapServers(" ").open())
                .hasMessage("bootstrap servers: empty");
        assertThatThrownBy(
                        () ->
                                reader().bootstrapServers("127.0.0.1:9")
                                        .progressInterval(Duration.ZERO)
                                        .open())
                .hasMessage("progress interval: must be positive, got PT0S");
        assertThatThrownBy(
                        () -> reader().bootstrapServers("127.0.0.1:9").progressTopic("a b").open())
                .hasMessageStartingWith("progress topic: must be a Kafka topic name");
        assertThatThrownBy(
                        () ->
                                reader().bootstrapServers("127.0.0.1:9")
                                        .progressTopic("chunks")
                                        .open())
                .hasMessage("progress topic: must differ from the chunk topic chunks");
    }

    @Test
    void aSharedProgressProducerIsRefusedBesideTheSettingsOfAProducerOfItsOwn() {
        MockProducer<byte[], byte[]> shared =
                new MockProducer<>(
                        true, null, new ByteArraySerializer(), new ByteArraySerializer());
        String message =
                "progress producer: given with bootstrapServers or kafkaProperty, which configure a"
                        + " producer of the reader's own; give one or the other";
        assertThatThrownBy(
                        () ->
                                reader().progressProducer(shared)
                                        .bootstrapServers("127.0.0.1:9")
                                        .open())
                .hasMessage(message);
        assertThatThrownBy(
                        () -> reader().progressProducer(shared).kafkaProperty("acks", "1").open())
                .hasMessage(message);
        assertThatThrownBy(() -> reader().progressProducer(shared).progressTopic("chunks").open())
                .hasMessage("progress topic: must differ from the chunk topic chunks");
        assertThat(shared.closed()).isFalse();
    }

    @Test
    void takesTopicRateAndSlotSizeFromTheJobAndSharesTheRate() {
        StreamReaderBuilder cyan = StreamReader.builder(BROKERD, JOB, "cyan").partitions(1);
        assertThat(cyan.check().toString())
                .isEqualTo(
                        "Settings[topic=sluice.chunks.printer-1, rate=4000000, slotSize="
                                + ((256 << 10) + (64 << 10))
                                + ", startDelayNanos=262144000, silenceNanos=60000000000,"
                                + " chunksPerTask=4]");
        assertThat(StreamReader.builder(BROKERD, JOB, "cyan").partitions(1).share(1, 4).check())
                .hasToString(
                        "Settings[topic=sluice.chunks.printer-1, rate=1000000, slotSize=327680,"
                                + " startDelayNanos=262144000, silenceNanos=60000000000,"
                                + " chunksPerTask=4]");
        assertThat(StreamReader.builder(BROKERD, JOB, "cyan").partitions(1).noPacing().check())
                .hasToString(
                        "Settings[topic=sluice.chunks.printer-1, rate=0, slotSize=327680,"
                                + " startDelayNanos=0, silenceNanos=60000000000, chunksPerTask=4]");
        assertThat(
                        StreamReader.builder(BROKERD, JOB, "magenta")
                                .partitions(1)
                                .topic("mine")
                                .pacing(7)
                                .check())
                .hasToString(
                        "Settings[topic=mine, rate=7, slotSize="
                                + ((512 << 10) + (64 << 10))
                                + ", startDelayNanos=149796571428571, silenceNanos=60000000000,"
                                + " chunksPerTask=2]");
        assertThat(reader().check().chunksPerTask()).as("no job spec: no task boundaries").isZero();
        assertThatThrownBy(() -> StreamReader.builder(BROKERD, JOB, "yellow").partitions(1).open())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("stream = yellow: job job-1 has no such stream (it has cyan, magenta)");
    }

    @Test
    void theStartDelayIsOneTaskOfTheStreamAtItsRateByDefault() {
        // 1 MiB tasks at the job's 4 MB/s: 262.144 ms.
        assertThat(cyanFromJob().check().startDelayNanos()).isEqualTo(262_144_000L);
        // Four readers: a quarter of each task at a quarter of the rate, the same time.
        assertThat(cyanFromJob().share(3, 4).check().startDelayNanos()).isEqualTo(262_144_000L);
        // A rate of its own: this reader's share of a task at that rate, 1 MiB / 2 / 1 MB/s.
        assertThat(cyanFromJob().share(0, 2).pacing(1_000_000).check().startDelayNanos())
                .isEqualTo(524_288_000L);
        // docs/stream-reader.md's example: B/8 at 1.5 MB/s in 4 MiB tasks, 2.8 s.
        assertThat(startDelayOfCyan(4 << 20, 100_000_000, 1_500_000)).isEqualTo(2_796_202_667L);
    }

    @Test
    void aJobThatMustSurviveAProducersLossStartsWithTheBufferModelsDelay() {
        // 1 MiB tasks at 4 MB/s, 262.144 ms each: 3 of them to find a producer slow, the 250 ms
        // guard, and one on a survivor (docs/generation.md, "Buffer model").
        JobSpec surviving =
                new JobSpec(
                        JOB.id(),
                        JOB.inputs(),
                        JOB.generator(),
                        JOB.taskSizeBytes(),
                        JOB.streams(),
                        JOB.weight(),
                        JOB.transport(),
                        true);
        assertThat(StreamReader.builder(BROKERD, surviving, "cyan").partitions(1).check())
                .extracting(StreamReaderBuilder.Settings::startDelayNanos)
                .isEqualTo(4 * 262_144_000L + 250_000_000L);
        assertThat(BufferModel.explain(1 << 20, 4_000_000, true))
                .isEqualTo(
                        "start delay 1.30 s to survive a producer's loss: 0.79 s to find it slow"
                                + " (3 tasks' time) + 250 ms guard + 0.26 s for a survivor to"
                                + " compute the task (1048576 B at 4000000 B/s)");
    }

    @Test
    void aStreamShorterThanATaskIsOneTask() {
        assertThat(startDelayOfCyan(1 << 20, 400_000, 4_000_000)).isEqualTo(100_000_000L);
    }

    /** The derived start delay of a job's one paced stream of 256 KiB chunks. */
    private static long startDelayOfCyan(long taskSize, long streamSize, long rate) {
        JobSpec job =
                new JobSpec(
                        "one-stream",
                        List.of(),
                        new GeneratorSpec("com.example.Gen", Map.of()),
                        taskSize,
                        List.of(
                                new StreamSpec(
                                        "cyan",
                                        "printer-1",
                                        new SplitRule.Channel("cyan"),
                                        streamSize,
                                        OptionalLong.of(rate),
                                        256 << 10)));
        return StreamReader.builder(BROKERD, job, "cyan").partitions(1).check().startDelayNanos();
    }

    @Test
    void theSilenceTimeoutIsAMinuteUnlessSetAndNeverNegative() {
        assertThat(cyanFromJob().silenceTimeout(Duration.ZERO).check().silenceNanos()).isZero();
        assertThat(cyanFromJob().silenceTimeout(Duration.ofSeconds(5)).check().silenceNanos())
                .isEqualTo(5_000_000_000L);
        assertThatThrownBy(() -> cyanFromJob().silenceTimeout(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("silence timeout: negative, PT-0.001S");
    }

    @Test
    void aStartDelayGivenOverridesTheDerivedOneZeroIncluded() {
        assertThat(cyanFromJob().startDelay(Duration.ofMillis(50)).check().startDelayNanos())
                .isEqualTo(50_000_000L);
        assertThat(cyanFromJob().startDelay(Duration.ZERO).check().startDelayNanos()).isZero();
    }

    @Test
    void withoutAJobSpecOrPacingThereIsNoStartDelay() {
        assertThat(reader().pacing(1_000_000).check().startDelayNanos()).isZero();
        assertThat(reader().pacing(1_000_000).startDelay(Duration.ofSeconds(1)).check())
                .extracting(StreamReaderBuilder.Settings::startDelayNanos)
                .isEqualTo(1_000_000_000L);
        // Unpaced, a start delay given has nothing to delay.
        assertThat(cyanFromJob().noPacing().startDelay(Duration.ofSeconds(1)).check())
                .extracting(StreamReaderBuilder.Settings::startDelayNanos)
                .isEqualTo(0L);
    }

    private static StreamReaderBuilder cyanFromJob() {
        return StreamReader.builder(BROKERD, JOB, "cyan").partitions(1);
    }
}
