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
        // Four independent sums let the CPU overlap the loads; addition mod 2^64 does not care
        // about the order, so the digest is the same as one running sum.
        long a = 0;
        long b = 0;
        long c = 0;
        long d = 0;
        int end = offset + length;
        int i = offset;
        for (; i + 4 * Long.BYTES <= end; i += 4 * Long.BYTES) {
            a += buffer.getLong(i);
            b += buffer.getLong(i + Long.BYTES);
            c += buffer.getLong(i + 2 * Long.BYTES);
            d += buffer.getLong(i + 3 * Long.BYTES);
        }
        for (; i + Long.BYTES <= end; i += Long.BYTES) {
            a += buffer.getLong(i);
        }
        for (; i < end; i++) {
            a += buffer.getByte(i);
        }
        return a + b + c + d;
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
