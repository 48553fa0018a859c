package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.Locale;

/**
 * The buffer ahead a paced stream's readers start with (docs/generation.md, "Buffer model"): how
 * long their first chunk waits before it is handed out, so that what came meanwhile covers a late
 * task.
 *
 * <p>One task of the stream at its rate covers the computation of the next task, while the
 * producers compute faster than the readers read. To ride out the loss of one producer, the readers
 * need its rate × (the detection bound + one task's time on a survivor): the scheduler counts a
 * producer as slow once its task at hand has run {@value #SLOW_FACTOR} times its expected time, and
 * hands a duplicate of each of its paced tasks out then, leaving {@value #GUARD_MILLIS} ms for
 * progress and its own poll; a survivor then computes the task. A task takes its producer at most
 * the time it takes its readers (a paced stream's producers are faster than its readers, or the
 * stream cannot keep its speed), so the model counts a task's time as {@code taskSizeBytes / rate}.
 */
@PublicEvolving
public final class BufferModel {
    /** How many times its expected time a task runs before its producer counts as slow. */
    public static final double SLOW_FACTOR = 3;

    /**
     * What a duplicate's timing leaves for readers' progress to reach the scheduler (a record per
     * delivered task, else every 100 ms) and for the scheduler's poll.
     */
    public static final long GUARD_MILLIS = 250;

    private BufferModel() {}

    /**
     * The start delay of a stream's readers, in nanoseconds: one task's time ({@code taskBytes} at
     * {@code bytesPerSecond}), or, when the job must survive a producer's loss, the detection bound
     * and one task's time on a survivor.
     */
    public static long startDelayNanos(
            long taskBytes, double bytesPerSecond, boolean survivesProducerLoss) {
        double task = taskBytes * 1e9 / bytesPerSecond;
        if (!survivesProducerLoss) {
            return Math.round(task);
        }
        return Math.round((SLOW_FACTOR + 1) * task + GUARD_MILLIS * 1e6);
    }

    /** The start delay and why, for a person: what a demo or a log line prints. */
    public static String explain(
            long taskBytes, double bytesPerSecond, boolean survivesProducerLoss) {
        double task = taskBytes / bytesPerSecond;
        double delay = startDelayNanos(taskBytes, bytesPerSecond, survivesProducerLoss) / 1e9;
        if (!survivesProducerLoss) {
            return String.format(
                    Locale.ROOT,
                    "start delay %.2f s: one task (%d B at %.0f B/s) covers the next task's"
                            + " computation",
                    delay,
                    taskBytes,
                    bytesPerSecond);
        }
        return String.format(
                Locale.ROOT,
                "start delay %.2f s to survive a producer's loss: %.2f s to find it slow (%.0f"
                        + " tasks' time) + %d ms guard + %.2f s for a survivor to compute the task"
                        + " (%d B at %.0f B/s)",
                delay,
                SLOW_FACTOR * task,
                SLOW_FACTOR,
                GUARD_MILLIS,
                task,
                taskBytes,
                bytesPerSecond);
    }
}
