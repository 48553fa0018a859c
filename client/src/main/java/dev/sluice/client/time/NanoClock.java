package dev.sluice.client.time;

import dev.sluice.client.annotation.Internal;
import java.util.concurrent.locks.LockSupport;

/**
 * Monotonic time and the one way the pacing waits for it: parked, never spinning (the output nodes
 * may have two cores). Tests give a clock whose parking moves its time forward.
 */
@Internal
public interface NanoClock {
    NanoClock SYSTEM =
            new NanoClock() {
                @Override
                public long nanoTime() {
                    return System.nanoTime();
                }

                @Override
                public void parkNanos(long nanos) {
                    LockSupport.parkNanos(nanos);
                }
            };

    long nanoTime();

    /** Waits about {@code nanos}; may return early (the caller looks at the time again). */
    void parkNanos(long nanos);
}
