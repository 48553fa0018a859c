package dev.sluice.client.protocol;

import dev.sluice.client.annotation.PublicEvolving;

/** Where a partition's delivery starts. */
@PublicEvolving
public enum StartPosition {
    EARLIEST(1),
    LATEST(2),
    /** At the entry's {@code offset}; not allowed as SUBSCRIBE's {@code default_start}. */
    OFFSET(3);

    private final int code;

    StartPosition(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
