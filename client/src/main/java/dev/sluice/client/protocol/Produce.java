package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;
import java.util.Objects;

/**
 * PRODUCE (version 4 on, sent by a producer on the daemon's host): the producer created the segment
 * at {@code segmentPath} (an absolute path; object kind CHUNKS, the producer its writer) and asks
 * the daemon to read it and hand its chunks to the CHUNK_STREAMS subscriptions of {@code topic}
 * (the chunk topic {@code sluice.chunks.<outputLocation>}). Answered by {@link Producing} or ERROR
 * with its request id ({@code docs/formats.md}, "PRODUCE").
 */
@Internal
public record Produce(String topic, String segmentPath) implements ControlMessage {
    public Produce {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(segmentPath, "segmentPath");
    }

    @Override
    public MessageType type() {
        return MessageType.PRODUCE;
    }
}
