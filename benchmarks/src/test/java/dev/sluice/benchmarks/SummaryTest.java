package dev.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SummaryTest {
    @Test
    void oddCountTakesTheMiddleValue() {
        assertThat(Summary.of(5, 1, 3)).isEqualTo(new Summary(1, 3, 5));
    }

    @Test
    void evenCountAveragesTheTwoMiddleValues() {
        assertThat(Summary.of(4, 1, 2, 10)).isEqualTo(new Summary(1, 3, 10));
    }

    @Test
    void ratioComparesMedians() {
        assertThat(Summary.of(8, 9, 10).ratioTo(Summary.of(1, 10, 100))).isEqualTo(0.9);
    }

    @Test
    void noValuesIsAnError() {
        assertThatThrownBy(Summary::of).isInstanceOf(IllegalArgumentException.class);
    }
}
