package dev.sluice.client.read;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Thrown by {@link StreamReader#acquire} once when a stream that has begun, and has not ended,
 * brought no chunk for the reader's {@link StreamReaderBuilder#silenceTimeout}: its writer may be
 * gone, a {@code StreamWriter} or producer killed mid-stream, with no later chunk for the daemon to
 * report a gap by (docs/stream-reader.md, "Silence"). The reader stays usable: {@code acquire}
 * again waits on, and the next silence is told again once a chunk came; closing it gives up.
 */
@PublicEvolving
public final class StreamSilentException extends IOException {
    private final String job;
    private final String stream;
    private final long nextSeq;
    private final long silentNanos;

    public StreamSilentException(String job, String stream, long nextSeq, long silentNanos) {
        super(
                "stream "
                        + job
                        + "/"
                        + stream
                        + " brought no chunk for "
                        + TimeUnit.NANOSECONDS.toMillis(silentNanos)
                        + " ms, waiting for chunk "
                        + Long.toUnsignedString(nextSeq)
                        + ": its writer may be gone. The reader waits on: acquire again to keep"
                        + " waiting, or close the reader to give up");
        this.job = job;
        this.stream = stream;
        this.nextSeq = nextSeq;
        this.silentNanos = silentNanos;
    }

    public String job() {
        return job;
    }

    public String stream() {
        return stream;
    }

    /** The seq the reader waits for. */
    public long nextSeq() {
        return nextSeq;
    }

    /** How long the stream had been silent when this was thrown. */
    public long silentNanos() {
        return silentNanos;
    }
}
