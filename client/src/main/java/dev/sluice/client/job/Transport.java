package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.Locale;

/**
 * How a stream's chunks go from their producer to the daemon of their output location
 * (docs/generation.md, "Transports"): through the stream's Kafka chunk topic, or the local way, a
 * shared-memory segment of the producer's that the daemon on the same host reads.
 *
 * <p>A job and each output location choose one; a stream's is {@link #KAFKA} when either says so
 * (its chunks are then replayable from the log), else {@link #LOCAL} when either says so, else
 * {@link #AUTO}. The scheduler decides each task's way when it hands the task out, so a split or a
 * chunk only ever carries {@link #KAFKA} or {@link #LOCAL}.
 */
@PublicEvolving
public enum Transport {
    /** The local way when the task's producer is on its output location's host, else Kafka. */
    AUTO,
    /** Always through the chunk topic, whose log lets the daemon fetch chunks again. */
    KAFKA,
    /** Always the local way: the stream's tasks go only to producers on its host. */
    LOCAL;

    /** The JSON form: the name in lower case. */
    public String json() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The transport of a JSON value, {@code path} naming it in the refusal.
     *
     * @throws JobSpecException when {@code text} is not one of {@code auto}, {@code kafka}, {@code
     *     local}
     */
    public static Transport fromJson(String text, String path) {
        for (Transport transport : values()) {
            if (transport.json().equals(text)) {
                return transport;
            }
        }
        throw new JobSpecException(path, "must be 'auto', 'kafka' or 'local', got '" + text + "'");
    }

    /**
     * The transport of a stream whose job says {@code job} and whose output location says {@code
     * outputLocation}: {@link #KAFKA} wins (replayable), then {@link #LOCAL}, else {@link #AUTO}.
     */
    public static Transport combine(Transport job, Transport outputLocation) {
        if (job == KAFKA || outputLocation == KAFKA) {
            return KAFKA;
        }
        if (job == LOCAL || outputLocation == LOCAL) {
            return LOCAL;
        }
        return AUTO;
    }
}
