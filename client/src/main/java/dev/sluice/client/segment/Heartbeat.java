package dev.sluice.client.segment;

import dev.sluice.client.annotation.Internal;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Refreshes a heartbeat field from one shared daemon thread, so a side stays alive while the
 * application is busy elsewhere (processing an object, or simply not calling in) instead of only
 * while it polls or writes.
 */
@Internal
final class Heartbeat implements AutoCloseable {
    private static final ScheduledExecutorService SCHEDULER =
            Executors.newSingleThreadScheduledExecutor(
                    task -> {
                        Thread thread = new Thread(task, "sluice-segment-heartbeat");
                        thread.setDaemon(true);
                        return thread;
                    });

    private final ScheduledFuture<?> task;

    private Heartbeat(ScheduledFuture<?> task) {
        this.task = task;
    }

    /**
     * Beats now and then every {@code livenessTimeoutNanos / 8}, twice as often as the spec's
     * minimum, so one late run of the shared thread does not make the side look dead.
     */
    static Heartbeat start(Runnable beat, long livenessTimeoutNanos) {
        beat.run();
        long period = Math.max(1, livenessTimeoutNanos / 8);
        return new Heartbeat(
                SCHEDULER.scheduleAtFixedRate(beat, period, period, TimeUnit.NANOSECONDS));
    }

    @Override
    public void close() {
        task.cancel(false);
    }
}
