package dev.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.sluice.benchmarks.GenerationBenchmark.Run;
import dev.sluice.benchmarks.GenerationBenchmark.Speculation;
import java.util.List;
import org.junit.jupiter.api.Test;

class GenerationTablesTest {

    private static Run run(String figure, String topology, double seconds, double cpuSeconds) {
        return new Run(
                figure,
                topology,
                1,
                1,
                "A",
                figure.equals("5"),
                "kafka",
                0,
                1,
                100_000_000,
                seconds,
                0,
                List.of(),
                cpuSeconds,
                PartsCpu.NONE,
                Speculation.NONE);
    }

    private static StreamOutcome stream(double achieved, long starved) {
        return new StreamOutcome(achieved, starved, 0, 0, 0, 0);
    }

    @Test
    void lossIsTheShortfallPerStreamAndNeverNegative() {
        Run paced =
                new Run(
                        "6",
                        "one-to-one",
                        1,
                        1,
                        "B/6",
                        true,
                        "kafka",
                        0.9,
                        1,
                        1,
                        1,
                        100,
                        List.of(stream(100, 0), stream(90, 2), stream(110, 0)),
                        0,
                        PartsCpu.NONE,
                        Speculation.NONE);
        assertThat(paced.losses()).containsExactly(new double[] {0, 0.1, 0}, within(1e-9));
    }

    @Test
    void eachTopologyIsSetAgainstTheAnchorsOfAsManyProducers() {
        String table =
                GenerationTables.markdown(
                        List.of(
                                run("0", GenerationBenchmark.CEILING, 1, 1.5),
                                run("0", GenerationBenchmark.KAFKA_IN_AND_OUT, 2, 3.8),
                                run("4", "one-to-one", 4, 6),
                                run("5", "one-to-one", 2, 3.6)));
        // 100 MB in 1 s and 2 s against 25 MB/s and 50 MB/s; the CPU per GB is that of 0.1 GB.
        assertThat(table)
                .contains(
                        "| one-to-one | 1 × 1 | A | 25 / 25 / 25 | 100 / 100 / 100 | 0.25 | 50 / 50"
                                + " / 50 | 0.50 | 60.0 / 15.0 / 38.0 | 1.50 / 1.50 / 1.90 |")
                .contains(
                        "| one-to-one | 1 × 1 | A | 50 / 50 / 50 | 100 / 100 / 100 | 0.50 | 50 / 50"
                                + " / 50 | 1.00 | 36.0 / 15.0 / 38.0 | 1.80 / 1.50 / 1.90 |");
    }

    private static StreamOutcome paced(
            double achieved, long starved, long p50Micros, long p99Micros, long maxMicros) {
        return new StreamOutcome(
                achieved,
                starved,
                p50Micros * 1000,
                p99Micros * 1000,
                maxMicros * 1000,
                1_600_000_000L);
    }

    private static Run constantSpeedRun(int rep, StreamOutcome... streams) {
        return new Run(
                "6",
                "one-to-one",
                1,
                1,
                "B/6",
                true,
                "kafka",
                0.9,
                rep,
                1,
                1,
                10e6,
                List.of(streams),
                0,
                PartsCpu.NONE,
                Speculation.NONE);
    }

    @Test
    void
            constantSpeedShowsStarvationPerRepetitionAndTheWorstStreamsLatenessMedianAndWorstOverRuns() {
        String table =
                GenerationTables.markdown(
                        List.of(
                                constantSpeedRun(
                                        1,
                                        paced(10e6, 0, 100, 200, 300),
                                        paced(10e6, 0, 50, 500, 700)),
                                constantSpeedRun(
                                        2,
                                        paced(9.5e6, 2, 200, 300, 5000),
                                        paced(10e6, 0, 1, 2, 3)),
                                constantSpeedRun(
                                        3,
                                        paced(10e6, 0, 150, 1200, 1300),
                                        paced(10e6, 0, 10, 20, 30))));
        // Per run the worst stream's p50 / p99 / max: (100, 500, 700), (200, 300, 5000), (150,
        // 1200, 1300) µs; one stream of six lost 5 %.
        assertThat(table)
                .contains(
                        "| one-to-one | kafka | 90 % | 10.0 | 9.5 / 10.0 / 10.0 | 0.83 % | 5.00 % |"
                            + " 0 2 0 | 0.150 / 0.200 | 0.500 / 1.200 | 1.300 / 5.000 | 1.60 |");
    }

    private static Run room(String topology, String job, int rep, double seconds, long starved) {
        List<StreamOutcome> streams =
                topology.startsWith("printer-")
                        ? List.of(paced(2e6, starved, 100, 400, 900), paced(2e6, 0, 100, 300, 500))
                        : List.of(new StreamOutcome(30e6, 0, 0, 0, 0, 0));
        return new Run(
                "room",
                topology,
                2,
                1,
                job,
                true,
                "kafka",
                topology.equals(GenerationBenchmark.GREEDY_ALONE) ? 0 : 0.5,
                rep,
                100_000_000,
                seconds,
                topology.startsWith("printer-") ? 2e6 : 0,
                streams,
                0,
                PartsCpu.NONE,
                Speculation.NONE);
    }

    @Test
    void theRoomShowsEachPrinterAndTheGreedyJobBesideItselfAlone() {
        String table =
                GenerationTables.markdown(
                        List.of(
                                room(GenerationBenchmark.GREEDY_ALONE, "B/3", 1, 1, 0),
                                room(GenerationBenchmark.GREEDY, "B/3", 1, 2, 0),
                                room("printer-1", "B/6", 1, 50, 0),
                                room("printer-2", "B/6", 1, 50, 0),
                                room(GenerationBenchmark.GREEDY_ALONE, "B/3", 2, 2, 0),
                                room(GenerationBenchmark.GREEDY, "B/3", 2, 5, 0),
                                room("printer-1", "B/6", 2, 50, 1),
                                room("printer-2", "B/6", 2, 50, 0)));
        // The greedy job: 50 and 20 MB/s beside the printers, 100 and 50 alone.
        assertThat(table)
                .contains("together request 50 % of the many-to-many Fig. 5 median")
                .contains(
                        "| printer-1 | 2.0 | 2.0 / 2.0 / 2.0 | 0.00 % | 0.00 % | 0 1 | 0.100 /"
                                + " 0.100 | 0.400 / 0.400 | 0.900 / 0.900 | 1.60 |")
                .contains("| printer-2 | 2.0 | 2.0 / 2.0 / 2.0 | 0.00 % | 0.00 % | 0 0 |")
                .contains("| B/3 | 20.0 / 35.0 / 50.0 | 50.0 / 75.0 / 100.0 | 0.47 | 0.50 0.40 |")
                .doesNotContain("Fig. 4, compute")
                .doesNotContain("Fig. 5, compute")
                .doesNotContain("Fig. 6, constant speed");
    }

    private static Run transport(
            String topology,
            boolean compute,
            String transport,
            int rep,
            double seconds,
            PartsCpu parts) {
        return new Run(
                GenerationBenchmark.TRANSPORT,
                topology,
                GenerationBenchmark.producers(topology),
                1,
                "A",
                compute,
                transport,
                0,
                rep,
                100_000_000,
                seconds,
                0,
                List.of(),
                seconds,
                parts,
                Speculation.NONE);
    }

    private static Run anchor(String kind, String job, int rep, double seconds) {
        return new Run(
                GenerationBenchmark.ANCHOR,
                kind,
                1,
                0,
                job,
                kind.equals(GenerationBenchmark.RIP_ONE_THREAD),
                GenerationBenchmark.NO_TRANSPORT,
                0,
                rep,
                1_000_000_000,
                seconds,
                0,
                List.of(),
                seconds,
                PartsCpu.NONE,
                Speculation.NONE);
    }

    @Test
    void theLocalWayIsSetAgainstKafkaAndEachComputeModeAgainstItsOwnAnchor() {
        PartsCpu parts = new PartsCpu(0.4, 0.2, 0.1, 0.05);
        String table =
                GenerationTables.markdown(
                        List.of(
                                anchor(GenerationBenchmark.MEMCPY, "", 1, 0.1),
                                anchor(GenerationBenchmark.MEMCPY, "", 2, 0.05),
                                anchor(GenerationBenchmark.RIP_ONE_THREAD, "A", 1, 20),
                                anchor(GenerationBenchmark.RIP_ONE_THREAD, "B/2", 1, 5),
                                transport("one-to-one", false, "kafka", 1, 1, parts),
                                transport("one-to-one", false, "local", 1, 0.5, parts),
                                transport("one-to-one", true, "kafka", 1, 4, parts),
                                transport("one-to-one", true, "local", 1, 2, parts),
                                transport("one-to-one", false, "kafka", 2, 1, parts),
                                transport("one-to-one", false, "local", 2, 0.25, parts)));
        // 100 MB: compute off, Kafka 100 MB/s, local 200 and 400 against memcpy's 10 000 and
        // 20 000 (median 15 000); compute on, 25 and 50 MB/s against job A's 50 MB/s alone.
        assertThat(table)
                .contains(
                        "| one-to-one | 1 × 1 | off | A | kafka | 100 / 100 / 100 | 10.0 | 1.00 |"
                                + "  | 0.007 | 4.0 / 2.0 / 1.0 / 0.5 |")
                .contains(
                        "| one-to-one | 1 × 1 | off | A | local | 200 / 300 / 400 | 3.8 | 1.00 |"
                                + " 3.00 | 0.020 |")
                .contains(
                        "| one-to-one | 1 × 1 | on | A | local | 50 / 50 / 50 | 20.0 | 1.00 |"
                                + " 2.00 | 1.000 |")
                .contains("| memcpy | - | 10000 / 15000 / 20000 |")
                .contains("| rip one thread | A | 50 / 50 / 50 | 20.00 |")
                .contains("| rip one thread | B/2 | 200 / 200 / 200 | 5.00 |");
    }

    private static Run faulted(String fault, boolean speculation, int rep, long starved) {
        return new Run(
                GenerationBenchmark.FAULTS,
                "many-to-one",
                2,
                1,
                "B/6",
                true,
                "kafka",
                0.8,
                rep,
                1_000_000,
                1,
                100e6,
                List.of(stream(speculation ? 100e6 : 80e6, starved)),
                0,
                PartsCpu.NONE,
                new Speculation(fault, speculation, speculation ? 2 : 0, speculation ? 1 : 0, 0)
                        .counted(
                                speculation
                                        ? "1 of 9 tasks computed on their output location's host;"
                                                + " 2 duplicates issued, 1 won, 50000 bytes wasted"
                                        : "1 of 9 tasks computed on their output location's host"));
    }

    @Test
    void theFaultsSetSpeculationOnBesideOffWithTheDuplicatesAndTheirWaste() {
        String table =
                GenerationTables.markdown(
                        List.of(
                                faulted("kill", false, 1, 3),
                                faulted("kill", true, 1, 0),
                                faulted("kill", false, 2, 1),
                                faulted("kill", true, 2, 0)));
        assertThat(table)
                .contains("**Faults.** Job B/6")
                .contains(
                        "| many-to-one | kill | 80 % | off | 100.0 | 80.0 / 80.0 / 80.0 | 20.00 % |"
                                + " 20.00 % | 3 1 |")
                .contains(
                        "| many-to-one | kill | 80 % | on | 100.0 | 100.0 / 100.0 / 100.0 | 0.00 %"
                                + " | 0.00 % | 0 0 |")
                .contains("| 2 / 1 | 5.0 % / 5.0 % |")
                .contains("| 0 / 0 | 0.0 % / 0.0 % |");
        assertThat(table.indexOf("| off |")).isLessThan(table.indexOf("| on |"));
    }
}
