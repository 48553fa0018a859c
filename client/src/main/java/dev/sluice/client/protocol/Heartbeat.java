package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;

/**
 * HEARTBEAT, sent both ways: the sender's {@code CLOCK_MONOTONIC} ({@link System#nanoTime()} on
 * Linux) and how long it waits for a frame from its peer before it gives up on the connection.
 */
@Internal
public record Heartbeat(long timeNs, long timeoutNs) implements ControlMessage {
    @Override
    public MessageType type() {
        return MessageType.HEARTBEAT;
    }
}
