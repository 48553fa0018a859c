package dev.sluice.client.write;

import dev.sluice.client.Limits;
import dev.sluice.client.annotation.Internal;
import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.brokerd.BrokerdException;
import dev.sluice.client.brokerd.LocalProducerRegistration;
import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.protocol.ErrorCode;
import dev.sluice.client.segment.ChunksBatchEncoder;
import dev.sluice.client.segment.ObjectKind;
import dev.sluice.client.segment.SegmentException;
import dev.sluice.client.segment.SegmentWriter;
import dev.sluice.client.segment.WritableSlot;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local way of one chunk topic (docs/generation.md, "Transports"): chunks go into a
 * shared-memory segment of this process, the <em>producer segment</em>, which this host's {@code
 * sluice-brokerd} reads after PRODUCE (docs/formats.md, "PRODUCE") and merges into the topic's
 * CHUNK_STREAMS subscriptions, beside the chunks it fetches from Kafka.
 *
 * <p>Each chunk is one CHUNKS object in one slot. {@link #send} blocks while the daemon holds every
 * slot: that is its backpressure (a subscription's reorder window is full). It publishes only while
 * the daemon's lane is attached: an object published with no reader attached would reach nobody. A
 * slot fits the largest chunk sent so far; a larger one replaces the segment by one with slots of
 * at least twice the size (tmpfs gives a slot's pages only when they are written, so the headroom
 * costs address space, not memory, and a stream of growing chunks replaces the segment a
 * logarithmic number of times): the old segment is closed, the daemon takes what was published in
 * it, and the new one is produced.
 *
 * <p>A chunk in shared memory is not in Kafka: when the daemon goes away (its control connection
 * ends, its lane is gone, it is shutting down), the chunks it had not yet delivered are lost. The
 * channel then records the streams it sent chunks of since it last connected ({@link
 * #takeLostStreams}) and calls {@code onLoss}; the scheduler computes their undelivered tasks again
 * once the readers, resubscribed, report so (docs/generation.md, "Recovery"). The channel connects
 * again on the next {@link #send}, not in the background: a new segment and PRODUCE, with backoff,
 * for up to {@link Settings#reconnectTimeout()}.
 *
 * <p>{@link #send} and {@link #close} are for one thread; {@link #takeLostStreams}, {@link
 * #chunksSent} and {@link #losses} may be called from any.
 */
@Internal
public final class LocalChunkChannel implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LocalChunkChannel.class);

    /** The name prefix of producer segments; the rest is random, so no stranger can predict it. */
    static final String SEGMENT_PREFIX = "sluice-produce-";

    /** The slot size of a channel's first segment, before a chunk asks for more. */
    static final long INITIAL_SLOT_SIZE = 64 << 10;

    // How long one wait for a slot lasts before the channel looks whether the daemon is still
    // there.
    private static final Duration CLAIM_STEP = Duration.ofMillis(100);
    private static final long MAX_BACKOFF_MILLIS = 1000;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final BrokerdClient brokerd;
    private final String topic;
    private final String outputLocation;
    private final Settings settings;
    private final Runnable onLoss;
    private final BufferAllocator allocator = new RootAllocator();
    private final ChunksBatchEncoder encoder = new ChunksBatchEncoder(allocator);
    private SegmentWriter writer;
    private long slotSize = INITIAL_SLOT_SIZE;
    private volatile long chunksSent;
    private boolean closed;

    // What the thread that sees the daemon go away shares with the sending thread.
    private final Object lock = new Object();
    private LocalProducerRegistration registration;
    private boolean outage;
    private final Set<String> sentSinceConnect = new HashSet<>();
    private final Set<String> lost = new LinkedHashSet<>();
    private long losses;

    /**
     * Where producer segments go (the daemon's {@code sluice.segment.dir}, the only folder PRODUCE
     * takes: docs/brokerd.md, "Local producers"), how many slots they have, how long a reconnection
     * may take.
     */
    public record Settings(Path segmentDir, int slotCount, Duration reconnectTimeout) {
        public static final Path DEFAULT_SEGMENT_DIR = Path.of("/dev/shm");
        public static final int DEFAULT_SLOT_COUNT = 8;
        public static final Duration DEFAULT_RECONNECT_TIMEOUT = Duration.ofSeconds(60);

        public Settings {
            Objects.requireNonNull(segmentDir, "segmentDir");
            Objects.requireNonNull(reconnectTimeout, "reconnectTimeout");
            if (!segmentDir.isAbsolute()) {
                throw new IllegalArgumentException(
                        "segmentDir "
                                + segmentDir
                                + ": not absolute; PRODUCE names the segment by its absolute path"
                                + " (docs/formats.md, \"PRODUCE\")");
            }
            if (!Limits.isSlotCount(slotCount)) {
                throw new IllegalArgumentException(
                        "slotCount " + slotCount + ": 1 to " + Limits.MAX_SLOTS);
            }
            if (reconnectTimeout.isNegative() || reconnectTimeout.isZero()) {
                throw new IllegalArgumentException(
                        "reconnectTimeout " + reconnectTimeout + ": must be positive");
            }
        }

        /** {@code /dev/shm}, 8 slots, 60 s. */
        public static Settings defaults() {
            return new Settings(DEFAULT_SEGMENT_DIR, DEFAULT_SLOT_COUNT, DEFAULT_RECONNECT_TIMEOUT);
        }
    }

    private LocalChunkChannel(
            BrokerdClient brokerd, String topic, Settings settings, Runnable onLoss) {
        this.brokerd = brokerd;
        this.topic = topic;
        this.outputLocation = topic.substring(ChunkTopics.PREFIX.length());
        this.settings = settings;
        this.onLoss = onLoss;
    }

    /**
     * Creates the first producer segment and hands it to the daemon: one attempt, so that a wrong
     * socket or a topic not granted fails at once.
     *
     * @param topic the chunk topic, {@code sluice.chunks.<outputLocation>}
     * @param onLoss called, from any thread, each time the daemon went away: then {@link
     *     #takeLostStreams} names the streams whose chunks may be lost
     * @throws BrokerdException when the daemon refuses the segment (NOT_AUTHORIZED, BAD_REQUEST)
     * @throws IOException when the segment cannot be created or the daemon not reached
     */
    public static LocalChunkChannel open(
            BrokerdClient brokerd, String topic, Settings settings, Runnable onLoss)
            throws IOException {
        Objects.requireNonNull(brokerd, "brokerd");
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(onLoss, "onLoss");
        checkTopic(topic);
        LocalChunkChannel channel = new LocalChunkChannel(brokerd, topic, settings, onLoss);
        try {
            channel.produceNewSegment();
        } catch (DaemonUnreachable e) {
            channel.close();
            throw new IOException(
                    "cannot hand a producer segment of "
                            + topic
                            + " to sluice-brokerd at "
                            + brokerd.socket()
                            + ": "
                            + e.getCause().getMessage(),
                    e.getCause());
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        return channel;
    }

    static void checkTopic(String topic) {
        Objects.requireNonNull(topic, "topic");
        if (!topic.startsWith(ChunkTopics.PREFIX)
                || !Limits.isName(topic.substring(ChunkTopics.PREFIX.length()))) {
            throw new IllegalArgumentException(
                    "topic '"
                            + topic
                            + "': not a chunk topic, "
                            + ChunkTopics.PREFIX
                            + "<outputLocation> (docs/formats.md, \"Chunk topics\")");
        }
    }

    /**
     * Writes one chunk into the producer segment, waiting while the daemon holds every slot. Once
     * it returns, the chunk is in shared memory and the daemon's to deliver; connecting again first
     * if the daemon went away since the last chunk.
     *
     * @throws IllegalArgumentException if the job or stream is not a name
     * @throws IOException if the daemon did not come back within the reconnect timeout (naming the
     *     socket, the topic and the timeout), or refused the new segment
     */
    public void send(String job, String stream, long seq, boolean eos, byte[] payload)
            throws IOException, InterruptedException {
        if (closed) {
            throw new IllegalStateException("the local chunk channel of " + topic + " is closed");
        }
        ChunkRecords.checkNames(job, stream, outputLocation, seq);
        Objects.requireNonNull(payload, "payload");
        String key = InFlightAccounting.key(job, stream);
        encoder.addReferenced(job, stream, seq, eos, payload);
        try {
            publish(
                    key,
                    ChunkRecords.describe(job, stream, outputLocation, seq, eos, payload.length));
        } finally {
            encoder.clear();
        }
        chunksSent++;
    }

    private void publish(String key, String chunk) throws IOException, InterruptedException {
        while (true) {
            if (!isServed()) {
                reconnect();
            }
            WritableSlot slot = claimWhileServed();
            if (slot == null) {
                continue;
            }
            int length;
            try {
                length = encoder.writeTo(slot);
            } catch (SegmentException e) {
                writer.abandon(slot);
                grow(e, chunk);
                continue;
            } catch (IOException | RuntimeException e) {
                writer.abandon(slot);
                throw e;
            }
            if (writer.attachedReaders() == 0) {
                // The daemon left the segment while its connection lives on: it published to no
                // one from here (docs/formats.md, "Attaching, leaving, liveness").
                writer.abandon(slot);
                lose(registration(), "the daemon's lane in " + writer.path() + " is gone");
                continue;
            }
            synchronized (lock) {
                if (outage) {
                    writer.abandon(slot);
                    continue;
                }
                sentSinceConnect.add(key);
            }
            writer.publish(slot, length, 1, -1, -1, -1);
            return;
        }
    }

    /** A free slot, or null once the daemon went away while it held every slot. */
    private WritableSlot claimWhileServed() throws IOException, InterruptedException {
        while (isServed()) {
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while waiting for a slot of " + topic);
            }
            WritableSlot slot = writer.claim(CLAIM_STEP);
            if (slot != null) {
                return slot;
            }
            if (writer.attachedReaders() == 0) {
                lose(registration(), "the daemon's lane in " + writer.path() + " is gone");
            }
        }
        return null;
    }

    /** The chunk did not fit in a slot: replaces the segment by one whose slots fit it. */
    private void grow(SegmentException tooLarge, String chunk)
            throws IOException, InterruptedException {
        long encoded = encodedSize(encoder.root());
        if (encoded <= slotSize) {
            throw tooLarge;
        }
        long larger = slotSizeFor(encoded, slotSize);
        if (larger < 0) {
            throw new IOException(
                    "chunk "
                            + chunk
                            + " is "
                            + encoded
                            + " bytes as a CHUNKS object, more than a segment slot holds ("
                            + Limits.MAX_SLOT_SIZE
                            + "): send it through Kafka, or in smaller chunks");
        }
        LOG.info(
                "Chunk {} needs {} bytes: the producer segment of {} gets slots of {} bytes",
                chunk,
                encoded,
                topic,
                larger);
        slotSize = larger;
        reconnect();
    }

    /**
     * The slot size for an object of {@code encodedBytes} when slots now have {@code current}
     * bytes: a multiple of 64 that fits it, at least twice {@code current}, at most {@link
     * Limits#MAX_SLOT_SIZE}; -1 if no slot can hold it.
     */
    static long slotSizeFor(long encodedBytes, long current) {
        long fits = Math.max(Limits.MIN_SLOT_SIZE, (encodedBytes + 63) & ~63L);
        if (encodedBytes > Limits.MAX_SLOT_SIZE) {
            return -1;
        }
        return Math.max(fits, Math.min(Limits.MAX_SLOT_SIZE, current * 2));
    }

    /** The bytes the batch takes in a slot: its encapsulated IPC message, counted, not copied. */
    static long encodedSize(VectorSchemaRoot root) throws IOException {
        Counter counter = new Counter();
        try (ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
            MessageSerializer.serialize(new WriteChannel(counter), batch);
        }
        return counter.bytes;
    }

    /**
     * After the daemon went away (or between two segments): a new segment and PRODUCE, again and
     * again with backoff while the daemon cannot be reached or is shutting down, up to the
     * reconnect timeout. A refusal that would come again (NOT_AUTHORIZED, BAD_REQUEST) ends it at
     * once.
     */
    private void reconnect() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + settings.reconnectTimeout().toNanos();
        long backoffMillis = 10;
        boolean recovering;
        synchronized (lock) {
            recovering = outage;
        }
        while (true) {
            try {
                produceNewSegment();
                if (recovering) {
                    LOG.info(
                            "sluice-brokerd at {} reads the producer segment {} of {}",
                            brokerd.socket(),
                            writer.path(),
                            topic);
                }
                return;
            } catch (BrokerdException e) {
                if (e.code() != ErrorCode.SHUTTING_DOWN) {
                    throw e;
                }
                lose(null, e.getMessage());
                recovering = true;
                if (System.nanoTime() - deadline > 0) {
                    throw cameNotBack(e);
                }
            } catch (DaemonUnreachable e) {
                lose(null, e.getCause().toString());
                recovering = true;
                if (System.nanoTime() - deadline > 0) {
                    throw cameNotBack(e.getCause());
                }
            }
            // Waiting for a daemon to restart: nothing to wake on but time.
            Thread.sleep(backoffMillis);
            backoffMillis = Math.min(MAX_BACKOFF_MILLIS, backoffMillis * 2);
        }
    }

    private IOException cameNotBack(IOException last) {
        return new IOException(
                "sluice-brokerd at "
                        + brokerd.socket()
                        + " did not take a producer segment of "
                        + topic
                        + " within the reconnect timeout "
                        + settings.reconnectTimeout()
                        + " (LocalChunkChannel.Settings.reconnectTimeout): "
                        + last.getMessage(),
                last);
    }

    /**
     * Replaces the segment (if any) by a new one the daemon reads. Closing the old one is no loss:
     * the daemon takes what was published in it before it detaches, unless it went away, which the
     * next PRODUCE finds out.
     */
    private void produceNewSegment() throws IOException {
        LocalProducerRegistration old;
        synchronized (lock) {
            old = registration;
            // A registration the channel no longer holds ends without counting as a loss.
            registration = null;
        }
        closeSegment(old);
        Path path =
                settings.segmentDir()
                        .resolve(SEGMENT_PREFIX + HexFormat.of().formatHex(randomBytes()));
        try {
            writer =
                    SegmentWriter.builder(path)
                            .objectKind(ObjectKind.CHUNKS)
                            .slotCount(settings.slotCount())
                            .slotSize(slotSize)
                            // The daemon is the one reader.
                            .laneCount(1)
                            // A CRC pass on each side would cost more than the copy it checks, as
                            // for the daemon's own segments; the daemon validates every object.
                            .checksums(false)
                            .create();
        } catch (IOException e) {
            throw new IOException(
                    "cannot create the producer segment "
                            + path
                            + " of "
                            + topic
                            + " in LocalChunkChannel.Settings.segmentDir "
                            + settings.segmentDir()
                            + ": "
                            + e,
                    e);
        }
        LocalProducerRegistration produced;
        try {
            produced = brokerd.produce(topic, path);
        } catch (BrokerdException e) {
            closeSegment(null);
            throw e;
        } catch (IOException e) {
            closeSegment(null);
            throw new DaemonUnreachable(e);
        }
        synchronized (lock) {
            registration = produced;
            outage = false;
        }
        produced.ended().thenAccept(cause -> lose(produced, cause.getMessage()));
    }

    private static byte[] randomBytes() {
        byte[] random = new byte[8];
        RANDOM.nextBytes(random);
        return random;
    }

    /** Closes the writer (the daemon takes what was published), then the registration. */
    private void closeSegment(LocalProducerRegistration old) throws IOException {
        try {
            if (writer != null) {
                writer.close();
                writer = null;
            }
        } finally {
            if (old != null) {
                old.close();
            }
        }
    }

    private LocalProducerRegistration registration() {
        synchronized (lock) {
            return registration;
        }
    }

    private boolean isServed() {
        synchronized (lock) {
            return registration != null && !outage;
        }
    }

    /**
     * The daemon went away from {@code which} (null: from between two segments): the streams sent
     * since it connected are lost, once per outage. A registration the channel no longer holds was
     * closed on purpose.
     */
    private void lose(LocalProducerRegistration which, String reason) {
        int streams;
        synchronized (lock) {
            if (closed || which != registration || outage) {
                return;
            }
            outage = true;
            losses++;
            streams = sentSinceConnect.size();
            lost.addAll(sentSinceConnect);
            sentSinceConnect.clear();
        }
        LOG.warn(
                "sluice-brokerd at {} went away from the producer segment of {} ({}): the chunks of"
                        + " {} streams sent since it connected may be lost; their tasks are"
                        + " computed again (docs/generation.md, \"Recovery\")",
                brokerd.socket(),
                topic,
                reason,
                streams);
        onLoss.run();
    }

    /**
     * The streams ({@code job/stream}, as {@link InFlightAccounting#key}) whose chunks sent before
     * the daemon went away may be lost, and not told yet; empty if none.
     */
    public Set<String> takeLostStreams() {
        synchronized (lock) {
            Set<String> taken = Set.copyOf(lost);
            lost.clear();
            return taken;
        }
    }

    /** The chunks {@link #send} put into shared memory. */
    public long chunksSent() {
        return chunksSent;
    }

    /** How many times the daemon went away. */
    public long losses() {
        synchronized (lock) {
            return losses;
        }
    }

    /** The topic this channel produces to. */
    public String topic() {
        return topic;
    }

    /** Closes the segment (the daemon takes what was published in it) and the registration. */
    @Override
    public void close() throws IOException {
        LocalProducerRegistration last;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            last = registration;
            registration = null;
        }
        try {
            closeSegment(last);
        } finally {
            encoder.close();
            allocator.close();
        }
    }

    /** PRODUCE could not reach the daemon: worth another try, unlike a refusal. */
    private static final class DaemonUnreachable extends IOException {
        private static final long serialVersionUID = 1L;

        DaemonUnreachable(IOException cause) {
            super(cause);
        }

        @Override
        public synchronized IOException getCause() {
            return (IOException) super.getCause();
        }
    }

    /** Counts what is written to it, and keeps nothing. */
    private static final class Counter implements WritableByteChannel {
        long bytes;

        @Override
        public int write(ByteBuffer src) {
            int n = src.remaining();
            src.position(src.limit());
            bytes += n;
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {}
    }
}
