package dev.sluice.printing;

import dev.sluice.client.read.StreamChunk;
import dev.sluice.client.read.StreamReader;
import dev.sluice.client.read.StreamReaderStats;
import dev.sluice.client.read.StreamSilentException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The printer side of one colour channel: reads its stream to the end at the job's constant speed,
 * as a print head consumes rows, checking that chunks come in {@code seq} order, each once, and
 * that the stream has exactly the raster's length. It digests the bytes as they come and keeps the
 * raster for the PNG. The demo's channels and the cluster's print heads read with it.
 */
public final class ChannelReceiver implements Callable<ChannelReceiver.Result> {
    private static final Logger LOG = LoggerFactory.getLogger(ChannelReceiver.class);

    private static final Duration POLL = Duration.ofMillis(200);

    /** What one channel received. */
    public record Result(
            Channel channel,
            byte[] raster,
            long chunks,
            byte[] sha256,
            StreamReaderStats stats,
            long firstChunkNanos,
            long lastChunkNanos) {}

    private final Channel channel;
    private final StreamReader reader;
    private final byte[] raster;
    private final AtomicLong received = new AtomicLong();
    private final Duration timeout;

    public ChannelReceiver(
            Channel channel, StreamReader reader, long rasterBytes, Duration timeout) {
        this.channel = channel;
        this.reader = reader;
        this.raster = new byte[Math.toIntExact(rasterBytes)];
        this.timeout = timeout;
    }

    /** Bytes received so far; read by the progress bar from another thread. */
    public long received() {
        return received.get();
    }

    @Override
    public Result call() throws Exception {
        MessageDigest digest = sha256();
        long nextSeq = 0;
        long first = 0;
        long deadline = System.nanoTime() + timeout.toNanos();
        StreamReaderStats stats;
        try (reader) {
            while (!reader.isEndOfStream()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            channel.streamName()
                                    + ": no end of stream after "
                                    + timeout.toSeconds()
                                    + " s, "
                                    + received.get()
                                    + " of "
                                    + raster.length
                                    + " bytes received");
                }
                try (StreamChunk chunk = reader.acquire(POLL)) {
                    if (chunk == null) {
                        continue;
                    }
                    if (chunk.seq() != nextSeq) {
                        throw new IllegalStateException(
                                channel.streamName()
                                        + ": chunk "
                                        + chunk.seq()
                                        + " came where "
                                        + nextSeq
                                        + " was due");
                    }
                    if (nextSeq++ == 0) {
                        first = System.nanoTime();
                    }
                    accept(chunk.payload(), digest);
                } catch (StreamSilentException silent) {
                    // A producer may be lost: the scheduler computes its tasks again, and the
                    // print head waits on for them, up to its own timeout.
                    LOG.warn("{}", silent.getMessage());
                }
            }
            stats = reader.stats();
        }
        if (received.get() != raster.length) {
            throw new IllegalStateException(
                    channel.streamName()
                            + ": the stream ended after "
                            + received.get()
                            + " bytes, the raster has "
                            + raster.length);
        }
        return new Result(
                channel, raster, nextSeq, digest.digest(), stats, first, System.nanoTime());
    }

    private void accept(ByteBuffer payload, MessageDigest digest) {
        int at = (int) received.get();
        int length = payload.remaining();
        if (length > raster.length - at) {
            throw new IllegalStateException(
                    channel.streamName()
                            + ": "
                            + (at + length)
                            + " bytes received, more than the raster's "
                            + raster.length);
        }
        payload.get(raster, at, length);
        digest.update(raster, at, length);
        received.addAndGet(length);
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
