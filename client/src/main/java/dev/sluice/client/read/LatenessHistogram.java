package dev.sluice.client.read;

/**
 * The lateness of a paced reader's chunks in nanoseconds, in fixed memory: log-linear buckets exact
 * below 64 ns and, above, 32 to each power of two, so that a bucket is at most 1/32 of the values
 * in it wide; percentiles are read back within 1/64 of the value (the bucket's middle). Values from
 * about 18 minutes ({@value #MAX_TRACKED_NANOS} ns) up share the last bucket; the maximum and the
 * count are exact. Recording allocates nothing (docs/stream-reader.md, "Lateness and the start
 * buffer").
 *
 * <p>Not thread-safe: {@link ChunkDelivery} records on the reader's thread and reads for {@code
 * stats()} from any thread, both synchronized on the histogram.
 */
final class LatenessHistogram {
    // 2^5 buckets per power of two: a bucket of values from 2^e is 2^(e-5) wide.
    private static final int SUB_BUCKET_BITS = 5;
    private static final int SUB_BUCKETS = 1 << SUB_BUCKET_BITS;
    // Below 2^6 ns every value has a bucket of its own (as wide as 1/32 of 2^5 would be: 1 ns).
    private static final int LINEAR_BITS = SUB_BUCKET_BITS + 1;
    private static final int LINEAR = 1 << LINEAR_BITS;
    // 2^40 ns, about 18 minutes: a chunk later than that is lost time anyway.
    static final long MAX_TRACKED_NANOS = 1L << 40;
    private static final int MAX_EXPONENT = 40;

    private final long[] counts = new long[LINEAR + (MAX_EXPONENT - LINEAR_BITS) * SUB_BUCKETS];
    private long count;
    private long max;

    /** Records one chunk's lateness; a negative one counts as 0 (on time). */
    void record(long nanos) {
        long value = Math.max(0, nanos);
        counts[bucket(value)]++;
        count++;
        max = Math.max(max, value);
    }

    long count() {
        return count;
    }

    /** The largest value recorded, exact; 0 before any. */
    long max() {
        return max;
    }

    /**
     * The value below or at which {@code percent} % of the recorded values lie (nearest rank),
     * within 1/64 of it, and never above {@link #max()}; 0 before any value.
     */
    long percentile(double percent) {
        if (count == 0) {
            return 0;
        }
        long rank = Math.max(1, (long) Math.ceil(percent / 100 * count));
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return Math.min(max, middle(i));
            }
        }
        return max;
    }

    private static int bucket(long value) {
        if (value < LINEAR) {
            return (int) value;
        }
        if (value >= MAX_TRACKED_NANOS) {
            return LINEAR + (MAX_EXPONENT - LINEAR_BITS) * SUB_BUCKETS - 1;
        }
        int exponent = 63 - Long.numberOfLeadingZeros(value);
        int sub = (int) (value >>> (exponent - SUB_BUCKET_BITS)) - SUB_BUCKETS;
        return LINEAR + (exponent - LINEAR_BITS) * SUB_BUCKETS + sub;
    }

    /** The middle of bucket {@code i}'s values. */
    private static long middle(int i) {
        if (i < LINEAR) {
            return i;
        }
        int exponent = (i - LINEAR) / SUB_BUCKETS + LINEAR_BITS;
        int sub = (i - LINEAR) % SUB_BUCKETS;
        long width = 1L << (exponent - SUB_BUCKET_BITS);
        long lowest = (long) (SUB_BUCKETS + sub) << (exponent - SUB_BUCKET_BITS);
        return lowest + width / 2;
    }
}
