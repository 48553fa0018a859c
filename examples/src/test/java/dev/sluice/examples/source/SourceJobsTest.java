package dev.sluice.examples.source;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;

class SourceJobsTest {
    @Test
    void aSlideLongerThanTheWindowIsRefusedWithWhatToSet() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        assertThatThrownBy(
                        () ->
                                WindowedWordCountJob.windowedWordCount(
                                        env.fromData(new byte[0]), 2, 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("count window of 2 sliding by 3: set 1 ≤ slide ≤ size");
    }

    @Test
    void anEmptyFilterWordIsRefusedWithWhatToSet() {
        assertThatThrownBy(() -> new FilterJob.Containing(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the filter's word: set a non-empty word");
    }
}
