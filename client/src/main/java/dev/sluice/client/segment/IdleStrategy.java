package dev.sluice.client.segment;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;

/**
 * How a side waits for the other: spin a little (the other side is usually microseconds away), then
 * yield (on 2 cores the other side may need this core), then park. The twin of {@code
 * native/include/sluice/idle_strategy.h}, with the same defaults and the same steps ({@link #idle},
 * {@link #nextBackoffNanos}, {@link #reset}); the rule both follow is in {@code
 * docs/architecture.md}, "Segment": "Both sides idle alike". Each call is one bounded step, so the
 * caller re-checks heartbeats, liveness and its deadline between steps.
 *
 * <p>Parking follows the waiter-flag protocol of the spec's "The cycle": raise the flag
 * (sequentially consistent), look at the shared state once more, and only then wait on the
 * doorbell, or, without one, sleep with exponential backoff up to 1 ms.
 */
final class IdleStrategy {
    /** Something a parked side can wait on until the other side rings it. */
    interface Bell {
        /**
         * Waits up to {@code nanos} for a ring. Returns {@code false} at once when the bell is
         * unusable (never connected, or the peer went away), so the caller sleeps instead.
         */
        boolean await(long nanos) throws IOException;
    }

    /** What one {@link #idle} did, or that the caller is to park. */
    enum Step {
        SPUN,
        YIELDED,
        PARK
    }

    static final int SPINS = 64;
    static final int YIELDS = 16;
    static final long MIN_BACKOFF_NANOS = TimeUnit.MICROSECONDS.toNanos(10);
    static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final int spins;
    private final int yields;
    private int spun;
    private int yielded;
    private long backoffNanos;

    IdleStrategy(int spins, int yields) {
        this.spins = spins;
        this.yields = yields;
    }

    IdleStrategy() {
        this(SPINS, YIELDS);
    }

    /**
     * Spins or yields once and says so, or, once both budgets are spent, returns {@link Step#PARK}:
     * the caller then parks.
     */
    Step idle() {
        if (spun < spins) {
            spun++;
            Thread.onSpinWait();
            return Step.SPUN;
        }
        if (yielded < yields) {
            yielded++;
            Thread.yield();
            return Step.YIELDED;
        }
        return Step.PARK;
    }

    /** How long a park without a doorbell sleeps: doubles at every call up to 1 ms. */
    long nextBackoffNanos() {
        backoffNanos =
                backoffNanos == 0
                        ? MIN_BACKOFF_NANOS
                        : Math.min(backoffNanos * 2, MAX_BACKOFF_NANOS);
        return backoffNanos;
    }

    /** Work arrived: start again from spinning. */
    void reset() {
        spun = 0;
        yielded = 0;
        backoffNanos = 0;
    }

    /**
     * One step of a wait: {@link #idle}, and once that says {@link Step#PARK}, a park.
     *
     * @param waiting stores the waiter flag ({@code 1} before parking, {@code 0} after)
     * @param ready the re-check made after the flag is raised
     * @param bell the doorbell, or {@code null} when there is none
     * @param maxParkNanos the longest this step may park
     */
    void idleOrPark(IntConsumer waiting, BooleanSupplier ready, Bell bell, long maxParkNanos)
            throws IOException {
        if (idle() != Step.PARK) {
            return;
        }
        waiting.accept(1);
        try {
            if (ready.getAsBoolean()) {
                return;
            }
            if (bell == null || !bell.await(maxParkNanos)) {
                LockSupport.parkNanos(Math.min(nextBackoffNanos(), maxParkNanos));
            }
        } finally {
            // The other side clears the flag when it rings; clearing it here too after a timeout
            // spares it a ring nobody waits for. A ring that races with this only leaves a byte
            // behind, which costs the next park one extra look.
            waiting.accept(0);
        }
    }
}
