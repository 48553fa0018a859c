package dev.sluice.client.read;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.time.Duration;

/**
 * A {@link StreamReader} in the plain shape of docs/stream-reader.md's "The plain facade": {@code
 * poll(timeout)}, {@code isClosed()}, {@code close()}. Each poll copies the next chunk's payload
 * out and releases the chunk at once, so nothing is held between calls; for zero-copy reading use
 * the {@link StreamReader} itself.
 *
 * <pre>{@code
 * try (SimpleStreamReader cyan = StreamReader.builder(brokerd, spec, "cyan").openSimple()) {
 *     while (!cyan.isClosed()) {
 *         byte[] chunk = cyan.poll(Duration.ofSeconds(5));
 *         if (chunk != null) {
 *             out.write(chunk);
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>Pacing, sharing and delivery progress are the reader's, as built. Not thread-safe.
 */
@PublicEvolving
public final class SimpleStreamReader implements AutoCloseable {
    private final StreamReader reader;

    public SimpleStreamReader(StreamReader reader) {
        this.reader = reader;
    }

    /**
     * The next chunk's payload, a copy; null if none came within {@code timeout} or the stream has
     * ended ({@link #isClosed()} tells which).
     *
     * @throws IllegalStateException after {@link #close()}
     * @throws StreamGapException once per hole the daemon reported in the stream, as {@link
     *     StreamReader#acquire} does: polling again waits on for the missing chunks
     */
    public byte[] poll(Duration timeout) throws IOException {
        if (reader.isClosed()) {
            throw new IllegalStateException("the stream reader is closed");
        }
        try (StreamChunk chunk = reader.acquire(timeout)) {
            return chunk == null ? null : chunk.copyPayload();
        }
    }

    /**
     * True once the stream has ended (every chunk of this reader was polled, and for a shared
     * stream the end passed by) or {@link #close()} was called: no poll will return data anymore.
     */
    public boolean isClosed() {
        return reader.isEndOfStream() || reader.isClosed();
    }

    public String job() {
        return reader.job();
    }

    public String stream() {
        return reader.stream();
    }

    public StreamReaderStats stats() {
        return reader.stats();
    }

    /** The reader behind the facade. */
    public StreamReader reader() {
        return reader;
    }

    @Override
    public void close() throws IOException {
        reader.close();
    }
}
