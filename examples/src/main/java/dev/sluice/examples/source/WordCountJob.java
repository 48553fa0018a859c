package dev.sluice.examples.source;

import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

/**
 * Word count: splits each value into words, keys them by word and keeps a running sum per word,
 * emitting (word, count so far) for every word read (examples/README.md).
 */
public final class WordCountJob {
    private WordCountJob() {}

    /** The pipeline on a stream of values: (word, occurrences so far), once per occurrence. */
    public static DataStream<Tuple2<String, Integer>> wordCount(DataStream<byte[]> values) {
        return values.flatMap(new Tokenizer())
                .name("tokenize")
                .keyBy(word -> word.f0)
                .sum(1)
                .name("count words");
    }

    /**
     * Runs the pipeline to the end of {@code values}' bounded source: each word's last running sum,
     * which is its count over the whole input.
     */
    public static Map<String, Integer> run(
            StreamExecutionEnvironment env, DataStream<byte[]> values) throws Exception {
        Map<String, Integer> counts = new TreeMap<>();
        try (CloseableIterator<Tuple2<String, Integer>> results =
                wordCount(values).executeAndCollect("word count")) {
            // A word's sums come in order, one subtask counting it: the largest is the last.
            results.forEachRemaining(count -> counts.merge(count.f0, count.f1, Math::max));
        }
        return counts;
    }
}
