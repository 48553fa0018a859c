package dev.sluice.benchmarks;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Single-thread copy bandwidth in this JVM, the local way's compute-disabled anchor
 * (benchmarks/README.md, Transport): {@link System#arraycopy} of chunk-sized pieces (the intrinsic,
 * the same vectorised stub a {@code memcpy} is) from a 16 MiB source into a 1 GiB ring, far beyond
 * the caches, walked with a cursor as the handoff's {@code memcpy-dram} anchor is. Measured here
 * rather than taken from the handoff benchmark, so that it is of the same run and the same machine
 * state as the pipeline's figures.
 */
final class MemcpyAnchor {
    private static final int SOURCE_BYTES = 16 << 20;
    private static final int RING_BYTES = 1 << 30;
    // Copies through the ring four times: long enough for the rate, 0.3 s at 16 GB/s.
    private static final long MEASURED_BYTES = 4L * RING_BYTES;

    private MemcpyAnchor() {}

    /** Copies {@link #MEASURED_BYTES} in {@code pieceBytes} copies; the ring is touched first. */
    static TimedBytes measure(int pieceBytes) throws Exception {
        byte[] source = new byte[SOURCE_BYTES];
        ThreadLocalRandom.current().nextBytes(source);
        byte[] ring = new byte[RING_BYTES];
        // One unmeasured pass: the ring's pages are the kernel's to hand out on first touch, and
        // the copy loop compiles.
        copy(source, ring, pieceBytes, RING_BYTES);
        double cpuBefore = MachineCpu.busySeconds();
        long start = System.nanoTime();
        copy(source, ring, pieceBytes, MEASURED_BYTES);
        double seconds = (System.nanoTime() - start) / 1e9;
        return new TimedBytes(MEASURED_BYTES, seconds, MachineCpu.busySeconds() - cpuBefore);
    }

    private static void copy(byte[] source, byte[] ring, int pieceBytes, long total) {
        int from = 0;
        int to = 0;
        for (long copied = 0; copied < total; copied += pieceBytes) {
            if (from + pieceBytes > source.length) {
                from = 0;
            }
            if (to + pieceBytes > ring.length) {
                to = 0;
            }
            System.arraycopy(source, from, ring, to, pieceBytes);
            from += pieceBytes;
            to += pieceBytes;
        }
    }
}
