package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;
import java.util.Objects;

/**
 * One control frame: the reader's {@code requestId} (echoed by the answer; 0 on frames that answer
 * nothing), the message, and the protocol version it is in ({@link ControlCodec#VERSION}, the
 * newest, unless given).
 */
@Internal
public record Frame(long requestId, ControlMessage message, int version) {
    public Frame {
        Objects.requireNonNull(message, "message");
    }

    public Frame(long requestId, ControlMessage message) {
        this(requestId, message, ControlCodec.VERSION);
    }
}
