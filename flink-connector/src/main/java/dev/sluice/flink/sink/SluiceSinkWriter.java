package dev.sluice.flink.sink;

import dev.sluice.client.job.JobCommand;
import dev.sluice.client.job.JobCommandJson;
import dev.sluice.client.job.Transport;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.ProgressListener;
import dev.sluice.client.write.ChunkProducerSettings;
import dev.sluice.client.write.ChunkRecords;
import dev.sluice.client.write.InFlightAccounting;
import dev.sluice.flink.generation.Chunk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
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
 * <p><b>Transports.</b> A chunk the scheduler sent the local way ({@link Transport#LOCAL}) goes
 * through the {@link LocalChunkSender} of its chunk topic, opened on first use over the host's
 * daemon, into a shared-memory segment the daemon reads; any other chunk goes to Kafka. Both count
 * the same in flight. Without a daemon socket a {@code LOCAL} chunk goes to Kafka, logged once per
 * stream. When a channel's daemon goes away, the chunks it had not delivered are lost, not in
 * flight: a mail forgets them ({@link InFlightAccounting#forget}), so a write waiting for their
 * room goes on (docs/sluice-sink.md, "Transports").
 *
 * <p><b>A job that cannot be written.</b> A chunk whose record is too large for the producer or its
 * topic, or whose topic this writer is not authorized to write, would fail the task on every
 * attempt, and every restore would compute it again: the job is poisoned, not the writer. The
 * writer sends the job's {@code FAIL} command with the reason to the jobs topic, so that the
 * scheduler ends it FAILED and releases its streams, and drops the job's later chunks, counted
 * ({@code chunksOfFailedJobs}); the other jobs go on (docs/sluice-sink.md, "A job that cannot be
 * written"). Any other failure fails the task, as below.
 *
 * <p><b>At least once.</b> {@link #flush} (on every checkpoint and at the end of input) waits until
 * the broker acknowledged every chunk sent so far; a failed send fails the task, naming the chunk,
 * also when no {@code write} comes anymore (a mail rethrows it). A restore may send a chunk again;
 * the daemon drops it by {@code seq}. A local chunk is in shared memory once sent and has no
 * acknowledgement to wait for; it is lost if its daemon goes away before delivering it, and the
 * generation scheduler computes its task again then (docs/generation.md, "Recovery").
 */
@Internal
public final class SluiceSinkWriter implements SinkWriter<Chunk> {
    private static final Logger LOG = LoggerFactory.getLogger(SluiceSinkWriter.class);
    // What makes a generated chunk smaller, for the messages of one too large.
    private static final String CHUNK_SIZE_SETTING = "the job's chunkSizeBytes";
    // The streams whose LOCAL chunks went to Kafka were logged: the latest this many are
    // remembered, so that a long-running writer's memory stays bounded.
    private static final int LOGGED_STREAMS_REMEMBERED = 4096;

    private final SinkSettings settings;
    private final Producer<byte[], byte[]> producer;
    // Null: no daemon socket, LOCAL chunks go to Kafka.
    private final LocalChunkSender.Opener localOpener;
    private final Map<String, LocalChunkSender> localChannels = new HashMap<>();
    private final Map<String, Boolean> localToKafkaLogged =
            new LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > LOGGED_STREAMS_REMEMBERED;
                }
            };
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
    private final Counter localChunksSent;
    private final Counter localBytesSent;
    private final Counter localChannelLosses;
    private final Counter localChunksToKafka;
    private final Counter chunksOfFailedJobs;
    // The bytes sent for each output location, the group's variable output_location: what shows
    // which host's producers feed a node (docs/sluice-sink.md, "Metrics"). Output locations are a
    // cluster's nodes, a few counters.
    private final MetricGroup sluiceMetrics;
    private final Map<String, Counter> bytesByOutputLocation = new HashMap<>();
    // The jobs whose chunks could not be written: the latest this many, bounded as above.
    private final Map<String, Boolean> failedJobs =
            new LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > LOGGED_STREAMS_REMEMBERED;
                }
            };
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
     * @param localOpener opens the local channel of a chunk topic; null without a daemon socket
     * @param producers how many writers the sink has: each holds its equal part of a stream's cap
     */
    @VisibleForTesting
    SluiceSinkWriter(
            SinkSettings settings,
            Producer<byte[], byte[]> producer,
            Consumer<byte[], byte[]> progressConsumer,
            LocalChunkSender.Opener localOpener,
            MailboxExecutor mailbox,
            SinkWriterMetricGroup metrics,
            int subtask,
            int producers)
            throws IOException {
        this.settings = settings;
        this.producer = producer;
        this.localOpener = localOpener;
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
        this.sluiceMetrics = sluice;
        this.localChunksSent = sluice.counter("localChunksSent");
        this.localBytesSent = sluice.counter("localBytesSent");
        this.localChannelLosses = sluice.counter("localChannelLosses");
        this.localChunksToKafka = sluice.counter("localChunksToKafka");
        this.chunksOfFailedJobs = sluice.counter("chunksOfFailedJobs");
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
                        + " writers), progress from {}, LOCAL chunks {}",
                subtask,
                producers,
                accounting.share(),
                settings.capPerStream(producers),
                settings.progressTopic(),
                settings.local() == null
                        ? "through Kafka (no daemon socket)"
                        : "to the daemon at " + settings.local().brokerdSocket());
    }

    @Override
    public void write(Chunk chunk, Context context) throws IOException, InterruptedException {
        checkFailure();
        ChunkRecords.checkNames(chunk.job(), chunk.stream(), chunk.outputLocation(), chunk.seq());
        if (failedJobs.containsKey(chunk.job())) {
            chunksOfFailedJobs.inc();
            return;
        }
        String topic = ChunkRecords.topic(chunk.outputLocation());
        String key = InFlightAccounting.key(chunk.job(), chunk.stream());
        boolean local = chunk.transport() == Transport.LOCAL;
        if (local && localOpener == null) {
            local = false;
            localChunksToKafka.inc();
            if (localToKafkaLogged.put(key, Boolean.TRUE) == null) {
                LOG.warn(
                        "{}: LOCAL chunks of stream {} go through Kafka: the sink has no daemon"
                                + " socket (SluiceSinkBuilder.setBrokerdSocket)",
                        chunk,
                        key);
            }
        }
        // Opened before the chunk counts, so that a daemon refusing the channel fails the task
        // with nothing counted.
        LocalChunkSender channel = local ? localChannel(topic) : null;
        ProducerRecord<byte[], byte[]> record = null;
        if (!local) {
            try {
                record =
                        ChunkRecords.record(
                                topic,
                                partition(chunk),
                                chunk.job(),
                                chunk.stream(),
                                chunk.seq(),
                                chunk.eos(),
                                chunk.payload());
                limits.checkFits(record, chunk.toString(), CHUNK_SIZE_SETTING);
            } catch (IllegalArgumentException | TopicAuthorizationException e) {
                jobCannotBeWritten(chunk.job(), e.getMessage());
                return;
            }
        }
        long bytes = chunk.payload().length;
        applyProgress();
        if (!accounting.admits(key, chunk.seq(), bytes)) {
            awaitRoom(key, chunk.seq(), bytes);
        }
        accounting.written(key, chunk.seq(), bytes);
        updateGauges();
        if (local) {
            channel.send(chunk.job(), chunk.stream(), chunk.seq(), chunk.eos(), chunk.payload());
            localChunksSent.inc();
            localBytesSent.inc(bytes);
        } else {
            producer.send(record, callback(chunk, record.partition()));
        }
        recordsSent.inc();
        bytesSent.inc(bytes);
        bytesByOutputLocation
                .computeIfAbsent(
                        chunk.outputLocation(),
                        location ->
                                sluiceMetrics
                                        .addGroup("output_location", location)
                                        .counter("bytesSent"))
                .inc(bytes);
    }

    /**
     * Ends the job rather than this writer's task: sends its {@code FAIL} command, once, and drops
     * its later chunks (docs/sluice-sink.md, "A job that cannot be written"). The scheduler then
     * publishes the end of its streams, which frees what they held in flight here.
     */
    private void jobCannotBeWritten(String job, String reason) {
        chunksOfFailedJobs.inc();
        if (failedJobs.put(job, Boolean.TRUE) != null) {
            return;
        }
        LOG.warn("job {} cannot be written, it fails: {}", job, reason);
        producer.send(
                new ProducerRecord<>(
                        settings.jobsTopic(),
                        job.getBytes(StandardCharsets.UTF_8),
                        JobCommandJson.write(new JobCommand.Fail(job, reason))),
                (metadata, error) -> {
                    if (error != null) {
                        failed(
                                new IOException(
                                        "could not send the FAIL command of job "
                                                + job
                                                + " to "
                                                + settings.jobsTopic()
                                                + " ("
                                                + reason
                                                + "): "
                                                + error,
                                        error));
                    }
                });
    }

    /** The local channel of a chunk topic, opened on its first chunk. */
    private LocalChunkSender localChannel(String topic) throws IOException {
        LocalChunkSender channel = localChannels.get(topic);
        if (channel == null) {
            channel =
                    localOpener.open(
                            topic,
                            () -> post(() -> channelLost(topic), "sluice local channel loss"));
            localChannels.put(topic, channel);
        }
        return channel;
    }

    /**
     * Runs on the task thread after a channel's daemon went away: the chunks of the streams it
     * names are lost, not in flight, so they no longer hold this writer's share (a write waiting
     * for it re-checks after this mail); the scheduler computes their tasks again
     * (docs/generation.md, "Recovery").
     */
    private void channelLost(String topic) {
        LocalChunkSender channel = localChannels.get(topic);
        if (channel == null) {
            return;
        }
        localChannelLosses.inc();
        for (String key : channel.takeLostStreams()) {
            LOG.info(
                    "{}: the daemon went away; the chunks of stream {} sent through it are lost,"
                            + " {} bytes of them no longer in flight",
                    topic,
                    key,
                    accounting.bytesInFlight(key));
            accounting.forget(key);
        }
        updateGauges();
    }

    private int partition(Chunk chunk) throws IOException {
        String topic = ChunkRecords.topic(chunk.outputLocation());
        List<PartitionInfo> partitions;
        try {
            // The producer's metadata: a lookup in its cache once the topic is known.
            partitions = producer.partitionsFor(topic);
        } catch (TopicAuthorizationException e) {
            throw e;
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
        String job = chunk.job();
        return (metadata, error) -> {
            if (error == null) {
                return;
            }
            sendErrors.inc();
            IOException failure =
                    ChunkProducerSettings.sendFailure(
                            name, topic, partition, error, CHUNK_SIZE_SETTING);
            if (poisonsItsJob(error)) {
                post(() -> jobCannotBeWritten(job, failure.getMessage()), "sluice job failure");
            } else {
                failed(failure);
            }
        };
    }

    /**
     * Whether a send failed for what the job asks, which no restart would change: a record larger
     * than its topic takes, or a topic the writer may not write.
     */
    private static boolean poisonsItsJob(Exception error) {
        return error instanceof RecordTooLargeException
                || error instanceof TopicAuthorizationException
                || error instanceof InvalidTopicException;
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

    /**
     * Waits until the broker acknowledged every chunk sent; fails if one was not. A local chunk
     * needs no wait: it is in shared memory once {@code send} returned, and if its daemon goes away
     * before delivering it, the generation scheduler's recovery computes it again
     * (docs/generation.md, "Recovery").
     */
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
        // Closing a channel closes its segment: the daemon takes what was published in it.
        for (Map.Entry<String, LocalChunkSender> channel : localChannels.entrySet()) {
            try {
                channel.getValue().close();
            } catch (IOException | RuntimeException e) {
                LOG.warn("could not close the local chunk channel of {}: {}", channel.getKey(), e);
            }
        }
        localChannels.clear();
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
    long localChunksToKafka() {
        return localChunksToKafka.getCount();
    }

    @VisibleForTesting
    long chunksOfFailedJobs() {
        return chunksOfFailedJobs.getCount();
    }

    @VisibleForTesting
    long localChannelLosses() {
        return localChannelLosses.getCount();
    }

    @VisibleForTesting
    long progressApplied() {
        return progressApplied;
    }
}
