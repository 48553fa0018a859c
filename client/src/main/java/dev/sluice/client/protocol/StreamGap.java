package dev.sluice.client.protocol;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.Serializable;
import java.util.Objects;

/**
 * STREAM_GAP (version 3 on, sent by the daemon, request id 0): in CHUNK_STREAMS subscription {@code
 * subscriptionId}, stream {@code job}/{@code stream} misses seqs {@code missingFrom} to {@code
 * missingTo} (inclusive, unsigned) for longer than the daemon's {@code sluice.gap.timeout.ms}: its
 * earliest held chunk has waited {@code waitedNanos}. Sent once per hole; the stream goes on
 * waiting for the missing chunks, since delivering past a hole would break it.
 *
 * <p>The one type of a gap in the API as well: what {@code ChunkSubscription#nextGap} returns and
 * what a stream reader's {@code StreamGapException} and stats carry, as the daemon reported it
 * (docs/stream-reader.md, "Gaps").
 */
@PublicEvolving
public record StreamGap(
        long subscriptionId,
        long missingFrom,
        long missingTo,
        long waitedNanos,
        String job,
        String stream)
        implements ControlMessage, Serializable {
    private static final long serialVersionUID = 1L;

    public StreamGap {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(stream, "stream");
    }

    /** The missing seqs, "2" or "2 to 5". */
    public String missingSeqs() {
        return missingFrom == missingTo
                ? Long.toUnsignedString(missingFrom)
                : Long.toUnsignedString(missingFrom) + " to " + Long.toUnsignedString(missingTo);
    }

    @Override
    public MessageType type() {
        return MessageType.STREAM_GAP;
    }
}
