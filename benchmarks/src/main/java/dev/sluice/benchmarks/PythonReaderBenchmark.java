package dev.sluice.benchmarks;

import dev.sluice.benchmarks.ResultTable.Column;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The Python reader benchmark (benchmarks/README.md, "Python reader"): handoff-writer fills a
 * segment as in the handoff benchmark, and the Python reader (python/, {@code python_reader.py})
 * and the Java reader ({@link SegmentTaskReader}) each read it in turn doing the same task: 1 MiB
 * records summed (GB/s), 100 B records counted (M records/s). K repetitions, the order of the two
 * rotated per repetition; writes {@code python.csv} (one row per run) and {@code python.md} (min /
 * median / max, Python over Java, and the targets) to the results directory.
 *
 * <p>Arguments: {@code --writer PATH} (handoff-writer), {@code --python PATH} (the interpreter of
 * the project's .venv, where python/ is installed), {@code --script PATH} (python_reader.py),
 * {@code --results DIR}, {@code --reps K} (5), {@code --mib V} (2048 MiB of values per run).
 */
public final class PythonReaderBenchmark {
    private static final long MIB = 1 << 20;
    // Size, task, and the Python reader's target (benchmarks/README.md, Python reader).
    private static final List<Shape> SHAPES =
            List.of(
                    new Shape(1 << 20, "sum", 5.0, "GB/s"),
                    new Shape(100, "count", 20.0, "M records/s"));
    private static final String[] SYSTEMS = {"python", "java"};
    // As HandoffBenchmark: a record's bytes in an object besides its value.
    private static final long ROW_OVERHEAD_BYTES = 32;
    private static final long WARMUP_OBJECTS = 16_384;

    private final Path writer;
    private final Path python;
    private final Path script;
    private final long volume;
    private int runs;

    record Shape(int size, String task, double target, String unit) {}

    /** One run: the measured window of a reader doing its task over {@code records} records. */
    record Run(
            String system,
            int size,
            String task,
            int rep,
            long records,
            double seconds,
            double cpuSeconds)
            implements Measurement {
        double gigabytesPerSecond() {
            return records * (double) size / seconds / 1e9;
        }

        double megaRecordsPerSecond() {
            return records / seconds / 1e6;
        }

        /** The metric the task is judged by: GB/s for a sum, M records/s for a count. */
        double metric() {
            return task.equals("sum") ? gigabytesPerSecond() : megaRecordsPerSecond();
        }
    }

    private PythonReaderBenchmark(Path writer, Path python, Path script, long volume) {
        this.writer = writer;
        this.python = python;
        this.script = script;
        this.volume = volume;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        PythonReaderBenchmark benchmark =
                new PythonReaderBenchmark(
                        Path.of(options.get("--writer")),
                        Path.of(options.get("--python")),
                        Path.of(options.get("--script")),
                        Long.parseLong(options.getOrDefault("--mib", "2048")) * MIB);
        Path results = Path.of(options.getOrDefault("--results", "benchmarks/results"));
        int reps = Integer.parseInt(options.getOrDefault("--reps", "5"));
        List<Run> runs = new ArrayList<>();
        for (Shape shape : SHAPES) {
            for (int rep = 1; rep <= reps; rep++) {
                // Rotating the order spreads the machine's drift over both readers.
                for (int k = 0; k < SYSTEMS.length; k++) {
                    String system = SYSTEMS[(k + rep) % SYSTEMS.length];
                    Run run = benchmark.run(system, shape, rep);
                    System.err.printf(
                            Locale.ROOT,
                            "%-6s %8d B %-5s rep %d  %7.2f GB/s  %7.2f M records/s  %5.2f CPU-s%n",
                            system,
                            shape.size(),
                            shape.task(),
                            rep,
                            run.gigabytesPerSecond(),
                            run.megaRecordsPerSecond(),
                            run.cpuSeconds());
                    runs.add(run);
                }
            }
        }
        Files.createDirectories(results);
        csv(runs).writeCsv(results.resolve("python.csv"));
        String table = table(runs).markdown();
        Files.writeString(results.resolve("python.md"), table);
        System.out.print(table);
    }

    private Run run(String system, Shape shape, int rep) throws IOException, InterruptedException {
        int size = shape.size();
        long records = volume / size;
        // The handoff benchmark's shape: 2 MiB objects, a 1 MiB record alone in its slot, 16 slots,
        // and a warm-up of as many records again and at least WARMUP_OBJECTS objects (the Java
        // reader's JIT; the Python reader reads it the same way).
        long slotSize = size < MIB ? 2 * MIB : size + 64 * 1024;
        long recordsPerObject = Math.max(1, slotSize / (size + ROW_OVERHEAD_BYTES));
        long warmup = Math.max(records, WARMUP_OBJECTS * recordsPerObject);
        String name = "sluice-bench-python-" + ProcessHandle.current().pid() + "-" + runs++;
        Process writerProcess =
                ChildProcess.start(
                        List.of(
                                writer.toString(),
                                "sluice",
                                "--segment",
                                name,
                                "--size",
                                Integer.toString(size),
                                "--records",
                                Long.toString(records),
                                "--warmup",
                                Long.toString(warmup),
                                "--slot-size",
                                Long.toString(slotSize),
                                "--slots",
                                "16"));
        Path segment = Path.of("/dev/shm", name);
        // The writer renames the segment into place once it is whole; the reader may open it then.
        while (!Files.exists(segment)) {
            if (!writerProcess.isAlive()) {
                throw new IllegalStateException(
                        "handoff-writer exited " + writerProcess.exitValue());
            }
            Thread.sleep(5);
        }
        List<String> args = List.of(name, Long.toString(warmup), shape.task());
        List<String> command;
        if (system.equals("python")) {
            command = new ArrayList<>(List.of(python.toString(), script.toString()));
            command.addAll(args);
        } else {
            command = ChildProcess.java(SegmentTaskReader.class, args);
        }
        Map<String, String> read = ChildProcess.result(ChildProcess.start(command));
        Map<String, String> wrote = ChildProcess.result(writerProcess);
        long moved = (long) parse(read, "records");
        if (moved != records) {
            throw new IllegalStateException(system + " read " + moved + " of " + records);
        }
        // From the writer's start to the reader's end, both on CLOCK_MONOTONIC, as the handoff's.
        double seconds = (parse(read, "end_ns") - parse(wrote, "start_ns")) / 1e9;
        return new Run(system, size, shape.task(), rep, records, seconds, parse(read, "cpu_s"));
    }

    private static double parse(Map<String, String> values, String key) {
        return Double.parseDouble(values.get(key));
    }

    static ResultTable csv(List<Run> runs) {
        return ResultTable.of(
                runs,
                List.of(
                        new Column<>("system", Run::system),
                        new Column<>("size", "%d", Run::size),
                        new Column<>("task", Run::task),
                        new Column<>("rep", "%d", Run::rep),
                        new Column<>("records", "%d", Run::records),
                        new Column<>("seconds", "%.6f", Run::seconds),
                        new Column<>("gb_per_s", "%.3f", Run::gigabytesPerSecond),
                        new Column<>("mrec_per_s", "%.3f", Run::megaRecordsPerSecond),
                        new Column<>("reader_cpu_seconds", "%.4f", Run::cpuSeconds)));
    }

    /** Per shape and reader: the task's metric as min / median / max, Python over Java, target. */
    static ResultTable table(List<Run> runs) {
        ResultTable table =
                new ResultTable()
                        .column("records")
                        .column("task")
                        .column("reader")
                        .column("min / median / max")
                        .column("reader CPU-s (median)", "%.2f")
                        .column("python / java")
                        .column("target (python)");
        for (Shape shape : SHAPES) {
            Map<String, Summary> metric = Summary.bySystem(runs, shape.size(), Run::metric);
            Map<String, Summary> cpu = Summary.bySystem(runs, shape.size(), Run::cpuSeconds);
            for (String system : SYSTEMS) {
                if (!metric.containsKey(system)) {
                    continue;
                }
                boolean python = system.equals("python");
                table.row(
                        HandoffBenchmark.sizeName(shape.size()),
                        shape.task(),
                        system,
                        metric.get(system).format("%.2f") + " " + shape.unit(),
                        cpu.get(system).median(),
                        python ? Summary.ratio(metric, "python", "java") : "",
                        python
                                ? String.format(
                                        Locale.ROOT,
                                        "≥ %.0f %s: %s",
                                        shape.target(),
                                        shape.unit(),
                                        metric.get(system).median() >= shape.target()
                                                ? "met"
                                                : "not met")
                                : "");
            }
        }
        return table;
    }
}
