package dev.sluice.client.protocol;

import dev.sluice.client.annotation.PublicEvolving;

/** A frame's {@code type}. */
@PublicEvolving
public enum MessageType {
    SUBSCRIBE(1),
    SUBSCRIBED(2),
    RELEASE(3),
    HEARTBEAT(4),
    ERROR(5),
    CLOSE(6),
    /** Version 3 on. */
    STREAM_GAP(7);

    private final int code;

    MessageType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
