package dev.sluice.client.protocol;

import dev.sluice.client.annotation.PublicEvolving;

/** ERROR's {@code code}; {@code docs/formats.md} gives what follows each. */
@PublicEvolving
public enum ErrorCode {
    BAD_FRAME(1),
    UNSUPPORTED_VERSION(2),
    UNKNOWN_TYPE(3),
    UNEXPECTED_MESSAGE(4),
    NOT_AUTHORIZED(5),
    UNKNOWN_TOPIC(6),
    UNKNOWN_SUBSCRIPTION(7),
    BAD_REQUEST(8),
    RECORD_TOO_LARGE(9),
    SUBSCRIPTION_LIMIT(10),
    SHUTTING_DOWN(11),
    INTERNAL(12);

    private final int code;

    ErrorCode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
