package dev.sluice.client.protocol;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.Objects;

/**
 * One control frame: the reader's {@code requestId} (echoed by the answer; 0 on frames that answer
 * nothing) and the message. The version is the codec's.
 */
@PublicEvolving
public record Frame(long requestId, ControlMessage message) {
    public Frame {
        Objects.requireNonNull(message, "message");
    }
}
