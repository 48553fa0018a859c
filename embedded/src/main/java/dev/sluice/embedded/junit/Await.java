package dev.sluice.embedded.junit;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The one way tests of every module wait for what another thread or process makes true: poll the
 * condition with a deadline, and fail naming what was awaited, rather than sleep a guessed time or
 * stop silently at the deadline.
 *
 * <pre>{@code
 * Await.until("the reader has attached", Duration.ofSeconds(30), () -> segment.readers() == 1);
 * Batch batch = Await.untilNonNull("a batch arrives", Duration.ofSeconds(30), reader::poll);
 * }</pre>
 */
public final class Await {
    // Short enough not to slow a test down, long enough not to busy-spin one of the two cores.
    private static final long PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private Await() {}

    /**
     * Returns once {@code condition} holds, asking it again and again until {@code timeout} has
     * passed.
     *
     * @throws AssertionError "timed out after {timeout} waiting until {what}"
     */
    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        untilNonNull(what, timeout, () -> condition.getAsBoolean() ? Boolean.TRUE : null);
    }

    /**
     * Returns the first value {@code source} gives that is not null, asking it again and again
     * until {@code timeout} has passed.
     *
     * @throws AssertionError "timed out after {timeout} waiting until {what}"
     */
    public static <T> T untilNonNull(String what, Duration timeout, Supplier<T> source) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            T value = source.get();
            if (value != null) {
                return value;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeout + " waiting until " + what);
            }
            LockSupport.parkNanos(PAUSE_NANOS);
        }
    }
}
