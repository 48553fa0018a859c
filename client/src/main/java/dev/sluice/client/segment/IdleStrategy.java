package dev.sluice.client.segment;

import dev.sluice.client.annotation.Internal;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;

/**
 * How a side waits for the other: spin a little (the other side is usually microseconds away), then
 * yield (on 2 cores the other side may need this core), then park. Each call is one bounded step,
 * so the caller re-checks heartbeats, liveness and its deadline between steps.
 *
 * <p>Parking follows the waiter-flag protocol of the spec's "The cycle": raise the flag
 * (sequentially consistent), look at the shared state once more, and only then wait on the
 * doorbell, or, without one, sleep with exponential backoff up to 1 ms.
 */
@Internal
final class IdleStrategy {
    /** Something a parked side can wait on until the other side rings it. */
    interface Bell {
        /**
         * Waits up to {@code nanos} for a ring. Returns {@code false} at once when the bell is
         * unusable (never connected, or the peer went away), so the caller sleeps instead.
         */
        boolean await(long nanos) throws IOException;
    }

    private static final long MIN_BACKOFF_NANOS = TimeUnit.MICROSECONDS.toNanos(20);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final int spins;
    private final int yields;
    private int steps;
    private long backoffNanos = MIN_BACKOFF_NANOS;

    IdleStrategy(int spins, int yields) {
        this.spins = spins;
        this.yields = yields;
    }

    IdleStrategy() {
        this(100, 10);
    }

    /** Call after progress, so the next wait starts with spinning again. */
    void reset() {
        steps = 0;
        backoffNanos = MIN_BACKOFF_NANOS;
    }

    /**
     * One idle step.
     *
     * @param waiting stores the waiter flag ({@code 1} before parking, {@code 0} after)
     * @param ready the re-check made after the flag is raised
     * @param bell the doorbell, or {@code null} when there is none
     * @param maxParkNanos the longest this step may park
     */
    void idle(IntConsumer waiting, BooleanSupplier ready, Bell bell, long maxParkNanos)
            throws IOException {
        if (steps < spins) {
            steps++;
            Thread.onSpinWait();
            return;
        }
        if (steps < spins + yields) {
            steps++;
            Thread.yield();
            return;
        }
        waiting.accept(1);
        try {
            if (ready.getAsBoolean()) {
                return;
            }
            if (bell == null || !bell.await(maxParkNanos)) {
                LockSupport.parkNanos(Math.min(backoffNanos, maxParkNanos));
                backoffNanos = Math.min(backoffNanos * 2, MAX_BACKOFF_NANOS);
            }
        } finally {
            // The other side clears the flag when it rings; clearing it here too after a timeout
            // spares it a ring nobody waits for. A ring that races with this only leaves a byte
            // behind, which costs the next park one extra look.
            waiting.accept(0);
        }
    }
}
