package dev.sluice.benchmarks;

import java.lang.management.ManagementFactory;
import org.agrona.DirectBuffer;

/**
 * What the processes of a handoff share: touching the bytes they received, and reporting a measured
 * window to the harness as one {@code key=value} line on stdout.
 */
final class Probe {
    private Probe() {}

    /**
     * Sums {@code buffer[offset, offset + length)} as little-endian 8-byte words, then its tail:
     * the reader's proof that it read every byte it was handed. Both readers run this same loop.
     */
    static long sum(DirectBuffer buffer, int offset, int length) {
        long sum = 0;
        int end = offset + length;
        int i = offset;
        for (; i + Long.BYTES <= end; i += Long.BYTES) {
            sum += buffer.getLong(i);
        }
        for (; i < end; i++) {
            sum += buffer.getByte(i);
        }
        return sum;
    }

    /** CPU time of this whole process (every thread), in nanoseconds. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean)
                        ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** Prints the line the harness parses; nanoTime is CLOCK_MONOTONIC, as in the C++ writer. */
    static void report(long startNanos, long endNanos, long cpuNanos, String more) {
        System.out.printf(
                "start_ns=%d end_ns=%d cpu_s=%.6f %s%n",
                startNanos, endNanos, cpuNanos / 1e9, more);
        System.out.flush();
    }
}
