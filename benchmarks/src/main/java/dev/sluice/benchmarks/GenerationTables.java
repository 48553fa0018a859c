package dev.sluice.benchmarks;

import dev.sluice.benchmarks.GenerationBenchmark.Run;
import dev.sluice.benchmarks.ResultTable.Column;
import dev.sluice.client.job.Transport;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The generation benchmark's CSV and its Markdown tables (Fig. 4, 5 and 6, the printer room and the
 * transports of benchmarks/README.md, Generation and Transport).
 */
final class GenerationTables {
    private GenerationTables() {}

    static ResultTable csv(List<Run> runs) {
        return ResultTable.of(
                runs,
                List.of(
                        new Column<>("figure", Run::figure),
                        new Column<>("topology", Run::topology),
                        new Column<>("producers", "%d", Run::producers),
                        new Column<>("consumers", "%d", Run::consumers),
                        new Column<>("job", Run::job),
                        new Column<>("speed", "%.2f", Run::speed),
                        new Column<>("rep", "%d", Run::rep),
                        new Column<>("bytes", "%d", Run::bytes),
                        new Column<>("seconds", "%.4f", Run::seconds),
                        new Column<>("mb_per_s", "%.2f", Run::mbPerSecond),
                        new Column<>(
                                "requested_mb_per_s",
                                "%.3f",
                                run -> run.requestedBytesPerSecond() / 1e6),
                        new Column<>(
                                "achieved_mb_per_s_min",
                                "%.3f",
                                run ->
                                        Arrays.stream(run.achievedBytesPerSecond()).min().orElse(0)
                                                / 1e6),
                        new Column<>(
                                "achieved_mb_per_s_avg",
                                "%.3f",
                                run ->
                                        Arrays.stream(run.achievedBytesPerSecond())
                                                        .average()
                                                        .orElse(0)
                                                / 1e6),
                        new Column<>(
                                "loss_avg",
                                "%.4f",
                                run -> Arrays.stream(run.losses()).average().orElse(0)),
                        new Column<>(
                                "loss_worst",
                                "%.4f",
                                run -> Arrays.stream(run.losses()).max().orElse(0)),
                        new Column<>("starvation_events", "%d", Run::starvationEvents),
                        new Column<>(
                                "lateness_p50_ms", "%.3f", run -> run.latenessP50Nanos() / 1e6),
                        new Column<>(
                                "lateness_p99_ms", "%.3f", run -> run.latenessP99Nanos() / 1e6),
                        new Column<>(
                                "lateness_max_ms", "%.3f", run -> run.latenessMaxNanos() / 1e6),
                        new Column<>("start_delay_s", "%.3f", run -> run.startDelayNanos() / 1e9),
                        new Column<>("cpu_s", "%.2f", Run::cpuSeconds),
                        new Column<>("compute", Run::compute),
                        new Column<>("transport", Run::transport),
                        new Column<>("cpu_s_harness", "%.2f", run -> run.parts().harness()),
                        new Column<>("cpu_s_broker", "%.2f", run -> run.parts().broker()),
                        new Column<>("cpu_s_daemon", "%.2f", run -> run.parts().daemon()),
                        new Column<>("cpu_s_readers", "%.2f", run -> run.parts().readers()),
                        new Column<>("fault", run -> run.speculation().fault()),
                        new Column<>("speculation", run -> run.speculation().on()),
                        new Column<>("duplicates_issued", "%d", run -> run.speculation().issued()),
                        new Column<>("duplicates_won", "%d", run -> run.speculation().won()),
                        new Column<>(
                                "bytes_wasted", "%d", run -> run.speculation().bytesWasted())));
    }

    static String markdown(List<Run> runs) {
        StringBuilder out = new StringBuilder();
        for (String figure :
                List.of(GenerationBenchmark.COMPUTE_OFF, GenerationBenchmark.COMPUTE_ON)) {
            List<List<Run>> groups = group(runs, figure, r -> r.topology() + "/" + r.job());
            if (groups.isEmpty()) {
                continue;
            }
            out.append(
                    String.format(
                            Locale.ROOT,
                            "%n**Fig. %s, compute %s.** MB/s from submission to the last chunk"
                                    + " read (min / median / max); the bare producers' ceiling"
                                    + " with as many producers, and the same producers with a"
                                    + " bare consumer reading what they write (Kafka in and"
                                    + " out), same run; the whole machine's CPU (every process"
                                    + " and the kernel) per GB moved and in cores busy,"
                                    + " medians%n%n",
                            figure,
                            figure.equals(GenerationBenchmark.COMPUTE_OFF)
                                    ? "disabled"
                                    : "enabled"));
            ResultTable table =
                    new ResultTable()
                            .column("topology")
                            .column("producers × readers")
                            .column("job")
                            .column("Sluice MB/s")
                            .column("ceiling MB/s")
                            .column("Sluice / ceiling", "%.2f")
                            .column("Kafka in and out MB/s")
                            .column("Sluice / Kafka in and out", "%.2f")
                            .column("CPU-s per GB, Sluice / ceiling / in and out")
                            .column("cores busy, Sluice / ceiling / in and out");
            for (List<Run> of : groups) {
                Run first = of.get(0);
                Summary rate = summary(of);
                List<Run> ceilings = anchors(runs, GenerationBenchmark.CEILING, first);
                List<Run> inAndOut = anchors(runs, GenerationBenchmark.KAFKA_IN_AND_OUT, first);
                Summary ceiling = summary(ceilings);
                Summary kafka = summary(inAndOut);
                table.row(
                        first.topology(),
                        first.producers() + " × " + first.consumers(),
                        first.job(),
                        rate.format("%.0f"),
                        ceiling.format("%.0f"),
                        rate.ratioTo(ceiling),
                        kafka.format("%.0f"),
                        rate.ratioTo(kafka),
                        String.format(
                                Locale.ROOT,
                                "%.1f / %.1f / %.1f",
                                median(of, Run::cpuSecondsPerGb),
                                median(ceilings, Run::cpuSecondsPerGb),
                                median(inAndOut, Run::cpuSecondsPerGb)),
                        String.format(
                                Locale.ROOT,
                                "%.2f / %.2f / %.2f",
                                median(of, Run::coresBusy),
                                median(ceilings, Run::coresBusy),
                                median(inAndOut, Run::coresBusy)));
            }
            out.append(table.markdown());
        }
        List<List<Run>> constantSpeed =
                group(
                        runs,
                        GenerationBenchmark.CONSTANT_SPEED,
                        r -> r.topology() + "/" + r.speed() + "/" + r.transport());
        if (!constantSpeed.isEmpty()) {
            out.append(
                    "\n**Fig. 6, constant speed.** Job "
                            + constantSpeed.get(0).get(0).job()
                            + " with compute; each stream read at a share of the topology's Fig. 5"
                            + " median; "
                            + PACED_TERMS
                            + "\n\n");
            ResultTable table =
                    pacedTable(
                            new ResultTable()
                                    .column("topology")
                                    .column("transport")
                                    .column("speed", "%.0f %%"));
            for (List<Run> of : constantSpeed) {
                Run first = of.get(0);
                table.row(pacedRow(of, first.topology(), first.transport(), first.speed() * 100));
            }
            out.append(table.markdown());
        }
        faults(runs, out);
        printerRoom(runs, out);
        transports(runs, out);
        return out.toString();
    }

    /**
     * The transport figure: per topology, compute mode and job, Kafka's runs and the local way's,
     * the local way against Kafka, and each against its anchor (memcpy with compute disabled, the
     * raster processor alone on one thread with compute enabled); then the anchors.
     */
    private static void transports(List<Run> runs, StringBuilder out) {
        List<List<Run>> groups =
                group(
                        runs,
                        GenerationBenchmark.TRANSPORT,
                        r ->
                                r.topology()
                                        + "/"
                                        + r.compute()
                                        + "/"
                                        + r.job()
                                        + "/"
                                        + r.transport());
        List<Run> memcpy = anchors(runs, GenerationBenchmark.MEMCPY);
        if (groups.isEmpty() || memcpy.isEmpty()) {
            return;
        }
        out.append(
                "\n**Transports.** MB/s from submission to the last chunk read (min / median /"
                        + " max), through Kafka and the local way, same run; local / Kafka is of"
                        + " the medians; the anchor is single-thread memcpy with compute disabled"
                        + " and the raster processor alone on one thread (same job) with compute"
                        + " enabled; the whole machine's CPU per GB moved and in cores busy, and"
                        + " per GB by part (this JVM: Flink's producers, sink and scheduler; the"
                        + " Kafka broker; sluice-brokerd; the output nodes), medians\n\n");
        ResultTable table =
                new ResultTable()
                        .column("topology")
                        .column("producers × readers")
                        .column("compute")
                        .column("job")
                        .column("transport")
                        .column("MB/s")
                        .column("CPU-s per GB")
                        .column("cores busy", "%.2f")
                        .column("local / kafka")
                        .column("MB/s / anchor (off: memcpy, on: RIP one thread)", "%.3f")
                        .column("CPU-s per GB: Flink / broker / daemon / readers");
        for (List<Run> of : groups) {
            Run first = of.get(0);
            Summary rate = summary(of);
            List<Run> anchor =
                    first.compute()
                            ? anchors(runs, GenerationBenchmark.RIP_ONE_THREAD).stream()
                                    .filter(r -> r.job().equals(first.job()))
                                    .toList()
                            : memcpy;
            String versusKafka = "";
            if (!first.transport().equals(Transport.KAFKA.json())) {
                List<Run> kafka =
                        runs.stream()
                                .filter(
                                        r ->
                                                r.figure().equals(first.figure())
                                                        && r.topology().equals(first.topology())
                                                        && r.compute() == first.compute()
                                                        && r.job().equals(first.job())
                                                        && r.transport()
                                                                .equals(Transport.KAFKA.json()))
                                .toList();
                versusKafka =
                        kafka.isEmpty()
                                ? ""
                                : String.format(Locale.ROOT, "%.2f", rate.ratioTo(summary(kafka)));
            }
            table.row(
                    first.topology(),
                    first.producers() + " × " + first.consumers(),
                    first.compute() ? "on" : "off",
                    first.job(),
                    first.transport(),
                    rate.format("%.0f"),
                    String.format(Locale.ROOT, "%.1f", median(of, Run::cpuSecondsPerGb)),
                    median(of, Run::coresBusy),
                    versusKafka,
                    anchor.isEmpty() ? Double.NaN : rate.ratioTo(summary(anchor)),
                    String.format(
                            Locale.ROOT,
                            "%.1f / %.1f / %.1f / %.1f",
                            median(of, r -> r.cpuSecondsPerGb(PartsCpu::harness)),
                            median(of, r -> r.cpuSecondsPerGb(PartsCpu::broker)),
                            median(of, r -> r.cpuSecondsPerGb(PartsCpu::daemon)),
                            median(of, r -> r.cpuSecondsPerGb(PartsCpu::readers))));
        }
        out.append(table.markdown());
        out.append(
                "\n**Transports, the anchors.** MB/s (min / median / max): single-thread"
                        + " memcpy of chunk-sized pieces into a 1 GiB ring in the harness JVM,"
                        + " and the raster processor computing the whole job on one thread (no"
                        + " Flink, no Kafka); the whole machine's CPU per GB, median\n\n");
        ResultTable anchorTable =
                new ResultTable()
                        .column("anchor")
                        .column("job")
                        .column("MB/s")
                        .column("CPU-s per GB", "%.2f");
        List<List<Run>> byKind =
                group(
                        runs.stream()
                                .filter(
                                        r ->
                                                r.topology().equals(GenerationBenchmark.MEMCPY)
                                                        || r.topology()
                                                                .equals(
                                                                        GenerationBenchmark
                                                                                .RIP_ONE_THREAD))
                                .toList(),
                        GenerationBenchmark.ANCHOR,
                        r -> r.topology() + "/" + r.job());
        for (List<Run> of : byKind) {
            anchorTable.row(
                    of.get(0).topology(),
                    of.get(0).job().isEmpty() ? "-" : of.get(0).job(),
                    summary(of).format("%.0f"),
                    median(of, Run::cpuSecondsPerGb));
        }
        out.append(anchorTable.markdown());
    }

    /** The anchor runs of {@code kind} whatever their producers and job (memcpy, the RIP). */
    private static List<Run> anchors(List<Run> runs, String kind) {
        return runs.stream()
                .filter(
                        r ->
                                r.figure().equals(GenerationBenchmark.ANCHOR)
                                        && r.topology().equals(kind))
                .toList();
    }

    private static final String PACED_TERMS =
            "loss = 1 − achieved / requested per stream; starvation events in each repetition;"
                    + " a chunk's lateness is its handout past its due time, a run's the worst"
                    + " stream's (median of the runs / worst run); the start buffer is the"
                    + " readers' start delay";

    /** {@code leading}'s columns, then those of a paced job's runs ({@link #pacedRow}). */
    private static ResultTable pacedTable(ResultTable leading) {
        return leading.column("requested MB/s per stream", "%.1f")
                .column("achieved MB/s per stream (min / median / max)")
                .column("loss avg", "%.2f %%")
                .column("loss worst", "%.2f %%")
                .column("starvation events per repetition")
                .column("lateness p50 ms")
                .column("lateness p99 ms")
                .column("lateness max ms")
                .column("start buffer s", "%.2f");
    }

    /** The {@code leading} cells, then those of {@link #pacedTable} for one paced job's runs. */
    private static Object[] pacedRow(List<Run> of, Object... leading) {
        double[] achieved =
                of.stream()
                        .flatMapToDouble(r -> Arrays.stream(r.achievedBytesPerSecond()))
                        .map(a -> a / 1e6)
                        .toArray();
        double[] losses = of.stream().flatMapToDouble(r -> Arrays.stream(r.losses())).toArray();
        return Stream.concat(
                        Arrays.stream(leading),
                        Stream.of(
                                of.get(0).requestedBytesPerSecond() / 1e6,
                                Summary.of(achieved).format("%.1f"),
                                100 * Arrays.stream(losses).average().orElse(0),
                                100 * Arrays.stream(losses).max().orElse(0),
                                byRepetition(of).stream()
                                        .map(r -> Long.toString(r.starvationEvents()))
                                        .collect(Collectors.joining(" ")),
                                medianAndWorstMillis(of, Run::latenessP50Nanos),
                                medianAndWorstMillis(of, Run::latenessP99Nanos),
                                medianAndWorstMillis(of, Run::latenessMaxNanos),
                                median(of, Run::startDelayNanos) / 1e9))
                .toArray();
    }

    /**
     * The faults figure: per topology, fault and speed, speculation off (the anchor) and on side by
     * side, the paced columns of Fig. 6 and the duplicates: issued and won (median of the
     * repetitions) and the bytes wasted as a share of the job's (median and worst).
     */
    private static void faults(List<Run> runs, StringBuilder out) {
        List<List<Run>> groups =
                group(
                        runs,
                        GenerationBenchmark.FAULTS,
                        r ->
                                r.topology()
                                        + "/"
                                        + r.speculation().fault()
                                        + "/"
                                        + r.speed()
                                        + "/"
                                        + r.speculation().on());
        if (groups.isEmpty()) {
            return;
        }
        out.append(
                "\n**Faults.** Job "
                        + groups.get(0).get(0).job()
                        + " with compute, two producers, one of them killed halfway through the"
                        + " job (Flink restores it from its checkpoint) or slowed four times for"
                        + " the whole job; each stream read at a share of the topology's Fig. 5"
                        + " median, its readers starting with the buffer that rides out a"
                        + " producer's loss; speculation off (the anchor) and on; "
                        + PACED_TERMS
                        + "; duplicates issued and won, medians of the repetitions; bytes wasted,"
                        + " the losing copies' share of the job's bytes (median / worst)\n\n");
        ResultTable table =
                pacedTable(
                                new ResultTable()
                                        .column("topology")
                                        .column("fault")
                                        .column("speed", "%.0f %%")
                                        .column("speculation"))
                        .column("duplicates issued / won")
                        .column("bytes wasted");
        groups.stream()
                .sorted(
                        Comparator.comparing((List<Run> of) -> of.get(0).topology())
                                .thenComparing(of -> of.get(0).speculation().fault())
                                .thenComparingDouble(of -> of.get(0).speed())
                                .thenComparing(of -> of.get(0).speculation().on()))
                .forEach(of -> table.row(faultRow(of)));
        out.append(table.markdown());
    }

    /** A row of the faults table: the paced columns of Fig. 6, then the duplicates. */
    private static Object[] faultRow(List<Run> of) {
        Run first = of.get(0);
        Object[] paced =
                pacedRow(
                        of,
                        first.topology(),
                        first.speculation().fault(),
                        first.speed() * 100,
                        first.speculation().on() ? "on" : "off");
        String duplicates =
                String.format(
                        Locale.ROOT,
                        "%.0f / %.0f",
                        median(of, r -> r.speculation().issued()),
                        median(of, r -> r.speculation().won()));
        Summary wasted =
                Summary.of(
                        of.stream()
                                .mapToDouble(r -> 100.0 * r.speculation().bytesWasted() / r.bytes())
                                .toArray());
        String waste =
                String.format(Locale.ROOT, "%.1f %% / %.1f %%", wasted.median(), wasted.max());
        return Stream.concat(Arrays.stream(paced), Stream.of(duplicates, waste)).toArray();
    }

    /** The printer room's two tables: its paced jobs, one row per printer, and its greedy job. */
    private static void printerRoom(List<Run> runs, StringBuilder out) {
        String room = GenerationBenchmark.ROOM;
        List<List<Run>> printers =
                group(
                        runs.stream()
                                .filter(r -> GenerationBenchmark.PRINTERS.contains(r.topology()))
                                .toList(),
                        room,
                        Run::topology);
        List<Run> greedy = runsOf(runs, GenerationBenchmark.GREEDY);
        List<Run> alone = runsOf(runs, GenerationBenchmark.GREEDY_ALONE);
        if (printers.isEmpty() || greedy.isEmpty() || alone.isEmpty()) {
            return;
        }
        Run paced = printers.get(0).get(0);
        out.append(
                String.format(
                        Locale.ROOT,
                        "%n**Printer room.** Four paced jobs %s with compute at once, each on a"
                                + " printer of its own (16 streams on four output locations),"
                                + " beside a greedy job %s (unpaced reader, a fifth output"
                                + " location) submitted with them, %d producers; the paced jobs"
                                + " together request %.0f %% of the many-to-many Fig. 5 median;"
                                + " %s%n%n",
                        paced.job(),
                        greedy.get(0).job(),
                        paced.producers(),
                        paced.speed() * 100,
                        PACED_TERMS));
        ResultTable table = pacedTable(new ResultTable().column("printer"));
        for (List<Run> of : printers) {
            table.row(pacedRow(of, of.get(0).topology()));
        }
        out.append(table.markdown());
        Summary beside = summary(greedy);
        Summary by = summary(alone);
        out.append(
                "\n**Printer room, the greedy job.** MB/s from its submission to its last chunk"
                        + " read (min / median / max), beside the paced jobs and alone (same"
                        + " parts, same repetition, just before)\n\n");
        out.append(
                new ResultTable()
                        .column("job")
                        .column("MB/s beside the paced jobs")
                        .column("MB/s alone")
                        .column("beside / alone", "%.2f")
                        .column("beside / alone per repetition")
                        .row(
                                greedy.get(0).job(),
                                beside.format("%.1f"),
                                by.format("%.1f"),
                                beside.ratioTo(by),
                                ratioPerRepetition(greedy, alone))
                        .markdown());
    }

    /** Per repetition of {@code runs}, its MB/s over that of the same repetition in {@code to}. */
    private static String ratioPerRepetition(List<Run> runs, List<Run> to) {
        return byRepetition(runs).stream()
                .map(
                        r ->
                                to.stream()
                                        .filter(t -> t.rep() == r.rep())
                                        .findFirst()
                                        .map(
                                                t ->
                                                        String.format(
                                                                Locale.ROOT,
                                                                "%.2f",
                                                                r.mbPerSecond() / t.mbPerSecond()))
                                        .orElse("-"))
                .collect(Collectors.joining(" "));
    }

    private static List<Run> runsOf(List<Run> runs, String topology) {
        return runs.stream()
                .filter(
                        r ->
                                r.figure().equals(GenerationBenchmark.ROOM)
                                        && r.topology().equals(topology))
                .toList();
    }

    /** The runs of {@code figure}, grouped by {@code key}, in the order each key first came. */
    private static List<List<Run>> group(List<Run> runs, String figure, Function<Run, String> key) {
        Map<String, List<Run>> groups =
                runs.stream()
                        .filter(r -> r.figure().equals(figure))
                        .collect(
                                Collectors.groupingBy(
                                        key, LinkedHashMap::new, Collectors.toList()));
        return List.copyOf(groups.values());
    }

    private static List<Run> byRepetition(List<Run> runs) {
        return runs.stream().sorted(Comparator.comparingInt(Run::rep)).toList();
    }

    /** The anchor runs of {@code kind} beside {@code run}: same producers, job. */
    private static List<Run> anchors(List<Run> runs, String kind, Run run) {
        return runs.stream()
                .filter(
                        r ->
                                r.figure().equals(GenerationBenchmark.ANCHOR)
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

    /** "median / worst" over the runs, in milliseconds, of a metric in nanoseconds. */
    private static String medianAndWorstMillis(List<Run> runs, ToDoubleFunction<Run> nanos) {
        Summary summary = Summary.of(runs.stream().mapToDouble(nanos).toArray());
        return String.format(
                Locale.ROOT, "%.3f / %.3f", summary.median() / 1e6, summary.max() / 1e6);
    }
}
