package dev.sluice.client.write;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.ProgressListener;
import dev.sluice.client.read.StreamReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a stream of a job from any program, outside Flink: the bytes given to {@link
 * #publish(byte[])} are cut into chunks, numbered, and sent as chunk records (docs/formats.md,
 * "Chunk record") to the chunk topic of the stream's output location, where the daemon puts them in
 * order for the stream's {@link StreamReader}s; {@link #close()} ends the stream. See
 * docs/stream-writer.md.
 *
 * <pre>{@code
 * try (StreamWriter writer = StreamWriter.builder("kafka-1:9092", "job-1", "cyan")
 *         .outputLocation("printer-1")
 *         .open()) {
 *     writer.publish(bytes);
 * }
 * }</pre>
 *
 * <p>Two kinds of stream. {@link #forJob} writes a sized stream of a {@link JobSpec}, alone or as
 * one of several writers that each own a disjoint share of its tasks, numbered as the generation's
 * producers number them; {@link #builder} writes an unbounded stream with one writer, which its
 * close ends.
 *
 * <p>Bytes in flight (sent, not yet delivered by the stream's readers, as they report on the
 * progress topic) are bounded, with the accounting of the Flink sink ({@link InFlightAccounting}):
 * a publish that finds no room waits until the readers move.
 *
 * <p>One thread publishes; the progress listener's thread and the producer's only wake it.
 */
@PublicEvolving
public final class StreamWriter implements AutoCloseable {
    /** What makes the chunks smaller, for the messages of a chunk too large. */
    static final String CHUNK_SIZE_SETTING =
            "the chunk size (chunkSize, or the job's chunkSizeBytes)";

    private static final Logger LOG = LoggerFactory.getLogger(StreamWriter.class);

    // How often the progress listener looks for new partitions of the progress topic: as the sink.
    private static final Duration PROGRESS_PARTITION_REFRESH = Duration.ofSeconds(30);
    // How long a publish waits for room before it logs that it waits, and for whom; then again
    // after twice as long each time. A paced reader frees room within its pace: a wait this long
    // is a reader that stopped, or one that reports no delivery progress.
    private static final long WAIT_NOTICE_NANOS = Duration.ofSeconds(10).toNanos();

    private final String job;
    private final String stream;
    private final String topic;
    private final String destination;
    private final String key;
    private final String shareName;
    private final ChunkNumbering numbering;
    private final Producer<byte[], byte[]> producer;
    private final ProgressListener listener;
    private final InFlightAccounting accounting;
    private final String progressTopic;
    private final ReentrantLock lock = new ReentrantLock();
    // Signalled when progress frees room, and when a send or the listener fails.
    private final Condition changed = lock.newCondition();
    private final AtomicReference<IOException> failure = new AtomicReference<>();

    private byte[] chunk;
    private int filled;
    private long taken;
    private volatile boolean closed;

    StreamWriter(
            String job,
            String stream,
            String topic,
            String destination,
            String shareName,
            ChunkNumbering numbering,
            long inFlightBytes,
            Producer<byte[], byte[]> producer,
            Consumer<byte[], byte[]> progressConsumer,
            String progressTopic)
            throws IOException {
        this.job = job;
        this.stream = stream;
        this.topic = topic;
        this.destination = destination;
        this.key = InFlightAccounting.key(job, stream);
        this.shareName = shareName;
        this.numbering = numbering;
        this.producer = producer;
        this.accounting = new InFlightAccounting(inFlightBytes);
        this.progressTopic = progressTopic;
        this.listener =
                new ProgressListener(
                        progressConsumer,
                        progressTopic,
                        PROGRESS_PARTITION_REFRESH,
                        this::progressArrived,
                        this::progressFailed,
                        "sluice-writer-progress-" + key);
        try {
            listener.start();
        } catch (IOException | RuntimeException e) {
            try {
                listener.close();
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
            } finally {
                producer.close(Duration.ZERO);
            }
            throw e;
        }
    }

    /**
     * A writer of the sized stream {@code stream} of {@code job}: the chunk size, task size, stream
     * size and output location come from the spec. Alone unless {@link
     * StreamWriterBuilder#share(int, int)} makes it one of several.
     *
     * @param bootstrapServers the Kafka cluster, {@code host:port[,...]}
     */
    public static StreamWriterBuilder forJob(String bootstrapServers, JobSpec job, String stream) {
        return new StreamWriterBuilder(
                bootstrapServers, Objects.requireNonNull(job, "job"), stream);
    }

    /**
     * A writer of the unbounded stream {@code stream} of {@code job}: give it an output location
     * (or a topic); {@link #close()} ends the stream.
     *
     * @param bootstrapServers the Kafka cluster, {@code host:port[,...]}
     */
    public static StreamWriterBuilder builder(String bootstrapServers, String job, String stream) {
        return new StreamWriterBuilder(bootstrapServers, job, stream);
    }

    /**
     * Appends {@code bytes} to the stream: the chunks they complete are sent, each once there is
     * room in flight for it, waiting for the readers' progress as long as it takes.
     *
     * @throws IllegalStateException if the writer is closed
     * @throws IllegalArgumentException if the bytes go beyond this writer's share of a sized
     *     stream; nothing of them is taken
     * @throws IOException if an earlier chunk could not be sent (it is named), or the progress
     *     listener failed
     * @throws InterruptedException if interrupted while waiting for room: the bytes copied so far
     *     are taken ({@link #bytesWritten()} says how many), the chunk that waited goes with the
     *     next publish or the close
     */
    public void publish(byte[] bytes) throws IOException, InterruptedException {
        publish(ByteBuffer.wrap(bytes));
    }

    /**
     * Appends the remaining bytes of {@code bytes} to the stream, as {@link #publish(byte[])}; the
     * buffer's position moves past what was taken.
     */
    public void publish(ByteBuffer bytes) throws IOException, InterruptedException {
        checkTakes(bytes.remaining());
        while (bytes.hasRemaining()) {
            append(bytes, true);
        }
    }

    /**
     * Appends {@code bytes} if there is room in flight for the chunks they complete within {@code
     * timeout}: all of them are taken, or none (false: nothing taken, nothing sent). Bytes whose
     * chunks are more than the in-flight bound are taken once nothing is in flight.
     */
    public boolean publish(byte[] bytes, Duration timeout)
            throws IOException, InterruptedException {
        return publish(ByteBuffer.wrap(bytes), timeout);
    }

    /**
     * Appends the remaining bytes of {@code bytes} as {@link #publish(byte[], Duration)}: all of
     * them (the position moves to the limit) or none (the position stays).
     */
    public boolean publish(ByteBuffer bytes, Duration timeout)
            throws IOException, InterruptedException {
        checkTakes(bytes.remaining());
        long sent = numbering.bytesSentBy(filled, bytes.remaining());
        if (sent > 0 && !awaitRoom(sent, System.nanoTime() + timeout.toNanos())) {
            return false;
        }
        while (bytes.hasRemaining()) {
            append(bytes, false);
        }
        return true;
    }

    /** Copies bytes into the chunk being filled, and sends the chunk when it is known complete. */
    private void append(ByteBuffer bytes, boolean waitForRoom)
            throws IOException, InterruptedException {
        if (chunk != null && filled == chunk.length) {
            // An unbounded stream's full chunk waits for a byte after it: it is not the last. (A
            // sized stream's is sent at once, and still here only if its wait was interrupted.)
            send(numbering.eos(), waitForRoom);
        }
        if (chunk == null) {
            chunk = new byte[numbering.length()];
        }
        int n = Math.min(bytes.remaining(), chunk.length - filled);
        bytes.get(chunk, filled, n);
        filled += n;
        taken += n;
        if (numbering.isSized() && filled == chunk.length) {
            send(numbering.eos(), waitForRoom);
        }
    }

    /** Sends the chunk being filled, as far as it is filled, and moves to the next. */
    private void send(boolean eos, boolean waitForRoom) throws IOException, InterruptedException {
        long seq = numbering.seq();
        byte[] payload = filled == chunk.length ? chunk : Arrays.copyOf(chunk, filled);
        if (waitForRoom) {
            awaitRoom(payload.length, Long.MAX_VALUE);
        }
        int partition = partition(seq);
        ProducerRecord<byte[], byte[]> record =
                ChunkRecords.record(topic, partition, job, stream, seq, eos, payload);
        lock.lock();
        try {
            accounting.written(key, seq, payload.length);
        } finally {
            lock.unlock();
        }
        producer.send(record, callback(describe(seq, eos, payload.length), partition));
        chunk = null;
        filled = 0;
        numbering.advance();
    }

    /**
     * Waits until {@code bytes} of chunks from the one being filled fit in flight ({@link
     * InFlightAccounting#admits}), or the deadline ({@link System#nanoTime()}) passed: false then.
     */
    private boolean awaitRoom(long bytes, long deadline) throws IOException, InterruptedException {
        long seq = numbering.seq();
        long start = System.nanoTime();
        long notice = WAIT_NOTICE_NANOS;
        lock.lock();
        try {
            while (!accounting.admits(key, seq, bytes)) {
                checkFailure();
                long now = System.nanoTime();
                if (deadline != Long.MAX_VALUE && deadline - now <= 0) {
                    return false;
                }
                if (now - start >= notice) {
                    LOG.warn(roomWait(now - start));
                    notice *= 2;
                }
                long untilNotice = start + notice - now;
                changed.awaitNanos(
                        deadline == Long.MAX_VALUE
                                ? untilNotice
                                : Math.min(untilNotice, deadline - now));
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * What a publish that has waited {@code waitedNanos} for room says: the chunk, the bytes in
     * flight, and whom it waits for, the readers' delivery progress on the progress topic.
     */
    String roomWait(long waitedNanos) {
        lock.lock();
        try {
            long delivered = accounting.deliveredSeq(key);
            return "stream "
                    + key
                    + " has waited "
                    + TimeUnit.NANOSECONDS.toSeconds(waitedNanos)
                    + " s to send chunk #"
                    + numbering.seq()
                    + ": "
                    + accounting.bytesInFlight(key)
                    + " bytes of it are in flight, its bound is "
                    + accounting.share()
                    + " (inFlightBytes), and "
                    + (delivered < 0
                            ? "nothing of it has been reported delivered on the progress topic "
                                    + progressTopic
                                    + ": its readers have read none of it, or do not report their"
                                    + " delivery progress there (a Java StreamReader reports it"
                                    + " given bootstrapServers, a Python StreamReader given"
                                    + " bootstrap_servers)"
                            : "its readers have reported delivering it up to #"
                                    + delivered
                                    + " on "
                                    + progressTopic
                                    + ": they read no further");
        } finally {
            lock.unlock();
        }
    }

    private int partition(long seq) throws IOException {
        List<PartitionInfo> partitions;
        try {
            // The producer's metadata: a lookup in its cache once the topic is known.
            partitions = producer.partitionsFor(topic);
        } catch (KafkaException e) {
            throw new IOException(
                    "stream " + key + ": no partitions of its topic " + topic + ": " + e, e);
        }
        if (partitions == null || partitions.isEmpty()) {
            throw new IOException("stream " + key + ": its topic " + topic + " not found");
        }
        return ChunkRecords.spreadPartition(job, stream, seq, partitions.size());
    }

    private String describe(long seq, boolean eos, int length) {
        return ChunkRecords.describe(job, stream, destination, seq, eos, length);
    }

    private Callback callback(String chunkName, int partition) {
        return (metadata, error) -> {
            if (error != null) {
                failed(
                        ChunkProducerSettings.sendFailure(
                                chunkName, topic, partition, error, CHUNK_SIZE_SETTING));
            }
        };
    }

    /**
     * Runs on the listener's thread: applies this stream's progress and wakes a waiting publish.
     */
    private void progressArrived(List<DeliveryProgress> batch) {
        lock.lock();
        try {
            for (DeliveryProgress progress : batch) {
                // The progress topic carries every stream's; the accounting follows this one.
                if (progress.key().equals(key)) {
                    accounting.progress(progress);
                }
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void progressFailed(Exception error) {
        failed(
                new IOException(
                        "stream "
                                + key
                                + ": the delivery progress consumer failed, so bytes in flight"
                                + " cannot be bounded: "
                                + error,
                        error));
    }

    private void failed(IOException error) {
        if (failure.compareAndSet(null, error)) {
            lock.lock();
            try {
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    private void checkFailure() throws IOException {
        IOException error = failure.get();
        if (error != null) {
            throw new IOException(error.getMessage(), error);
        }
    }

    private void checkTakes(long bytes) throws IOException {
        if (closed) {
            throw new IllegalStateException("stream " + key + " is closed");
        }
        checkFailure();
        if (taken + bytes > numbering.shareBytes()) {
            throw new IllegalArgumentException(
                    "stream "
                            + key
                            + ": "
                            + bytes
                            + " more bytes after "
                            + taken
                            + " go beyond "
                            + shareName
                            + " of "
                            + numbering.shareBytes()
                            + " bytes; none of them was taken");
        }
    }

    /**
     * Waits until the broker acknowledged every chunk sent. The last chunk of an unbounded stream
     * is not sent before {@link #close()} or more bytes: it may be the stream's end.
     *
     * @throws IOException naming the chunk if one could not be sent
     */
    public void flush() throws IOException {
        if (closed) {
            throw new IllegalStateException("stream " + key + " is closed");
        }
        producer.flush();
        checkFailure();
    }

    /**
     * Ends the stream and closes the writer. An unbounded stream's last chunk goes with {@code eos}
     * (an empty chunk when nothing was published), once there is room in flight for it; then every
     * chunk is acknowledged. A share of a sized stream has sent its chunks, the end with the last
     * task's; its close checks that every byte of the share was published. A second close does
     * nothing.
     *
     * @throws IllegalStateException if a share of a sized stream was not written whole, naming the
     *     bytes written and expected; what was written is sent, a part chunk included
     * @throws IOException naming the chunk if one could not be sent
     * @throws InterruptedException if interrupted while the last chunk waits for room: the stream
     *     is then not ended
     */
    @Override
    public void close() throws IOException, InterruptedException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            checkFailure();
            if (!numbering.isSized()) {
                if (chunk == null) {
                    chunk = new byte[0];
                }
                send(true, true);
            } else if (filled > 0) {
                // A part chunk of a share not written whole is sent too: nothing taken is lost.
                send(filled == chunk.length && numbering.eos(), true);
            }
            producer.flush();
            checkFailure();
            if (numbering.isSized() && taken != numbering.shareBytes()) {
                throw new IllegalStateException(
                        "stream "
                                + key
                                + ": "
                                + shareName
                                + " is "
                                + numbering.shareBytes()
                                + " bytes, "
                                + taken
                                + " were written (and sent): the stream misses the rest, from"
                                + " seq "
                                + numbering.seq()
                                + "; publish all of the share before closing");
            }
        } finally {
            try {
                listener.close();
            } finally {
                producer.close(Duration.ZERO);
            }
        }
    }

    public boolean isClosed() {
        return closed;
    }

    public String job() {
        return job;
    }

    public String stream() {
        return stream;
    }

    /** The chunk topic the writer sends to. */
    public String topic() {
        return topic;
    }

    /** The bytes published so far (taken into chunks, sent or being filled). */
    public long bytesWritten() {
        return taken;
    }

    /**
     * The bytes this writer writes in all: its share of a sized stream, {@link Long#MAX_VALUE} for
     * an unbounded one.
     */
    public long shareBytes() {
        return numbering.shareBytes();
    }

    /** The writer's bytes sent and not yet delivered to the stream's readers. */
    public long bytesInFlight() {
        lock.lock();
        try {
            return accounting.bytesInFlight(key);
        } finally {
            lock.unlock();
        }
    }

    /** The bound on {@link #bytesInFlight()}. */
    public long inFlightBytesLimit() {
        return accounting.share();
    }
}
