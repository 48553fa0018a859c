package dev.sluice.client.read;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One chunk of a stream handed out by {@link StreamReader#acquire}: its payload is read in place,
 * in the shared-memory slot the daemon wrote it to, until {@link #release()}. Release it as soon as
 * it is used: its slot goes back to the daemon only then, and that is the stream's backpressure.
 *
 * <p>{@link #close()} releases too, so a chunk fits try-with-resources.
 */
@PublicEvolving
public final class StreamChunk implements AutoCloseable {
    private final ChunkDelivery owner;
    private final ChunkSource.Chunk chunk;
    private boolean released;

    StreamChunk(ChunkDelivery owner, ChunkSource.Chunk chunk) {
        this.owner = owner;
        this.chunk = chunk;
    }

    public String job() {
        return owner.job();
    }

    public String stream() {
        return owner.stream();
    }

    /** The chunk's position in its stream, from 0. */
    public long seq() {
        return chunk.seq();
    }

    /** Whether this is the stream's last chunk. */
    public boolean isEndOfStream() {
        return chunk.isEndOfStream();
    }

    /** The payload's length in bytes. */
    public int size() {
        ensureHeld();
        return chunk.size();
    }

    /**
     * The payload, zero-copy: a read-only buffer over the slot's memory, position 0, limit {@link
     * #size()}. It must not be read after {@link #release()}: the daemon may have written another
     * object there. For a paced reader, a chunk that waited behind others may be a heap copy
     * instead ({@link StreamReaderBuilder#heapBufferBytes}).
     */
    public ByteBuffer payload() {
        ensureHeld();
        return chunk.payload();
    }

    /** A copy of the payload, which outlives the release. */
    public byte[] copyPayload() {
        ByteBuffer payload = payload();
        byte[] bytes = new byte[payload.remaining()];
        payload.get(bytes);
        return bytes;
    }

    public boolean isReleased() {
        return released;
    }

    /**
     * Gives the chunk back: its slot is freed once no other chunk of the stream is left in it, and
     * the delivery progress counts it.
     *
     * @throws IllegalStateException if it was already released
     */
    public void release() throws IOException {
        ensureHeld();
        released = true;
        if (!owner.isClosed()) {
            // After the reader's close() the slot is gone already.
            owner.release(this, chunk);
        }
    }

    /** Releases the chunk unless it already was. */
    @Override
    public void close() throws IOException {
        if (!released) {
            release();
        }
    }

    private void ensureHeld() {
        if (released) {
            throw new IllegalStateException("chunk " + chunk.seq() + " was released");
        }
    }

    @Override
    public String toString() {
        return owner.job()
                + "/"
                + owner.stream()
                + "#"
                + chunk.seq()
                + (isEndOfStream() ? " (end)" : "");
    }
}
