package dev.sluice.client.read;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Thrown by {@link StreamReader#acquire} once per hole the daemon reported in the reader's stream,
 * when the reader has got to it: the next chunks are missing past the daemon's {@code
 * sluice.gap.timeout.ms} (docs/stream-reader.md, "Gaps"). The reader stays usable: {@code acquire}
 * again waits on for the missing chunks, which a producer may still write; closing it gives up.
 */
@PublicEvolving
public final class StreamGapException extends IOException {
    private final String job;
    private final String stream;
    private final ChunkGap gap;

    public StreamGapException(String job, String stream, ChunkGap gap) {
        super(
                "stream "
                        + job
                        + "/"
                        + stream
                        + " waits for chunk "
                        + gap.missingSeqs()
                        + ", missing at the daemon: the chunk after it had waited "
                        + TimeUnit.NANOSECONDS.toMillis(gap.waitedNanos())
                        + " ms, past sluice.gap.timeout.ms. The reader waits on for it: acquire"
                        + " again to keep waiting, or close the reader to give up");
        this.job = job;
        this.stream = stream;
        this.gap = gap;
    }

    public String job() {
        return job;
    }

    public String stream() {
        return stream;
    }

    /** The missing seqs and how long the daemon had waited for them. */
    public ChunkGap gap() {
        return gap;
    }
}
