package dev.sluice.benchmarks;

import java.lang.management.ManagementFactory;
import org.agrona.DirectBuffer;
import org.agrona.UnsafeApi;

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
        // Raw loads from the buffer's base and address: through DirectBuffer.getLong, each load
        // also pays for the int index arithmetic, which halves the loop's speed in cache. Two call
        // sites, so that each inlined loop knows its base: C2 compiles a load whose base may be
        // null or an array as a mixed access, fenced on both sides, and that loop summed mapped
        // memory at 16 GB/s in cache against 41 with a literal null.
        byte[] array = buffer.byteArray();
        long address = buffer.addressOffset() + offset;
        return array == null ? sum(null, address, length) : sum(array, address, length);
    }

    private static long sum(Object base, long address, int length) {
        long end = address + length;
        // Eight independent sums let the CPU overlap the loads; addition mod 2^64 does not care
        // about the order, so the digest is the same as one running sum.
        long a = 0;
        long b = 0;
        long c = 0;
        long d = 0;
        long e = 0;
        long f = 0;
        long g = 0;
        long h = 0;
        long i = address;
        for (; i + 8 * Long.BYTES <= end; i += 8 * Long.BYTES) {
            a += UnsafeApi.getLong(base, i);
            b += UnsafeApi.getLong(base, i + Long.BYTES);
            c += UnsafeApi.getLong(base, i + 2 * Long.BYTES);
            d += UnsafeApi.getLong(base, i + 3 * Long.BYTES);
            e += UnsafeApi.getLong(base, i + 4 * Long.BYTES);
            f += UnsafeApi.getLong(base, i + 5 * Long.BYTES);
            g += UnsafeApi.getLong(base, i + 6 * Long.BYTES);
            h += UnsafeApi.getLong(base, i + 7 * Long.BYTES);
        }
        for (; i + Long.BYTES <= end; i += Long.BYTES) {
            a += UnsafeApi.getLong(base, i);
        }
        for (; i < end; i++) {
            a += UnsafeApi.getByte(base, i);
        }
        return a + b + c + d + e + f + g + h;
    }

    // Taken when the class loads, in the warm-up: the first call loads the management classes
    // and compiles what they run, and made at the start of a measured window it cost the window
    // tens of milliseconds of one core and compilations on the other.
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    static {
        OS.getProcessCpuTime();
    }

    /** CPU time of this whole process (every thread), in nanoseconds. */
    static long processCpuNanos() {
        return OS.getProcessCpuTime();
    }

    /** Prints the line the harness parses; nanoTime is CLOCK_MONOTONIC, as in the C++ writer. */
    static void report(long startNanos, long endNanos, long cpuNanos, String more) {
        System.out.printf(
                "start_ns=%d end_ns=%d cpu_s=%.6f %s%n",
                startNanos, endNanos, cpuNanos / 1e9, more);
        System.out.flush();
    }
}
