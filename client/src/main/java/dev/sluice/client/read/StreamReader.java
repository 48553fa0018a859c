package dev.sluice.client.read;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.ProgressReporter;
import dev.sluice.client.time.NanoClock;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.producer.Producer;

/**
 * Reads one stream of a job on its output-location node, through the node's {@code sluice-brokerd}:
 * the stream's chunks in {@code seq} order, each once, zero-copy from shared memory, up to the end
 * of the stream.
 *
 * <pre>{@code
 * BrokerdClient brokerd = BrokerdClient.builder(Path.of("/run/sluice/brokerd.sock")).build();
 * try (StreamReader reader =
 *         StreamReader.builder(brokerd, jobSpec, "cyan")   // topic and rate from the job
 *                 .bootstrapServers("kafka-1:9092")         // partitions; delivery progress
 *                 .open()) {
 *     while (!reader.isEndOfStream()) {
 *         try (StreamChunk chunk = reader.acquire(Duration.ofSeconds(1))) {
 *             if (chunk != null) {
 *                 printer.write(chunk.payload());           // in place, until released
 *             }
 *         }
 *     }
 *     log.info("starved {} times", reader.stats().starvationEvents());
 * }
 * }</pre>
 *
 * <p><b>Chunks.</b> {@link #acquire} hands out one {@link StreamChunk} at a time; its payload is
 * the slot's memory, valid until {@link StreamChunk#release()}, which gives the slot back to the
 * daemon (that is the backpressure: a reader that holds on stops the daemon, which stops fetching).
 * After the last chunk ({@link StreamChunk#isEndOfStream()}) {@link #isEndOfStream()} is true, the
 * subscription is given back, and {@code acquire} returns null at once.
 *
 * <p><b>Gaps.</b> When the stream's next chunks are missing at the daemon past its {@code
 * sluice.gap.timeout.ms} (a producer lost them, or is that late), the daemon reports the hole once
 * (STREAM_GAP, docs/formats.md), and {@link #acquire} throws a {@link StreamGapException} naming
 * the job, the stream, the missing seqs and how long the daemon waited, once, when this reader has
 * got to the hole. The reader stays usable: {@code acquire} again waits on for the missing chunks,
 * which arrive in order if a producer writes them; whether to wait, alert or give up (close) is the
 * application's call. Every reader of a shared stream is told, as each one waits at the hole;
 * readers of other streams are not. {@link StreamReaderStats#gapsReported()} counts the holes told
 * and {@link StreamReaderStats#currentGap()} names the one still open.
 *
 * <p><b>Constant speed.</b> With a rate ({@link StreamReaderBuilder#pacing}, or the job's), chunk
 * {@code k + 1} is handed out no earlier than {@code size(k) / rate} seconds after chunk {@code k},
 * on an absolute schedule started by the first chunk; the reader waits parked ({@code
 * LockSupport.parkNanos}), never spinning. A chunk that is not there at its due time is a
 * <i>starvation event</i> (docs/stream-reader.md, "Constant speed"): it is counted in {@link
 * #stats()}, with how late it came, and the schedule goes on from when it came rather than rushing
 * to catch up. Each chunk's lateness, its handout past its due time, is reported as p50, p99 and
 * max; the first chunk waits a start delay, by default one task of the stream at its rate when
 * built from a job spec (docs/stream-reader.md, "Start delay").
 *
 * <p><b>Sharing a stream.</b> {@code share(i, n)} makes this reader one of {@code n}: it gets the
 * chunks whose {@code seq % n == i}, and still sees the end of the stream when the last chunk is
 * another reader's. Each reader thus gets ⌊S/n⌋ or ⌈S/n⌉ of the stream's S chunks, whoever polls
 * first or fastest: handing elements to whichever reader asks first is not fair
 * (docs/stream-reader.md, "Several readers on one stream"); here the share is fixed by {@code seq}
 * before anyone asks. The price: every reader's daemon subscription receives the whole stream and
 * passes over the chunks that are not its own (in shared memory, without copying them), so sharing
 * is for spreading the <i>processing</i> of a stream over several readers, not its transfer.
 *
 * <p><b>Delivery progress.</b> With {@link StreamReaderBuilder#bootstrapServers}, the reader
 * publishes its {@link DeliveryProgress} on the progress topic (default {@value
 * DeliveryProgress#DEFAULT_TOPIC}), at most every {@link StreamReaderBuilder#progressInterval} (100
 * ms), sooner when a generation task was delivered, and at once at the end of the stream, so the
 * generation side can bound the bytes it has in flight; also at once after its daemon subscription
 * was renewed, with {@link DeliveryProgress#resubscribed()} set, so that the scheduler computes
 * again the chunks a local producer handed the daemon that were lost with it
 * (docs/stream-reader.md, "Delivery progress").
 *
 * <p>Not thread-safe: one thread acquires and releases. {@link #stats()} may be called from any
 * thread.
 */
@PublicEvolving
public final class StreamReader implements AutoCloseable {
    private final String job;
    private final String stream;
    private final String topic;
    private final int readerIndex;
    private final int readerCount;
    private final ChunkDelivery delivery;
    private final ProgressReporter reporter;
    private boolean closed;

    StreamReader(
            String job,
            String stream,
            String topic,
            int readerIndex,
            int readerCount,
            ChunkSource source,
            long rate,
            long startDelayNanos,
            long silenceNanos,
            ProgressReporter reporter) {
        this.job = job;
        this.stream = stream;
        this.topic = topic;
        this.readerIndex = readerIndex;
        this.readerCount = readerCount;
        this.reporter = reporter;
        this.delivery =
                new ChunkDelivery(
                        job,
                        stream,
                        source,
                        NanoClock.SYSTEM,
                        rate,
                        startDelayNanos,
                        silenceNanos,
                        readerIndex,
                        readerCount,
                        reporter == null ? progress -> {} : reporter::update);
    }

    /** A reader of {@code job}'s stream {@code stream}; give it a topic or a job spec. */
    public static StreamReaderBuilder builder(BrokerdClient brokerd, String job, String stream) {
        return new StreamReaderBuilder(brokerd, job, stream);
    }

    /**
     * A reader of a stream of {@code job}, which gives the topic (its output location's, {@link
     * ChunkTopics}), the slot size (from the chunk size) and, if the stream has one, the pacing
     * rate.
     */
    public static StreamReaderBuilder builder(BrokerdClient brokerd, JobSpec job, String stream) {
        return new StreamReaderBuilder(brokerd, Objects.requireNonNull(job, "job").id(), stream)
                .job(job);
    }

    /**
     * A delivery-progress producer configured as a reader's own ({@link
     * StreamReaderBuilder#bootstrapServers}, with {@code kafkaProperties} as {@link
     * StreamReaderBuilder#kafkaProperty}), for an application that reads job after job to share
     * among its readers ({@link StreamReaderBuilder#progressProducer}) and close after the last.
     */
    public static Producer<byte[], byte[]> newProgressProducer(
            String bootstrapServers, Map<String, String> kafkaProperties) {
        return StreamReaderBuilder.newProgressProducer(
                Objects.requireNonNull(bootstrapServers, "bootstrapServers"), kafkaProperties);
    }

    /**
     * This reader's next chunk, once it is due when paced: waits up to {@code timeout}, then
     * returns null. Null at once after the end of the stream.
     *
     * @throws IllegalStateException if the previous chunk was not released, or the reader is closed
     * @throws StreamGapException once per hole the daemon reported in the stream, when this reader
     *     has got to it; the reader stays usable, and acquiring again waits on for the missing
     *     chunks
     * @throws IOException if the daemon ended the subscription for good ({@link
     *     dev.sluice.client.brokerd.BrokerdException}) or the stream broke its order
     */
    public StreamChunk acquire(Duration timeout) throws IOException {
        return delivery.acquire(timeout.toNanos());
    }

    /** Whether the end of the stream was reached: no chunk will come anymore. */
    public boolean isEndOfStream() {
        return delivery.isEndOfStream();
    }

    /** The delivery so far; callable from any thread. */
    public StreamReaderStats stats() {
        return delivery.stats(
                reporter == null ? 0 : reporter.sent(), reporter == null ? 0 : reporter.failures());
    }

    /** The delivery progress now, as the progress topic gets it. */
    public DeliveryProgress progress() {
        return delivery.progress();
    }

    public String job() {
        return job;
    }

    public String stream() {
        return stream;
    }

    /** The chunk topic read. */
    public String topic() {
        return topic;
    }

    public int readerIndex() {
        return readerIndex;
    }

    public int readerCount() {
        return readerCount;
    }

    public boolean isClosed() {
        return closed;
    }

    /**
     * Gives the subscription back (a chunk still held is released with it) and publishes the last
     * delivery progress. Idempotent.
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            delivery.close();
        } finally {
            if (reporter != null) {
                reporter.close();
            }
        }
    }
}
