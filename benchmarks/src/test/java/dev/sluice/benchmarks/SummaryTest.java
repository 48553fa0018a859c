package dev.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
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

    record Run(String system, int size, double value) implements Measurement {}

    @Test
    void tablesSummarizeEachSystemAtASizeAndCompareMedians() {
        List<Run> runs =
                List.of(
                        new Run("sluice", 100, 3),
                        new Run("sluice", 100, 1),
                        new Run("sluice", 100, 2),
                        new Run("anchor", 100, 4),
                        new Run("sluice", 1024, 99));
        Map<String, Summary> at100 = Summary.bySystem(runs, 100, Run::value);
        assertThat(at100).containsOnlyKeys("sluice", "anchor");
        assertThat(at100.get("sluice")).isEqualTo(new Summary(1, 2, 3));
        assertThat(at100.get("sluice").format("%.1f")).isEqualTo("1.0 / 2.0 / 3.0");
        assertThat(Summary.ratio(at100, "sluice", "anchor")).isEqualTo("0.50");
        assertThat(Summary.ratio(at100, "sluice", "missing")).isEmpty();
    }
}
