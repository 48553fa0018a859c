package dev.sluice.examples.source;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

/**
 * Windowed word count: word count over sliding count windows per word. Every {@code slide}
 * occurrences of a word, it emits (word, occurrences among that word's last {@code size}), so a
 * word read n times gives the sums min(slide, size), min(2 slide, size), ... up to n (examples/
 * README.md). Count windows, unlike time windows, give the same output on every run.
 */
public final class WindowedWordCountJob {
    /** The window and slide of the runner and the source benchmark: 5 occurrences, every 1. */
    public static final int SIZE = 5;

    public static final int SLIDE = 1;

    private WindowedWordCountJob() {}

    /** The pipeline on a stream of values: (word, sum over its window), once per slide. */
    public static DataStream<Tuple2<String, Integer>> windowedWordCount(
            DataStream<byte[]> values, int size, int slide) {
        if (size < 1 || slide < 1 || slide > size) {
            throw new IllegalArgumentException(
                    "count window of " + size + " sliding by " + slide + ": set 1 ≤ slide ≤ size");
        }
        return values.flatMap(new Tokenizer())
                .name("tokenize")
                .keyBy(word -> word.f0)
                .countWindow(size, slide)
                .sum(1)
                .name("count words per window");
    }

    /**
     * Runs the pipeline to the end of {@code values}' bounded source: per word, the sums of its
     * windows in the order they fired.
     */
    public static Map<String, List<Integer>> run(
            StreamExecutionEnvironment env, DataStream<byte[]> values, int size, int slide)
            throws Exception {
        Map<String, List<Integer>> windows = new TreeMap<>();
        try (CloseableIterator<Tuple2<String, Integer>> results =
                windowedWordCount(values, size, slide).executeAndCollect("windowed word count")) {
            // One subtask counts a word, and its windows reach the collector in the order fired.
            results.forEachRemaining(
                    window ->
                            windows.computeIfAbsent(window.f0, w -> new ArrayList<>())
                                    .add(window.f1));
        }
        return windows;
    }
}
