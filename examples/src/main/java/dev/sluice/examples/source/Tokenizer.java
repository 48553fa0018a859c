package dev.sluice.examples.source;

import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.util.Collector;

/**
 * The word counts' first step: (word, 1) for every word of a value, as UTF-8 text split at spaces;
 * runs of spaces make no empty words.
 */
final class Tokenizer implements FlatMapFunction<byte[], Tuple2<String, Integer>> {
    private static final long serialVersionUID = 1L;

    @Override
    public void flatMap(byte[] value, Collector<Tuple2<String, Integer>> out) {
        for (String word : new String(value, StandardCharsets.UTF_8).split(" ")) {
            if (!word.isEmpty()) {
                out.collect(Tuple2.of(word, 1));
            }
        }
    }
}
