package dev.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ReadResultTest {

    @Test
    void aNodesResultLineCarriesEveryStreamsOutcome() {
        ReadResult node =
                new ReadResult(
                        1000,
                        4,
                        1_700_000_000_000_000_000L,
                        1_700_000_001_000_000_000L,
                        List.of(
                                new StreamOutcome(
                                        2_500_000, 0, 120_000, 900_000, 1_400_000, 1_600_000_000L),
                                new StreamOutcome(
                                        2_400_000,
                                        3,
                                        150_000,
                                        4_000_000,
                                        9_000_000,
                                        1_600_000_000L)));

        assertThat(ReadResult.parse(node.line())).isEqualTo(node);
    }

    @Test
    void aJobsNodesTogetherSpanTheFirstChunkOfAnyToTheLastOfAll() {
        StreamOutcome a = new StreamOutcome(1, 0, 0, 0, 0, 0);
        StreamOutcome b = new StreamOutcome(2, 1, 0, 0, 0, 0);

        ReadResult job =
                ReadResult.of(
                        List.of(
                                new ReadResult(10, 1, 500, 900, List.of(a)),
                                new ReadResult(20, 2, 400, 800, List.of(b))));

        assertThat(job).isEqualTo(new ReadResult(30, 3, 400, 900, List.of(a, b)));
    }

    @Test
    void aStreamOutcomeWithAFieldMissingIsRefused() {
        assertThatThrownBy(() -> StreamOutcome.parse("2500000:0:120000:900000:1400000"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("6 fields")
                .hasMessageContaining("2500000:0:120000:900000:1400000");
    }
}
