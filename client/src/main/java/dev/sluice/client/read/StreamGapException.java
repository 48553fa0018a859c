package dev.sluice.client.read;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.protocol.StreamGap;
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
    private final StreamGap gap;

    public StreamGapException(StreamGap gap) {
        super(
                "stream "
                        + gap.job()
                        + "/"
                        + gap.stream()
                        + " waits for chunk "
                        + gap.missingSeqs()
                        + ", missing at the daemon: the chunk after it had waited "
                        + TimeUnit.NANOSECONDS.toMillis(gap.waitedNanos())
                        + " ms, past sluice.gap.timeout.ms. The reader waits on for it: acquire"
                        + " again to keep waiting, or close the reader to give up");
        this.gap = gap;
    }

    public String job() {
        return gap.job();
    }

    public String stream() {
        return gap.stream();
    }

    /** The missing seqs and how long the daemon had waited for them, as it reported them. */
    public StreamGap gap() {
        return gap;
    }
}
