package dev.sluice.client.segment;

import dev.sluice.client.thread.SluiceThreads;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Refreshes a heartbeat field from one daemon thread shared by the process's segments, so a side
 * stays alive while the application is busy elsewhere (processing an object, or simply not calling
 * in) instead of only while it polls or writes.
 *
 * <p>The thread is counted, not static: it starts with the first heartbeat and ends with the last
 * (docs/architecture.md, "Threads"). A thread that never ended kept, on a Flink TaskManager, the
 * user-code class loader of the job that loaded this class alive after the job was cancelled, one
 * more class loader for every submission.
 */
final class Heartbeat implements AutoCloseable {
    /** How long the last close waits for the shared thread to end. */
    private static final Duration END_WAIT = Duration.ofSeconds(1);

    // Guarded by Heartbeat.class: the shared thread's executor and its factory while a heartbeat
    // runs on it.
    private static ScheduledThreadPoolExecutor scheduler;
    private static SluiceThreads.Factory threads;
    private static int running;

    private final ScheduledFuture<?> task;
    // Guarded by Heartbeat.class.
    private boolean closed;

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
        synchronized (Heartbeat.class) {
            if (scheduler == null) {
                threads = SluiceThreads.factory("sluice-segment-heartbeat");
                scheduler = new ScheduledThreadPoolExecutor(1, threads);
                // A cancelled beat leaves the queue at once: it holds its segment's mapping.
                scheduler.setRemoveOnCancelPolicy(true);
            }
            running++;
            return new Heartbeat(
                    scheduler.scheduleAtFixedRate(beat, period, period, TimeUnit.NANOSECONDS));
        }
    }

    /** Heartbeats running in this process; for tests. */
    static synchronized int running() {
        return running;
    }

    /** Stops beating; the last heartbeat of the process ends the shared thread. Idempotent. */
    @Override
    public void close() {
        SluiceThreads.Factory ended = null;
        synchronized (Heartbeat.class) {
            if (closed) {
                return;
            }
            closed = true;
            task.cancel(false);
            if (--running == 0) {
                scheduler.shutdown();
                scheduler = null;
                ended = threads;
                threads = null;
            }
        }
        if (ended != null) {
            // Outside the lock, so a segment opening meanwhile starts a thread of its own.
            try {
                ended.awaitEnd(END_WAIT);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
