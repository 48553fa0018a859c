package dev.sluice.flink.sink;

import dev.sluice.client.stream.DeliveryProgress;
import dev.sluice.client.write.ChunkProducerSettings;
import dev.sluice.client.write.ChunkRecords;
import dev.sluice.client.write.InFlightAccounting;
import dev.sluice.client.write.ProgressListener;
import dev.sluice.flink.generation.Chunk;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.SinkWriterMetricGroup;
import org.apache.flink.util.function.ThrowingRunnable;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes chunks as chunk records, at least once, with a bounded number of bytes in flight per
 * stream.
 *
 * <p><b>Bounded buffering.</b> A chunk counts as in flight from {@link #write} until the stream's
 * readers report it delivered on the progress topic ({@link InFlightAccounting}); this writer may
 * hold its share of each stream's cap. When a stream's share is full, {@code write} waits for
 * progress in {@link MailboxExecutor#yield()}: the task thread sleeps until a mail comes, and runs
 * it (the progress listener's, a failed send's, timers, checkpoint notifications), so nothing spins
 * and the task stays responsive. Flink's backpressure then stops what is upstream.
 *
 * <p><b>At least once.</b> {@link #flush} (on every checkpoint and at the end of input) waits until
 * the broker acknowledged every chunk sent so far; a failed send fails the task, naming the chunk,
 * also when no {@code write} comes anymore (a mail rethrows it). A restore may send a chunk again;
 * the daemon drops it by {@code seq}.
 */
@Internal
public final class SluiceSinkWriter implements SinkWriter<Chunk> {
    private static final Logger LOG = LoggerFactory.getLogger(SluiceSinkWriter.class);
    // What makes a generated chunk smaller, for the messages of one too large.
    private static final String CHUNK_SIZE_SETTING = "the job's chunkSizeBytes";

    private final SinkSettings settings;
    private final Producer<byte[], byte[]> producer;
    private final MailboxExecutor mailbox;
    private final InFlightAccounting accounting;
    private final ProgressListener listener;
    private final Queue<DeliveryProgress> inbox = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private final ChunkProducerSettings limits;

    private final Counter recordsSent;
    private final Counter bytesSent;
    private final Counter sendErrors;
    // What the gauges show; written on the task thread, read by metric reporters.
    private volatile long bytesInFlight;
    private volatile int streamsInFlight;
    private volatile String waitingFor;
    private volatile long waitStartNanos;
    private volatile long waitedNanos;
    private volatile long progressApplied;

    /**
     * @param producer writes the chunk records; the writer closes it
     * @param progressConsumer reads the progress topic; the writer closes it
     * @param producers how many writers the sink has: each holds its equal part of a stream's cap
     */
    @VisibleForTesting
    SluiceSinkWriter(
            SinkSettings settings,
            Producer<byte[], byte[]> producer,
            Consumer<byte[], byte[]> progressConsumer,
            MailboxExecutor mailbox,
            SinkWriterMetricGroup metrics,
            int subtask,
            int producers)
            throws IOException {
        this.settings = settings;
        this.producer = producer;
        this.mailbox = mailbox;
        this.accounting = new InFlightAccounting(settings.sharePerStream(producers));
        this.limits = ChunkProducerSettings.of(settings.producer());

        this.recordsSent = metrics.getNumRecordsSendCounter();
        this.bytesSent = metrics.getNumBytesSendCounter();
        this.sendErrors = metrics.getNumRecordsSendErrorsCounter();
        this.listener =
                new ProgressListener(
                        progressConsumer,
                        settings.progressTopic(),
                        settings.progressPartitionRefresh(),
                        this::progressArrived,
                        this::progressFailed,
                        "sluice-sink-progress-" + subtask);
        MetricGroup sluice = metrics.addGroup("sluice");
        sluice.gauge("bytesInFlight", (Gauge<Long>) () -> bytesInFlight);
        sluice.gauge("streamsInFlight", (Gauge<Integer>) () -> streamsInFlight);
        sluice.gauge("streamsWaiting", (Gauge<Integer>) () -> waitingFor == null ? 0 : 1);
        sluice.gauge("timeWaitedMs", (Gauge<Long>) () -> timeWaitedNanos() / 1_000_000);
        sluice.gauge("inFlightShareBytes", (Gauge<Long>) accounting::share);
        sluice.gauge("progressRecords", (Gauge<Long>) listener::records);
        sluice.gauge("progressRecordsMalformed", (Gauge<Long>) listener::malformed);
        try {
            listener.start();
        } catch (IOException | RuntimeException e) {
            closeQuietly();
            throw e;
        }
        LOG.info(
                "SluiceSink writer {} of {}: up to {} bytes in flight per stream (cap {} over all"
                        + " writers), progress from {}",
                subtask,
                producers,
                accounting.share(),
                settings.capPerStream(producers),
                settings.progressTopic());
    }

    @Override
    public void write(Chunk chunk, Context context) throws IOException, InterruptedException {
        checkFailure();
        ChunkRecords.checkNames(chunk.job(), chunk.stream(), chunk.outputLocation(), chunk.seq());
        ProducerRecord<byte[], byte[]> record =
                ChunkRecords.record(
                        ChunkRecords.topic(chunk.outputLocation()),
                        partition(chunk),
                        chunk.job(),
                        chunk.stream(),
                        chunk.seq(),
                        chunk.eos(),
                        chunk.payload());
        limits.checkFits(record, chunk.toString(), CHUNK_SIZE_SETTING);
        String key = InFlightAccounting.key(chunk.job(), chunk.stream());
        long bytes = chunk.payload().length;
        applyProgress();
        if (!accounting.admits(key, chunk.seq(), bytes)) {
            awaitRoom(key, chunk.seq(), bytes);
        }
        accounting.written(key, chunk.seq(), bytes);
        updateGauges();
        producer.send(record, callback(chunk, record.partition()));
        recordsSent.inc();
        bytesSent.inc(bytes);
    }

    private int partition(Chunk chunk) throws IOException {
        String topic = ChunkRecords.topic(chunk.outputLocation());
        List<PartitionInfo> partitions;
        try {
            // The producer's metadata: a lookup in its cache once the topic is known.
            partitions = producer.partitionsFor(topic);
        } catch (KafkaException e) {
            throw new IOException(
                    "chunk "
                            + chunk
                            + ": no partitions of its output location's topic "
                            + topic
                            + " ("
                            + e.getMessage()
                            + "); create the topic",
                    e);
        }
        if (partitions == null || partitions.isEmpty()) {
            throw new IOException(
                    "chunk " + chunk + ": its output location's topic " + topic + " not found");
        }
        return settings.partitioning().partition(chunk, partitions.size());
    }

    /** Waits, running mails, until the stream's share has room for the chunk. */
    private void awaitRoom(String key, long seq, long bytes)
            throws IOException, InterruptedException {
        LOG.debug(
                "{}#{} waits: {} bytes of the stream in flight, share {}, delivered up to {}",
                key,
                seq,
                accounting.bytesInFlight(key),
                accounting.share(),
                accounting.deliveredSeq(key));
        waitStartNanos = System.nanoTime();
        waitingFor = key;
        try {
            while (!accounting.admits(key, seq, bytes)) {
                // Sleeps until a mail comes: the listener's when progress arrives.
                mailbox.yield();
                checkFailure();
                applyProgress();
            }
        } finally {
            long waited = System.nanoTime() - waitStartNanos;
            waitedNanos += waited;
            waitingFor = null;
            LOG.debug("{}#{} waited {} us", key, seq, waited / 1000);
        }
    }

    @VisibleForTesting
    long timeWaitedNanos() {
        long waited = waitedNanos;
        return waitingFor == null ? waited : waited + (System.nanoTime() - waitStartNanos);
    }

    private Callback callback(Chunk chunk, int partition) {
        // The callback keeps what names the chunk, not its payload.
        String name = chunk.toString();
        String topic = ChunkRecords.topic(chunk.outputLocation());
        return (metadata, error) -> {
            if (error == null) {
                return;
            }
            sendErrors.inc();
            failed(
                    ChunkProducerSettings.sendFailure(
                            name, topic, partition, error, CHUNK_SIZE_SETTING));
        };
    }

    /** Runs on the listener's thread: queues the records and has the task thread apply them. */
    private void progressArrived(List<DeliveryProgress> batch) {
        inbox.addAll(batch);
        if (drainScheduled.compareAndSet(false, true)) {
            post(this::drainProgress, "sluice delivery progress");
        }
    }

    private void drainProgress() {
        drainScheduled.set(false);
        applyProgress();
    }

    private void applyProgress() {
        boolean any = false;
        for (DeliveryProgress progress; (progress = inbox.poll()) != null; ) {
            accounting.progress(progress);
            progressApplied++;
            any = true;
        }
        if (any) {
            updateGauges();
        }
    }

    private void progressFailed(Exception error) {
        failed(
                new IOException(
                        "the delivery progress consumer of "
                                + settings.progressTopic()
                                + " failed, so bytes in flight cannot be bounded: "
                                + error,
                        error));
    }

    /** Remembers the first failure and fails the task with it from a mail. */
    private void failed(IOException error) {
        if (failure.compareAndSet(null, error)) {
            post(this::checkFailure, "sluice sink failure");
        }
    }

    private void post(ThrowingRunnable<? extends Exception> mail, String description) {
        try {
            mailbox.execute(mail, description);
        } catch (RejectedExecutionException e) {
            // The task is closing: nothing left to wake.
        }
    }

    private void checkFailure() throws IOException {
        Exception error = failure.get();
        if (error != null) {
            throw new IOException(error.getMessage(), error);
        }
    }

    private void updateGauges() {
        bytesInFlight = accounting.bytesInFlight();
        streamsInFlight = accounting.streamsInFlight();
    }

    /** Waits until the broker acknowledged every chunk sent; fails if one was not. */
    @Override
    public void flush(boolean endOfInput) throws IOException, InterruptedException {
        checkFailure();
        producer.flush();
        checkFailure();
        applyProgress();
    }

    @Override
    public void close() throws Exception {
        closeQuietly();
    }

    private void closeQuietly() {
        try {
            listener.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            // What is not flushed is not checkpointed: a restore sends it again.
            producer.close(Duration.ZERO);
        }
    }

    @VisibleForTesting
    InFlightAccounting accounting() {
        return accounting;
    }

    @VisibleForTesting
    long bytesInFlightGauge() {
        return bytesInFlight;
    }

    @VisibleForTesting
    boolean isWaiting() {
        return waitingFor != null;
    }

    @VisibleForTesting
    long progressMalformed() {
        return listener.malformed();
    }

    @VisibleForTesting
    long progressApplied() {
        return progressApplied;
    }
}
