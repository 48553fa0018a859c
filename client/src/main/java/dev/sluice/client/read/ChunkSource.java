package dev.sluice.client.read;

import dev.sluice.client.protocol.StreamGap;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Every chunk of one stream, in {@code seq} order, each once: what {@link ChunkDelivery} paces and
 * shares out. The real one reads a CHUNK_STREAMS subscription ({@link SharedChunkSubscription});
 * tests script one against a fake clock.
 */
interface ChunkSource extends AutoCloseable {

    /**
     * The stream's next chunk, waiting up to {@code timeoutNanos} (0: only if it is there now);
     * null if it did not come, or sooner when a gap report came meanwhile ({@link #takeGap()}). The
     * previous chunk must be {@linkplain Chunk#done() done} first.
     */
    Chunk next(long timeoutNanos) throws IOException;

    /**
     * The oldest hole the daemon reported in the stream (STREAM_GAP, docs/formats.md) that {@link
     * #next} came upon and nobody took yet; null if none. Reports come in the order the source got
     * them, which need not be that of the chunks: one may come before the chunks below its hole, or
     * after the chunk that filled it.
     */
    StreamGap takeGap();

    /**
     * The payload bytes of the chunks that came and wait after the one {@link #next} gave last,
     * counting only those whose {@code seq % readerCount == readerIndex}: a look at what is in
     * memory, without I/O. For the start buffer a paced reader reports (docs/stream-reader.md,
     * "Lateness and the start buffer").
     */
    long bytesWaiting(int readerIndex, int readerCount);

    @Override
    void close() throws IOException;

    /** One chunk, valid until {@link #done()}. */
    interface Chunk {
        long seq();

        boolean isEndOfStream();

        /** The payload in place, read-only, position 0, limit its size. */
        ByteBuffer payload();

        int size();

        /** The chunk is no longer used: its memory may be given back. */
        void done() throws IOException;
    }
}
