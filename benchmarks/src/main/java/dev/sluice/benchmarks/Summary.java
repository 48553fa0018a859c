package dev.sluice.benchmarks;

import java.util.Arrays;

/** Minimum, median and maximum of a handful of repetitions. */
record Summary(double min, double median, double max) {
    static Summary of(double... values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("no values");
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        double median =
                sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
        return new Summary(sorted[0], median, sorted[sorted.length - 1]);
    }

    /** This median over the other's: how one system compares with its anchor. */
    double ratioTo(Summary other) {
        return median / other.median;
    }
}
