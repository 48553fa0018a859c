package dev.sluice.flink.source.reader.push;

import java.util.Arrays;
import java.util.function.IntToLongFunction;

/**
 * One partition's rows in a batch, as runs of consecutive rows: the daemon writes a partition's
 * records in runs of thousands, in offset order, so a run costs one entry, not one per row.
 */
final class RowRuns {
    // [start, end) pairs.
    private int[] bounds = new int[8];
    private int ints;

    /** Appends the rows {@code [start, end)}, which follow those added before. */
    void add(int start, int end) {
        if (ints > 0 && bounds[ints - 1] == start) {
            bounds[ints - 1] = end;
            return;
        }
        if (ints == bounds.length) {
            bounds = Arrays.copyOf(bounds, ints * 2);
        }
        bounds[ints] = start;
        bounds[ints + 1] = end;
        ints += 2;
    }

    int runs() {
        return ints / 2;
    }

    int start(int run) {
        return bounds[2 * run];
    }

    int end(int run) {
        return bounds[2 * run + 1];
    }

    boolean isEmpty() {
        return ints == 0;
    }

    void clear() {
        ints = 0;
    }

    /**
     * Leaves out the rows whose offset is {@code stop} or more and returns true when the partition
     * reached {@code stop}: a row was left out, or the last row is the one before it.
     */
    boolean truncate(IntToLongFunction offsetOf, long stop) {
        if (ints == 0) {
            return false;
        }
        long last = offsetOf.applyAsLong(bounds[ints - 1] - 1);
        if (last < stop) {
            return last + 1 >= stop;
        }
        int run = 0;
        while (offsetOf.applyAsLong(end(run) - 1) < stop) {
            run++;
        }
        // The first row at or past stop lies in this run; the rows before it stay.
        int first = firstAtOrAfter(offsetOf, start(run), end(run), stop);
        bounds[2 * run + 1] = first;
        ints = 2 * (first > start(run) ? run + 1 : run);
        return true;
    }

    /** The first row of {@code [start, end)}, whose offsets ascend, at or after {@code offset}. */
    static int firstAtOrAfter(IntToLongFunction offsetOf, int start, int end, long offset) {
        int low = start;
        int high = end;
        while (low < high) {
            int middle = (low + high) >>> 1;
            if (offsetOf.applyAsLong(middle) < offset) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        return low;
    }
}
