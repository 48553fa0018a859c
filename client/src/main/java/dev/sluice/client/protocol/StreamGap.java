package dev.sluice.client.protocol;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.Objects;

/**
 * STREAM_GAP (version 3 on, sent by the daemon, request id 0): in CHUNK_STREAMS subscription {@code
 * subscriptionId}, stream {@code job}/{@code stream} misses seqs {@code missingFrom} to {@code
 * missingTo} (inclusive, unsigned) for longer than the daemon's {@code sluice.gap.timeout.ms}: its
 * earliest held chunk has waited {@code waitedNanos}. Sent once per hole; the stream goes on
 * waiting for the missing chunks, since delivering past a hole would break it.
 */
@PublicEvolving
public record StreamGap(
        long subscriptionId,
        long missingFrom,
        long missingTo,
        long waitedNanos,
        String job,
        String stream)
        implements ControlMessage {
    public StreamGap {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(stream, "stream");
    }

    @Override
    public MessageType type() {
        return MessageType.STREAM_GAP;
    }
}
