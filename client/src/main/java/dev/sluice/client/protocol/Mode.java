package dev.sluice.client.protocol;

import dev.sluice.client.annotation.PublicEvolving;

/** What a subscription's objects hold: SUBSCRIBE's {@code mode}. */
@PublicEvolving
public enum Mode {
    /** One row per Kafka record. */
    RECORDS(1),
    /** One row per chunk, each stream in {@code seq} order. */
    CHUNK_STREAMS(2);

    private final int code;

    Mode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
