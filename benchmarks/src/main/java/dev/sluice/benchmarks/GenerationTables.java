package dev.sluice.benchmarks;

import dev.sluice.benchmarks.GenerationBenchmark.Run;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/** The generation benchmark's CSV and its Markdown tables (figures 4, 5 and 6 of seed 001). */
final class GenerationTables {
    private GenerationTables() {}

    static String csv(List<Run> runs) {
        StringBuilder out =
                new StringBuilder(
                        "figure,topology,producers,consumers,job,speed,rep,bytes,seconds,mb_per_s,"
                                + "requested_mb_per_s,achieved_mb_per_s_min,achieved_mb_per_s_avg,"
                                + "loss_avg,loss_worst,starvation_events,cpu_s\n");
        for (Run run : runs) {
            double[] achieved = run.achievedBytesPerSecond();
            double[] losses = run.losses();
            out.append(
                    String.format(
                            Locale.ROOT,
                            "%d,%s,%d,%d,%s,%.2f,%d,%d,%.4f,%.2f,%.3f,%.3f,%.3f,%.4f,%.4f,%d,%.2f%n",
                            run.figure(),
                            run.topology(),
                            run.producers(),
                            run.consumers(),
                            run.job(),
                            run.speed(),
                            run.rep(),
                            run.bytes(),
                            run.seconds(),
                            run.mbPerSecond(),
                            run.requestedBytesPerSecond() / 1e6,
                            Arrays.stream(achieved).min().orElse(0) / 1e6,
                            Arrays.stream(achieved).average().orElse(0) / 1e6,
                            Arrays.stream(losses).average().orElse(0),
                            Arrays.stream(losses).max().orElse(0),
                            run.starvationEvents(),
                            run.cpuSeconds()));
        }
        return out.toString();
    }

    static String markdown(List<Run> runs) {
        StringBuilder out = new StringBuilder();
        for (int figure : new int[] {4, 5}) {
            out.append(
                    String.format(
                            Locale.ROOT,
                            "%n**Fig. %d, compute %s.** MB/s from submission to the last chunk"
                                    + " read (min / median / max); the bare producers' ceiling"
                                    + " with as many producers, and the same producers with a"
                                    + " bare consumer reading what they write (Kafka in and"
                                    + " out), same run; the whole machine's CPU (every process"
                                    + " and the kernel) per GB moved and in cores busy,"
                                    + " medians%n%n",
                            figure,
                            figure == 4 ? "disabled" : "enabled"));
            out.append(
                    "| topology | producers × readers | job | Sluice MB/s | ceiling MB/s | Sluice"
                            + " / ceiling | Kafka in and out MB/s | Sluice / Kafka in and out |"
                            + " CPU-s per GB, Sluice / ceiling / in and out | cores busy, Sluice"
                            + " / ceiling / in and out |\n"
                            + "|---|---|---|---|---|---|---|---|---|---|\n");
            for (var group : group(runs, figure).entrySet()) {
                List<Run> of = group.getValue();
                Run first = of.get(0);
                Summary rate = summary(of);
                List<Run> ceilings = anchors(runs, GenerationBenchmark.CEILING, first);
                List<Run> inAndOut = anchors(runs, GenerationBenchmark.KAFKA_IN_AND_OUT, first);
                Summary ceiling = summary(ceilings);
                Summary kafka = summary(inAndOut);
                out.append(
                        String.format(
                                Locale.ROOT,
                                "| %s | %d × %d | %s | %s | %s | %.2f | %s | %.2f | %.1f / %.1f /"
                                        + " %.1f | %.2f / %.2f / %.2f |%n",
                                first.topology(),
                                first.producers(),
                                first.consumers(),
                                first.job(),
                                rate.format("%.0f"),
                                ceiling.format("%.0f"),
                                rate.ratioTo(ceiling),
                                kafka.format("%.0f"),
                                rate.ratioTo(kafka),
                                median(of, Run::cpuSecondsPerGb),
                                median(ceilings, Run::cpuSecondsPerGb),
                                median(inAndOut, Run::cpuSecondsPerGb),
                                median(of, Run::coresBusy),
                                median(ceilings, Run::coresBusy),
                                median(inAndOut, Run::coresBusy)));
            }
        }
        out.append(
                "\n**Fig. 6, constant speed.** Job "
                        + runs.stream()
                                .filter(r -> r.figure() == 6)
                                .map(Run::job)
                                .findFirst()
                                .orElse("-")
                        + " with compute; each stream read at a share of the topology's Fig. 5"
                        + " median; loss = 1 − achieved / requested per stream\n\n");
        out.append(
                "| topology | speed | requested MB/s per stream | achieved MB/s per stream"
                        + " (min / median / max) | loss avg | loss worst | starvation events |\n"
                        + "|---|---|---|---|---|---|---|\n");
        for (var group : group(runs, 6).entrySet()) {
            List<Run> of = group.getValue();
            Run first = of.get(0);
            double[] achieved =
                    of.stream()
                            .flatMapToDouble(r -> Arrays.stream(r.achievedBytesPerSecond()))
                            .map(a -> a / 1e6)
                            .toArray();
            double[] losses = of.stream().flatMapToDouble(r -> Arrays.stream(r.losses())).toArray();
            out.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %.0f %% | %.1f | %s | %.2f %% | %.2f %% | %d |%n",
                            first.topology(),
                            first.speed() * 100,
                            first.requestedBytesPerSecond() / 1e6,
                            Summary.of(achieved).format("%.1f"),
                            100 * Arrays.stream(losses).average().orElse(0),
                            100 * Arrays.stream(losses).max().orElse(0),
                            of.stream().mapToLong(Run::starvationEvents).sum()));
        }
        return out.toString();
    }

    private static Map<String, List<Run>> group(List<Run> runs, int figure) {
        return runs.stream()
                .filter(r -> r.figure() == figure)
                .collect(
                        Collectors.groupingBy(
                                r -> r.topology() + "/" + r.job() + "/" + r.speed(),
                                LinkedHashMap::new,
                                Collectors.toList()));
    }

    /**
     * The anchor runs ({@code figure} 0) of {@code kind} beside {@code run}: same producers, job.
     */
    private static List<Run> anchors(List<Run> runs, String kind, Run run) {
        return runs.stream()
                .filter(
                        r ->
                                r.figure() == 0
                                        && r.topology().equals(kind)
                                        && r.producers() == run.producers()
                                        && r.job().equals(run.job()))
                .toList();
    }

    private static Summary summary(List<Run> runs) {
        return Summary.of(runs.stream().mapToDouble(Run::mbPerSecond).toArray());
    }

    private static double median(List<Run> runs, ToDoubleFunction<Run> metric) {
        return Summary.of(runs.stream().mapToDouble(metric).toArray()).median();
    }
}
