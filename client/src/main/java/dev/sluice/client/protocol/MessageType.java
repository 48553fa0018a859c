package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;

/**
 * A frame's {@code type}, with the first protocol version whose frames may carry it ({@code
 * docs/formats.md}, "Versions"). The types are numbered in the order the versions added them.
 */
@Internal
public enum MessageType {
    SUBSCRIBE(1, 1),
    SUBSCRIBED(2, 1),
    RELEASE(3, 1),
    HEARTBEAT(4, 1),
    ERROR(5, 1),
    CLOSE(6, 1),
    STREAM_GAP(7, 3),
    PRODUCE(8, 4),
    PRODUCING(9, 4);

    private final int code;
    private final int firstVersion;

    MessageType(int code, int firstVersion) {
        this.code = code;
        this.firstVersion = firstVersion;
    }

    public int code() {
        return code;
    }

    /** The first protocol version that has this message. */
    public int firstVersion() {
        return firstVersion;
    }

    /** Whether a client (a reader or a producer) may send it; the daemon refuses the others. */
    public boolean sentByClient() {
        return switch (this) {
            case SUBSCRIBE, RELEASE, HEARTBEAT, CLOSE, PRODUCE -> true;
            case SUBSCRIBED, ERROR, STREAM_GAP, PRODUCING -> false;
        };
    }
}
