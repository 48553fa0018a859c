package dev.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.sluice.benchmarks.GenerationBenchmark.Run;
import java.util.List;
import org.junit.jupiter.api.Test;

class GenerationTablesTest {

    private static Run run(int figure, String topology, double seconds, double cpuSeconds) {
        return new Run(
                figure,
                topology,
                1,
                1,
                "A",
                0,
                1,
                100_000_000,
                seconds,
                0,
                new double[0],
                0,
                cpuSeconds);
    }

    @Test
    void lossIsTheShortfallPerStreamAndNeverNegative() {
        Run paced =
                new Run(
                        6,
                        "one-to-one",
                        1,
                        1,
                        "B/6",
                        0.9,
                        1,
                        1,
                        1,
                        100,
                        new double[] {100, 90, 110},
                        2,
                        0);
        assertThat(paced.losses()).containsExactly(new double[] {0, 0.1, 0}, within(1e-9));
    }

    @Test
    void eachTopologyIsSetAgainstTheAnchorsOfAsManyProducers() {
        String table =
                GenerationTables.markdown(
                        List.of(
                                run(0, GenerationBenchmark.CEILING, 1, 1.5),
                                run(0, GenerationBenchmark.KAFKA_IN_AND_OUT, 2, 3.8),
                                run(4, "one-to-one", 4, 6),
                                run(5, "one-to-one", 2, 3.6)));
        // 100 MB in 1 s and 2 s against 25 MB/s and 50 MB/s; the CPU per GB is that of 0.1 GB.
        assertThat(table)
                .contains(
                        "| one-to-one | 1 × 1 | A | 25 / 25 / 25 | 100 / 100 / 100 | 0.25 | 50 / 50"
                                + " / 50 | 0.50 | 60.0 / 15.0 / 38.0 | 1.50 / 1.50 / 1.90 |")
                .contains(
                        "| one-to-one | 1 × 1 | A | 50 / 50 / 50 | 100 / 100 / 100 | 0.50 | 50 / 50"
                                + " / 50 | 1.00 | 36.0 / 15.0 / 38.0 | 1.80 / 1.50 / 1.90 |");
    }
}
