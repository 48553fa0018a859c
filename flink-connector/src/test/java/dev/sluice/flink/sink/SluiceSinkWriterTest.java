package dev.sluice.flink.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobCommand;
import dev.sluice.client.job.JobCommandJson;
import dev.sluice.client.job.Transport;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.DeliveryProgressCodec;
import dev.sluice.client.write.ChunkRecords;
import dev.sluice.embedded.junit.Await;
import dev.sluice.flink.generation.Chunk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.function.ThrowingRunnable;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The writer with Kafka's mock clients, local channels of the test's own and a mailbox of its own:
 * {@code write} waits at the share in the mailbox and goes on when progress arrives (or a local
 * channel's loss frees the share), failures name the chunk. The real broker, daemon and readers are
 * in {@code SluiceSinkIT} and {@code SluiceSinkLocalIT}.
 */
class SluiceSinkWriterTest {
    private static final String PROGRESS = "progress";
    private static final String TOPIC = "sluice.chunks.printer-1";
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ExecutorService taskThread = Executors.newSingleThreadExecutor();
    private final TestMailbox mailbox = new TestMailbox();
    private final BlockingMockConsumer consumer = new BlockingMockConsumer();
    private MockProducer<byte[], byte[]> producer;
    // The writer's local channels; null: the sink has no daemon socket.
    private TestChannels localChannels;
    private SluiceSinkWriter writer;
    private long progressOffset;

    @AfterEach
    void tearDown() throws Exception {
        if (writer != null) {
            taskThread
                    .submit(
                            () -> {
                                writer.close();
                                return null;
                            })
                    .get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        taskThread.shutdownNow();
    }

    private SluiceSinkWriter open(SluiceSinkBuilder builder, int producers, boolean autoComplete)
            throws Exception {
        Node node = new Node(0, "localhost", 9092);
        Cluster cluster =
                new Cluster(
                        "c",
                        List.of(node),
                        List.of(
                                new PartitionInfo(TOPIC, 0, node, null, null),
                                new PartitionInfo(TOPIC, 1, node, null, null),
                                new PartitionInfo(
                                        JobClient.DEFAULT_JOBS_TOPIC, 0, node, null, null)),
                        java.util.Set.of(),
                        java.util.Set.of());
        producer =
                new MockProducer<>(
                        cluster,
                        autoComplete,
                        null,
                        new ByteArraySerializer(),
                        new ByteArraySerializer());
        TopicPartition progress = new TopicPartition(PROGRESS, 0);
        consumer.updatePartitions(
                PROGRESS, List.of(new PartitionInfo(PROGRESS, 0, node, null, null)));
        consumer.updateBeginningOffsets(Map.of(progress, 0L));
        writer =
                new SluiceSinkWriter(
                        (SinkSettingsAccess.settings(builder.setProgressTopic(PROGRESS).build())),
                        producer,
                        consumer,
                        localChannels,
                        mailbox,
                        UnregisteredMetricsGroup.createSinkWriterMetricGroup(),
                        0,
                        producers);
        return writer;
    }

    private static SluiceSinkBuilder builder() {
        return SluiceSink.builder().setBootstrapServers("localhost:9092");
    }

    private static Chunk chunk(long seq, int size) {
        return new Chunk("job-1", "cyan", "printer-1", seq, false, new byte[size]);
    }

    private static Chunk localChunk(String stream, long seq, int size) {
        return new Chunk("job-1", stream, "printer-1", seq, false, new byte[size], Transport.LOCAL);
    }

    private void publish(DeliveryProgress progress) {
        consumer.add(
                new ConsumerRecord<>(
                        PROGRESS,
                        0,
                        progressOffset++,
                        DeliveryProgressCodec.key(progress),
                        DeliveryProgressCodec.encode(progress)));
    }

    /** Runs {@code work} on the writer's task thread and waits for it. */
    private void onTaskThread(ThrowingRunnable<Exception> work) throws Exception {
        taskThread
                .submit(
                        () -> {
                            work.run();
                            return null;
                        })
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    private Future<?> write(Chunk chunk) {
        return taskThread.submit(
                () -> {
                    writer.write(chunk, null);
                    return null;
                });
    }

    @Test
    void aWriteAtTheShareWaitsInTheMailboxUntilProgressFreesRoom() throws Exception {
        // A cap of 8 KiB over 2 writers: this one may hold 4 KiB of a stream.
        open(builder().setInFlightBytesPerStream(8192), 2, true);
        for (int seq = 0; seq < 4; seq++) {
            write(chunk(seq, 1024)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        assertThat(writer.bytesInFlightGauge()).isEqualTo(4096);

        Future<?> fifth = write(chunk(4, 1024));
        Await.until("the fifth chunk waits", WAIT, writer::isWaiting);
        assertThat(fifth).isNotDone();
        assertThat(producer.history()).hasSize(4);

        // Progress of another stream, then an old one of this stream: still no room.
        publish(new DeliveryProgress("job-1", "magenta", 0, 1, 10, 10240, false));
        publish(new DeliveryProgress("job-1", "cyan", 0, 1, -1, 0, false));
        Await.until("both records are applied", WAIT, () -> writer.progressApplied() == 2);
        assertThat(fifth).isNotDone();
        assertThat(writer.isWaiting()).isTrue();

        publish(new DeliveryProgress("job-1", "cyan", 0, 1, 0, 1024, false));
        fifth.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(producer.history()).hasSize(5);
        assertThat(writer.isWaiting()).isFalse();
        assertThat(writer.bytesInFlightGauge()).isEqualTo(4096);
        // The wait was measured.
        assertThat(writer.timeWaitedNanos()).isPositive();

        // Replays of delivered chunks never wait.
        write(chunk(0, 1024)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(writer.bytesInFlightGauge()).isEqualTo(4096);
    }

    @Test
    void chunksGoToTheirLocationsTopicSpreadOverItsPartitions() throws Exception {
        open(builder(), 1, true);
        for (int seq = 0; seq < 4; seq++) {
            write(chunk(seq, 10)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        List<ProducerRecord<byte[], byte[]>> sent = producer.history();
        assertThat(sent).extracting(ProducerRecord::topic).containsOnly(TOPIC);
        int home = ChunkRecords.homePartition("job-1", "cyan", 2);
        assertThat(sent)
                .extracting(ProducerRecord::partition)
                .containsExactly(home, 1 - home, home, 1 - home);
    }

    @Test
    void aFailedSendFailsTheTaskNamingTheChunk() throws Exception {
        open(builder(), 1, false);
        write(chunk(7, 100)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(producer.errorNext(new KafkaException("broker says no"))).isTrue();
        // The failure reaches the task through a mail even if no write comes.
        Await.until("a failure mail is posted", WAIT, () -> !mailbox.mails.isEmpty());
        Future<?> mail =
                taskThread.submit(
                        () -> {
                            mailbox.runOne();
                            return null;
                        });
        assertThatThrownBy(() -> mail.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .hasStackTraceContaining(
                        "could not send chunk job-1/cyan#7 100 B to printer-1 (sluice.chunks"
                                + ".printer-1-"
                                + (ChunkRecords.homePartition("job-1", "cyan", 2) + 7) % 2
                                + "): ")
                .hasStackTraceContaining("broker says no");
        assertThatThrownBy(() -> write(chunk(8, 100)).get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .hasStackTraceContaining("job-1/cyan#7");
        assertThatThrownBy(
                        () ->
                                taskThread
                                        .submit(
                                                () -> {
                                                    writer.flush(false);
                                                    return null;
                                                })
                                        .get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .hasStackTraceContaining("job-1/cyan#7");
    }

    @Test
    void flushWaitsForEveryAcknowledgement() throws Exception {
        open(builder(), 1, false);
        write(chunk(0, 100)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        write(chunk(1, 100)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(producer.flushed()).isFalse();
        onTaskThread(() -> writer.flush(false));
        // MockProducer.flush completes every pending send.
        assertThat(producer.flushed()).isTrue();
    }

    @Test
    void aChunkLargerThanMaxRequestSizeFailsItsJobNotTheTask() throws Exception {
        open(builder().setProperty("max.request.size", "2000"), 1, true);
        write(chunk(0, 1800)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        write(chunk(1, 2000)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        JobCommand.Fail fail = failCommand(producer.history().get(1));
        assertThat(fail.jobId()).isEqualTo("job-1");
        assertThat(fail.reason())
                .contains("chunk job-1/cyan#1 2000 B to printer-1 is ")
                .contains("max.request.size (2000)")
                .contains("chunkSizeBytes");

        // The job's later chunks are dropped, counted; another job's still go, nothing failed.
        write(chunk(2, 10)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        write(new Chunk("job-2", "cyan", "printer-1", 0, false, new byte[10]))
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(producer.history()).hasSize(3);
        assertThat(producer.history().get(2).topic()).isEqualTo(TOPIC);
        assertThat(writer.chunksOfFailedJobs()).isEqualTo(2);
        onTaskThread(() -> writer.flush(false));
    }

    @Test
    void aSendRefusedAsTooLargeOrUnauthorizedFailsItsJobNotTheTask() throws Exception {
        open(builder(), 1, false);
        write(chunk(0, 100)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        write(new Chunk("job-2", "cyan", "printer-1", 0, false, new byte[100]))
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(producer.errorNext(new RecordTooLargeException("over max.message.bytes")))
                .isTrue();
        assertThat(producer.errorNext(new TopicAuthorizationException(Set.of(TOPIC)))).isTrue();
        // Each failure reaches the task thread through a mail, which sends the job's FAIL.
        for (int mail = 0; mail < 2; mail++) {
            Await.until("a job failure mail is posted", WAIT, () -> !mailbox.mails.isEmpty());
            onTaskThread(() -> mailbox.runOne());
        }
        producer.completeNext();
        producer.completeNext();
        assertThat(failCommand(producer.history().get(2)).reason())
                .contains("job-1/cyan#0")
                .contains("over max.message.bytes");
        assertThat(failCommand(producer.history().get(3)))
                .extracting(JobCommand.Fail::jobId)
                .isEqualTo("job-2");
        write(chunk(1, 100)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(producer.history()).hasSize(4);
    }

    /** The FAIL command a record of the jobs topic carries, keyed by its job. */
    private static JobCommand.Fail failCommand(ProducerRecord<byte[], byte[]> record) {
        assertThat(record.topic()).isEqualTo(JobClient.DEFAULT_JOBS_TOPIC);
        JobCommand.Fail fail = (JobCommand.Fail) JobCommandJson.parse(record.value());
        assertThat(new String(record.key(), StandardCharsets.UTF_8)).isEqualTo(fail.jobId());
        return fail;
    }

    @Test
    void aMissingProgressTopicFailsTheWriterAtOnce() {
        BlockingMockConsumer empty = new BlockingMockConsumer();
        assertThatThrownBy(
                        () ->
                                new SluiceSinkWriter(
                                        SinkSettingsAccess.settings(builder().build()),
                                        new MockProducer<>(),
                                        empty,
                                        null,
                                        mailbox,
                                        UnregisteredMetricsGroup.createSinkWriterMetricGroup(),
                                        0,
                                        1))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("progress topic sluice-progress not found");
        assertThat(empty.closed()).isTrue();
    }

    @Test
    void malformedProgressIsCountedAndSkipped() throws Exception {
        open(builder().setInFlightBytesPerStream(100), 1, true);
        write(chunk(0, 100)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        Future<?> second = write(chunk(1, 100));
        Await.until("the second chunk waits", WAIT, writer::isWaiting);
        consumer.add(new ConsumerRecord<>(PROGRESS, 0, progressOffset++, new byte[1], new byte[3]));
        publish(new DeliveryProgress("job-1", "cyan", 0, 1, 0, 100, false));
        second.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(producer.history()).hasSize(2);
        assertThat(writer.progressMalformed()).isEqualTo(1);
        assertThat(writer.progressApplied()).isEqualTo(1);
    }

    @Test
    void localChunksGoThroughTheirTopicsChannelAndCountInFlightLikeKafkaOnes() throws Exception {
        localChannels = new TestChannels();
        open(builder().setBrokerdSocket(Path.of("/run/sluice/brokerd.sock")), 1, true);
        write(localChunk("cyan", 0, 100)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        write(localChunk("magenta", 0, 200)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        write(chunk(1, 50)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        write(localChunk("cyan", 2, 300)).get(WAIT.toSeconds(), TimeUnit.SECONDS);

        // One channel for the topic, opened on its first chunk; the KAFKA chunk went to Kafka.
        assertThat(localChannels.opened).containsOnlyKeys(TOPIC);
        assertThat(localChannels.opened.get(TOPIC).sent)
                .containsExactly("job-1/cyan#0", "job-1/magenta#0", "job-1/cyan#2");
        assertThat(producer.history()).hasSize(1);
        assertThat(writer.bytesInFlightGauge()).isEqualTo(650);
        assertThat(writer.localChunksToKafka()).isZero();

        taskThread
                .submit(
                        () -> {
                            writer.close();
                            return null;
                        })
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);
        writer = null;
        assertThat(localChannels.opened.get(TOPIC).closed).isTrue();
    }

    @Test
    void aLocalChunkWithoutADaemonSocketGoesToKafkaAndIsCounted() throws Exception {
        open(builder(), 1, true);
        write(localChunk("cyan", 0, 100)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        write(localChunk("cyan", 1, 100)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        write(localChunk("magenta", 0, 100)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(producer.history())
                .extracting(ProducerRecord::topic)
                .containsExactly(TOPIC, TOPIC, TOPIC);
        assertThat(writer.localChunksToKafka()).isEqualTo(3);
        assertThat(writer.bytesInFlightGauge()).isEqualTo(300);
    }

    @Test
    void aChannelsLossForgetsItsStreamsSoAWriteWaitingForTheirShareGoesOn() throws Exception {
        localChannels = new TestChannels();
        // A cap of 8 KiB over 2 writers: this one may hold 4 KiB of a stream.
        open(
                builder()
                        .setInFlightBytesPerStream(8192)
                        .setBrokerdSocket(Path.of("/run/sluice/brokerd.sock")),
                2,
                true);
        for (int seq = 0; seq < 4; seq++) {
            write(localChunk("cyan", seq, 1024)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        write(localChunk("magenta", 0, 512)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        Future<?> fifth = write(localChunk("cyan", 4, 1024));
        Await.until("the fifth chunk waits", WAIT, writer::isWaiting);

        // The daemon went away: the chunks sent through it are lost, not in flight, so the
        // waiting chunk goes without any progress.
        TestChannel channel = localChannels.opened.get(TOPIC);
        channel.daemonGone();
        fifth.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(channel.sent).hasSize(6).endsWith("job-1/cyan#4");
        assertThat(writer.localChannelLosses()).isEqualTo(1);
        // Only the fifth chunk, sent after the loss, is in flight.
        assertThat(writer.accounting().bytesInFlight("job-1/cyan")).isEqualTo(1024);
        assertThat(writer.accounting().bytesInFlight("job-1/magenta")).isZero();
        assertThat(writer.bytesInFlightGauge()).isEqualTo(1024);
    }

    /** The local channels a writer opened, one per topic. */
    private static final class TestChannels implements LocalChunkSender.Opener {
        final Map<String, TestChannel> opened = new ConcurrentHashMap<>();

        @Override
        public LocalChunkSender open(String topic, Runnable onLoss) {
            TestChannel channel = new TestChannel(onLoss);
            assertThat(opened.put(topic, channel)).as("one channel per topic").isNull();
            return channel;
        }
    }

    /**
     * A local channel that keeps what was sent and loses it when the test says the daemon went
     * away, as {@code LocalChunkChannel} does: the streams sent since it connected are lost, and
     * {@code onLoss} is called from another thread.
     */
    private static final class TestChannel implements LocalChunkSender {
        final List<String> sent = new CopyOnWriteArrayList<>();
        private final Runnable onLoss;
        private final Set<String> sinceConnect = new HashSet<>();
        private final Set<String> lost = new HashSet<>();
        volatile boolean closed;

        TestChannel(Runnable onLoss) {
            this.onLoss = onLoss;
        }

        @Override
        public synchronized void send(
                String job, String stream, long seq, boolean eos, byte[] payload) {
            sent.add(job + "/" + stream + "#" + seq);
            sinceConnect.add(job + "/" + stream);
        }

        void daemonGone() {
            synchronized (this) {
                lost.addAll(sinceConnect);
                sinceConnect.clear();
            }
            onLoss.run();
        }

        @Override
        public synchronized Set<String> takeLostStreams() {
            Set<String> taken = Set.copyOf(lost);
            lost.clear();
            return taken;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    /** Reaches the settings of a built sink, as the sink itself does when it makes a writer. */
    private static final class SinkSettingsAccess {
        static SinkSettings settings(SluiceSink sink) throws Exception {
            var field = SluiceSink.class.getDeclaredField("settings");
            field.setAccessible(true);
            return (SinkSettings) field.get(sink);
        }
    }

    /** A mailbox whose {@code yield} sleeps until a mail comes, as the task's does. */
    private static final class TestMailbox implements MailboxExecutor {
        final BlockingQueue<ThrowingRunnable<? extends Exception>> mails =
                new LinkedBlockingQueue<>();

        @Override
        public void execute(
                MailOptions options,
                ThrowingRunnable<? extends Exception> command,
                String description,
                Object... args) {
            mails.add(command);
        }

        @Override
        public void yield() throws InterruptedException {
            run(mails.take());
        }

        @Override
        public boolean tryYield() {
            ThrowingRunnable<? extends Exception> mail = mails.poll();
            if (mail == null) {
                return false;
            }
            run(mail);
            return true;
        }

        void runOne() throws InterruptedException, TimeoutException {
            ThrowingRunnable<? extends Exception> mail = mails.poll(10, TimeUnit.SECONDS);
            if (mail == null) {
                throw new TimeoutException("no mail");
            }
            run(mail);
        }

        private void run(ThrowingRunnable<? extends Exception> mail) {
            try {
                mail.run();
            } catch (Exception e) {
                throw new FlinkRuntimeException(e);
            }
        }

        @Override
        public boolean shouldInterrupt() {
            return false;
        }
    }

    /**
     * Kafka's MockConsumer returns from {@code poll} at once; this one waits for a record (or a
     * wakeup) up to the timeout, as a real consumer does, so the listener thread does not spin.
     */
    private static final class BlockingMockConsumer extends MockConsumer<byte[], byte[]> {
        private final Semaphore available = new Semaphore(0);

        BlockingMockConsumer() {
            super("earliest");
        }

        void add(ConsumerRecord<byte[], byte[]> record) {
            addRecord(record);
            available.release();
        }

        @Override
        public ConsumerRecords<byte[], byte[]> poll(Duration timeout) {
            try {
                if (!available.tryAcquire(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    return ConsumerRecords.empty();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return ConsumerRecords.empty();
            }
            available.drainPermits();
            return super.poll(Duration.ZERO);
        }

        @Override
        public synchronized void wakeup() {
            super.wakeup();
            available.release();
        }
    }
}
