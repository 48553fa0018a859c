package dev.sluice.client.read;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.Serializable;

/**
 * A hole in a stream that the daemon reported (STREAM_GAP, docs/formats.md): chunks {@code
 * missingFrom} to {@code missingTo} (inclusive, unsigned {@code seq}s) had not come when the chunk
 * after them had waited {@code waitedNanos}, past the daemon's {@code sluice.gap.timeout.ms}. The
 * stream waits on for them: a chunk delivered past a hole would break its order.
 */
@PublicEvolving
public record ChunkGap(long missingFrom, long missingTo, long waitedNanos) implements Serializable {

    /** The missing seqs, "2" or "2 to 5". */
    public String missingSeqs() {
        return missingFrom == missingTo
                ? Long.toUnsignedString(missingFrom)
                : Long.toUnsignedString(missingFrom) + " to " + Long.toUnsignedString(missingTo);
    }
}
