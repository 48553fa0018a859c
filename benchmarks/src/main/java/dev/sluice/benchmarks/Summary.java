package dev.sluice.benchmarks;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

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

    /** Per system, the summary of {@code metric} over the runs at {@code size}. */
    static <R extends Measurement> Map<String, Summary> bySystem(
            List<R> runs, int size, ToDoubleFunction<R> metric) {
        Map<String, Summary> summaries = new HashMap<>();
        runs.stream()
                .filter(run -> run.size() == size)
                .collect(Collectors.groupingBy(Measurement::system))
                .forEach(
                        (system, of) ->
                                summaries.put(
                                        system, of(of.stream().mapToDouble(metric).toArray())));
        return summaries;
    }

    /** {@code system}'s median over {@code anchor}'s, two decimals; empty without the anchor. */
    static String ratio(Map<String, Summary> summaries, String system, String anchor) {
        return summaries.containsKey(system) && summaries.containsKey(anchor)
                ? String.format(
                        Locale.ROOT, "%.2f", summaries.get(system).ratioTo(summaries.get(anchor)))
                : "";
    }

    /** "min / median / max", each with {@code number}'s format. */
    String format(String number) {
        return String.format(
                Locale.ROOT, number + " / " + number + " / " + number, min, median, max);
    }
}
