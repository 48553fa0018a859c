package dev.sluice.benchmarks;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The measured window of a source benchmark job, shared by its subtasks (the MiniCluster runs them
 * in this JVM): it opens when the first tenth of the records went through the first operator, and
 * closes with the last of them (to a chunk of 1,024), not when the job notices its end of input,
 * which can be a while later. At the start it samples this process's CPU time, the daemon's and the
 * broker's, and the threads that read records; at the end, when the last subtask closes (the time
 * in between is idle).
 */
final class SourceWindow {
    private static final int FLUSH = 1024;

    static long expected;
    static long daemonPid;
    static long brokerPid;
    private static final AtomicLong seen = new AtomicLong();
    private static final AtomicInteger open = new AtomicInteger();
    private static volatile boolean started;
    static long startRecords;
    static long endRecords;
    static long startNanos;
    static long endNanos;
    static double startCpu;
    static double endCpu;
    static double startDaemonCpu;
    static double endDaemonCpu;
    static double startBrokerCpu;
    static double endBrokerCpu;
    static int sourceThreads;

    private SourceWindow() {}

    /** A subtask's counter: adds to the shared count in chunks, to keep the hot path local. */
    static final class Counter {
        private long local;

        Counter() {
            open.incrementAndGet();
        }

        void record() {
            if (++local == FLUSH) {
                add(local);
                local = 0;
            }
        }

        void close() {
            seen.addAndGet(local);
            local = 0;
            if (open.decrementAndGet() == 0) {
                synchronized (SourceWindow.class) {
                    endCpu = processCpu();
                    endDaemonCpu = cpu(daemonPid);
                    endBrokerCpu = cpu(brokerPid);
                }
            }
        }
    }

    private static void add(long records) {
        long total = seen.addAndGet(records);
        long now = System.nanoTime();
        synchronized (SourceWindow.class) {
            if (total > endRecords) {
                endRecords = total;
                endNanos = now;
            }
        }
        if (!started && total >= expected / 10) {
            synchronized (SourceWindow.class) {
                if (!started) {
                    startRecords = total;
                    startNanos = System.nanoTime();
                    startCpu = processCpu();
                    startDaemonCpu = cpu(daemonPid);
                    startBrokerCpu = cpu(brokerPid);
                    sourceThreads = sourceThreads();
                    started = true;
                }
            }
        }
    }

    static long total() {
        return seen.get();
    }

    private static double processCpu() {
        return Probe.processCpuNanos() / 1e9;
    }

    private static double cpu(long pid) {
        try {
            return pid > 0 ? ChildProcess.cpuSeconds(pid) : 0;
        } catch (IOException e) {
            throw new IllegalStateException("reading the CPU time of pid " + pid, e);
        }
    }

    /**
     * Threads that fetch records: Flink's split fetchers, Sluice's shared records subscriptions,
     * Kafka consumers' own threads (not the enumerators' admin clients).
     */
    private static int sourceThreads() {
        return (int)
                Thread.getAllStackTraces().keySet().stream()
                        .map(Thread::getName)
                        .filter(
                                name ->
                                        name.startsWith("Source Data Fetcher")
                                                || name.startsWith("sluice-push")
                                                || (name.startsWith("kafka-")
                                                        && !name.contains("admin"))
                                                || name.contains("consumer_background"))
                        .count();
    }
}
