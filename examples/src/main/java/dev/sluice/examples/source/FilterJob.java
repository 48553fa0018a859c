package dev.sluice.examples.source;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

/**
 * Filter: each value as UTF-8 text, kept when it holds a word, as grep would (examples/README.md).
 */
public final class FilterJob {
    private FilterJob() {}

    /** The pipeline on a stream of values: the values, as text, that contain {@code word}. */
    public static DataStream<String> filter(DataStream<byte[]> values, String word) {
        return values.flatMap(new Containing(word)).name("filter " + word);
    }

    /** Runs the pipeline to the end of {@code values}' bounded source: the values it kept. */
    public static List<String> run(
            StreamExecutionEnvironment env, DataStream<byte[]> values, String word)
            throws Exception {
        List<String> kept = new ArrayList<>();
        try (CloseableIterator<String> results = filter(values, word).executeAndCollect("filter")) {
            results.forEachRemaining(kept::add);
        }
        return kept;
    }

    /** Decodes a value and emits it if it contains the word. */
    static final class Containing implements FlatMapFunction<byte[], String> {
        private static final long serialVersionUID = 1L;

        private final String word;

        Containing(String word) {
            if (word == null || word.isEmpty()) {
                throw new IllegalArgumentException("the filter's word: set a non-empty word");
            }
            this.word = word;
        }

        @Override
        public void flatMap(byte[] value, Collector<String> out) {
            String text = new String(value, StandardCharsets.UTF_8);
            if (text.contains(word)) {
                out.collect(text);
            }
        }
    }
}
