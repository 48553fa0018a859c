package dev.sluice.client.read;

import dev.sluice.client.time.NanoClock;

/**
 * The constant-speed schedule: after a chunk of {@code n} bytes is handed out, the next one is due
 * {@code n / rate} seconds later. The schedule is absolute (due times are counted from an anchor,
 * not from the previous handout), so parking that overshoots a little does not add up into drift,
 * and a reader whose application fell behind gets the chunks that are due at once until it is back
 * on schedule.
 *
 * <p>A <b>starvation event</b> is a chunk that was not there at its due time. The schedule then
 * starts again from when that chunk came ({@link #handedOut} with {@code starved}): a printer that
 * stalled does not race afterwards to make up for the lost time, it goes on at its speed.
 */
final class Pacer {
    private static final long MAX_OFFSET_NANOS = 1L << 62;

    private final long rateBytesPerSecond;
    private final double nanosPerByte;
    private boolean started;
    private long anchorNanos;
    // Bytes handed out since the anchor: the next chunk is due when they have been consumed.
    private long bytesSinceAnchor;

    Pacer(long rateBytesPerSecond) {
        if (rateBytesPerSecond < 1) {
            throw new IllegalArgumentException(
                    "rate must be at least 1 byte/s, got " + rateBytesPerSecond);
        }
        this.rateBytesPerSecond = rateBytesPerSecond;
        this.nanosPerByte = 1e9 / rateBytesPerSecond;
    }

    long rateBytesPerSecond() {
        return rateBytesPerSecond;
    }

    /**
     * Whether a chunk was handed out yet: the first one has no due time, it starts the schedule.
     */
    boolean started() {
        return started;
    }

    /**
     * When the next chunk is due, on the {@link NanoClock#nanoTime()} scale: compare by difference,
     * as for {@link System#nanoTime()}. Only once started.
     */
    long nextDueNanos() {
        double offset = bytesSinceAnchor * nanosPerByte;
        // Capped at about 146 years, so that comparing by difference never wraps.
        return anchorNanos + (offset >= MAX_OFFSET_NANOS ? MAX_OFFSET_NANOS : (long) offset);
    }

    /**
     * A chunk of {@code bytes} was handed out at {@code nowNanos}; {@code starved} if it was not
     * there at its due time, which starts the schedule again from now.
     */
    void handedOut(long bytes, long nowNanos, boolean starved) {
        if (!started || starved) {
            started = true;
            anchorNanos = nowNanos;
            bytesSinceAnchor = bytes;
        } else {
            bytesSinceAnchor += bytes;
        }
    }
}
