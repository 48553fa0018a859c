package dev.sluice.embedded.junit;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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
 *
 * <p>The condition is asked at once, then again 1 ms after each answer. A condition may throw what
 * the code it asks throws (a poll's {@code IOException}, say): the wait ends with it, and the
 * caller declares it as it would for the call itself.
 */
public final class Await {
    // Short enough not to slow a read loop down (it pauses once per chunk), long enough not to
    // busy-spin one of the two cores the build has. A dear condition (a Kafka admin query) paces
    // itself by what it costs.
    private static final long PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private Await() {}

    /** A condition to wait for. */
    @FunctionalInterface
    public interface Condition<E extends Throwable> {
        boolean holds() throws E;
    }

    /** What gives a value once there is one, and null until then. */
    @FunctionalInterface
    public interface Source<T, E extends Throwable> {
        T get() throws E;
    }

    /**
     * Returns once {@code condition} holds, asking it again and again until {@code timeout} has
     * passed.
     *
     * @throws AssertionError "timed out after {timeout} waiting until {what}"
     */
    public static <E extends Throwable> void until(
            String what, Duration timeout, Condition<E> condition) throws E {
        until(() -> what, timeout, condition);
    }

    /**
     * As {@link #until(String, Duration, Condition)}, with what was awaited described only when the
     * wait fails, so that it can say how far it got ("3 of 5 chunks: [0, 1, 2]").
     */
    public static <E extends Throwable> void until(
            Supplier<String> what, Duration timeout, Condition<E> condition) throws E {
        untilNonNull(what, timeout, () -> condition.holds() ? Boolean.TRUE : null);
    }

    /**
     * Returns the first value {@code source} gives that is not null, asking it again and again
     * until {@code timeout} has passed.
     *
     * @throws AssertionError "timed out after {timeout} waiting until {what}"
     */
    public static <T, E extends Throwable> T untilNonNull(
            String what, Duration timeout, Source<T, E> source) throws E {
        return untilNonNull(() -> what, timeout, source);
    }

    /**
     * As {@link #untilNonNull(String, Duration, Source)}, with what was awaited described only when
     * the wait fails.
     */
    public static <T, E extends Throwable> T untilNonNull(
            Supplier<String> what, Duration timeout, Source<T, E> source) throws E {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            T value = source.get();
            if (value != null) {
                return value;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(
                        "timed out after " + timeout + " waiting until " + what.get());
            }
            LockSupport.parkNanos(PAUSE_NANOS);
        }
    }
}
