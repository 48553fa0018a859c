package dev.sluice.benchmarks;

import dev.sluice.benchmarks.ResultTable.Column;
import dev.sluice.embedded.Directories;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The handoff benchmark (benchmarks/README.md, Handoff): for each record size, K repetitions of
 * Sluice (C++ writer process to Java reader process), single-thread memcpy, the same copies handed
 * to a reader thread (the hardware's ceiling) and Aeron IPC, each moving the same volume; writes
 * {@code handoff.csv} (one row per run) and {@code handoff.md} (the min / median / max table with
 * the ratios) to the results directory.
 *
 * <p>Arguments: {@code --writer PATH} (handoff-writer), {@code --results DIR}, {@code --reps K}
 * (5), {@code --mib V} (2048 MiB per run), {@code --sizes B,B} and {@code --systems S,S} (a subset
 * of the sizes and systems, for trials). Child JVMs get this JVM's class path.
 */
public final class HandoffBenchmark {
    static final int[] SIZES = {100, 1 << 10, 64 << 10, 1 << 20};
    static final String[] SYSTEMS = {"sluice", "memcpy", "memcpy-dram", "threads", "aeron"};
    // The large-buffer anchor's ring: far beyond the 32 MiB L3, so every copy goes to DRAM.
    private static final long DRAM_RING_BYTES = 1L << 30;
    private static final long MIB = 1 << 20;
    private static final long WARMUP_OBJECTS = 16_384;
    // A record's bytes in an object besides its value: partition, offset, timestamp, and the
    // offsets of its key, value and headers.
    private static final long ROW_OVERHEAD_BYTES = 32;

    private final Path writer;
    private final long volume;
    private int runs;

    private HandoffBenchmark(Path writer, long volume) {
        this.writer = writer;
        this.volume = volume;
    }

    /** One run: the measured window of a system moving {@code records} records. */
    record Run(
            String system,
            int size,
            int rep,
            long records,
            long bytes,
            double seconds,
            double cpuSeconds)
            implements Measurement {
        double megabytesPerSecond() {
            return bytes / seconds / 1e6;
        }

        double megaMessagesPerSecond() {
            return records / seconds / 1e6;
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        Path writer = Path.of(options.get("--writer"));
        Path results = Path.of(options.getOrDefault("--results", "benchmarks/results"));
        int reps = Integer.parseInt(options.getOrDefault("--reps", "5"));
        long volume = Long.parseLong(options.getOrDefault("--mib", "2048")) * MIB;
        int[] sizes =
                options.containsKey("--sizes")
                        ? Arrays.stream(options.get("--sizes").split(","))
                                .mapToInt(Integer::parseInt)
                                .toArray()
                        : SIZES;
        String[] systems =
                options.containsKey("--systems") ? options.get("--systems").split(",") : SYSTEMS;
        HandoffBenchmark benchmark = new HandoffBenchmark(writer, volume);
        List<Run> runs = new ArrayList<>();
        for (int size : sizes) {
            for (int rep = 1; rep <= reps; rep++) {
                // Rotating the order spreads the machine's drift over the systems.
                for (int k = 0; k < systems.length; k++) {
                    String system = systems[(k + rep) % systems.length];
                    Run run = benchmark.run(system, size, rep);
                    System.err.printf(
                            Locale.ROOT,
                            "%-6s %8d B  rep %d  %9.1f MB/s  %9.4g M msg/s  %5.2f CPU-s%n",
                            system,
                            size,
                            rep,
                            run.megabytesPerSecond(),
                            run.megaMessagesPerSecond(),
                            run.cpuSeconds());
                    runs.add(run);
                }
            }
        }
        Files.createDirectories(results);
        csv(runs).writeCsv(results.resolve("handoff.csv"));
        String table = table(runs).markdown();
        Files.writeString(results.resolve("handoff.md"), table);
        System.out.print(table);
    }

    private Run run(String system, int size, int rep) throws IOException, InterruptedException {
        long records = volume / size;
        // Records up to 64 KiB are batched into 2 MiB objects; a 1 MiB record gets an object of its
        // own in a slot with room for the metadata. 16 slots make a ring that fits L3 (32 MiB).
        long slotSize = size < MIB ? 2 * MIB : size + 64 * 1024;
        // First, for the JIT, as many records again and at least WARMUP_OBJECTS objects: the Java
        // reader's per-object code (Arrow's batch loading) reaches C2 after a few thousand
        // objects, and with 2048 it was still compiling through the measured part, on the core
        // the writer needed (-XX:+PrintCompilation; 1 MiB records went at 5 GB/s, then 11).
        long recordsPerObject = Math.max(1, slotSize / (size + ROW_OVERHEAD_BYTES));
        long warmup = Math.max(records, WARMUP_OBJECTS * recordsPerObject);
        List<String> shape =
                List.of(
                        "--size", Integer.toString(size),
                        "--records", Long.toString(records),
                        "--warmup", Long.toString(warmup),
                        "--slot-size", Long.toString(slotSize),
                        "--slots", "16");
        String name = "sluice-bench-" + ProcessHandle.current().pid() + "-" + runs++;
        List<String> dramShape = new ArrayList<>(shape);
        dramShape.set(dramShape.size() - 1, Long.toString(DRAM_RING_BYTES / slotSize));
        return switch (system) {
            case "sluice" -> sluice(name, shape, size, rep, records, warmup);
            case "memcpy" -> oneProcess(system, "memcpy", shape, size, rep, records);
            case "memcpy-dram" -> oneProcess(system, "memcpy", dramShape, size, rep, records);
            case "threads" -> oneProcess(system, "threads", shape, size, rep, records);
            case "aeron" -> aeron(name, size, rep, records, warmup);
            default -> throw new IllegalArgumentException(system);
        };
    }

    private Run sluice(
            String name, List<String> shape, int size, int rep, long records, long warmup)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(writer.toString(), "sluice"));
        command.addAll(List.of("--segment", name));
        command.addAll(shape);
        Process writerProcess = ChildProcess.start(command);
        Path segment = Path.of("/dev/shm", name);
        // The writer renames the segment into place once it is whole; the reader may open it then.
        while (!Files.exists(segment)) {
            if (!writerProcess.isAlive()) {
                throw new IllegalStateException(
                        "handoff-writer exited " + writerProcess.exitValue());
            }
            Thread.sleep(5);
        }
        Process reader =
                ChildProcess.start(
                        ChildProcess.java(
                                SluiceHandoffReader.class, List.of(name, Long.toString(warmup))));
        Map<String, String> read = ChildProcess.result(reader);
        Map<String, String> wrote = ChildProcess.result(writerProcess);
        return window(
                "sluice",
                size,
                rep,
                records,
                wrote,
                read,
                parse(wrote, "cpu_s") + parse(read, "cpu_s"));
    }

    /** An anchor that handoff-writer runs alone: its {@code mode} with this shape of ring. */
    private Run oneProcess(
            String system, String mode, List<String> shape, int size, int rep, long records)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(writer.toString(), mode));
        command.addAll(shape);
        Map<String, String> copied = ChildProcess.result(ChildProcess.start(command));
        return window(system, size, rep, records, copied, copied, parse(copied, "cpu_s"));
    }

    private Run aeron(String name, int size, int rep, long records, long warmup)
            throws IOException, InterruptedException {
        Path dir = Path.of("/dev/shm", "aeron-" + name);
        List<String> shape =
                List.of(
                        dir.toString(),
                        Integer.toString(size),
                        Long.toString(records),
                        Long.toString(warmup));
        try {
            Process publisher =
                    ChildProcess.start(
                            ChildProcess.java(AeronHandoff.class, prepend("publish", shape)));
            BufferedReader lines =
                    new BufferedReader(
                            new InputStreamReader(
                                    publisher.getInputStream(), StandardCharsets.UTF_8));
            if (!"ready".equals(lines.readLine())) {
                throw new IllegalStateException("the Aeron publisher did not start");
            }
            Map<String, String> received =
                    ChildProcess.result(
                            ChildProcess.start(
                                    ChildProcess.java(
                                            AeronHandoff.class, prepend("subscribe", shape))));
            publisher.getOutputStream().close();
            Map<String, String> sent = ChildProcess.keyValues(lines.readLine());
            ChildProcess.check(publisher);
            return window(
                    "aeron",
                    size,
                    rep,
                    records,
                    sent,
                    received,
                    parse(sent, "cpu_s") + parse(received, "cpu_s"));
        } finally {
            Directories.deleteRecursively(dir);
        }
    }

    /** From the first side's start to the last side's end, both on CLOCK_MONOTONIC. */
    private static Run window(
            String system,
            int size,
            int rep,
            long records,
            Map<String, String> first,
            Map<String, String> last,
            double cpuSeconds) {
        long moved = (long) parse(last, "records");
        if (moved != records) {
            throw new IllegalStateException(system + " moved " + moved + " of " + records);
        }
        double seconds = (parse(last, "end_ns") - parse(first, "start_ns")) / 1e9;
        return new Run(
                system, size, rep, records, (long) parse(last, "bytes"), seconds, cpuSeconds);
    }

    private static List<String> prepend(String first, List<String> rest) {
        List<String> args = new ArrayList<>(List.of(first));
        args.addAll(rest);
        return args;
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
                        new Column<>("rep", "%d", Run::rep),
                        new Column<>("records", "%d", Run::records),
                        new Column<>("bytes", "%d", Run::bytes),
                        new Column<>("seconds", "%.6f", Run::seconds),
                        new Column<>("mb_per_s", "%.1f", Run::megabytesPerSecond),
                        new Column<>("mmsg_per_s", "%.3f", Run::megaMessagesPerSecond),
                        new Column<>("cpu_seconds", "%.4f", Run::cpuSeconds)));
    }

    /** Per size and system: MB/s and M msg/s as min / median / max, CPU-s as the median. */
    static ResultTable table(List<Run> runs) {
        ResultTable table =
                new ResultTable()
                        .column("size")
                        .column("system")
                        .column("MB/s min / median / max")
                        .column("M msg/s min / median / max")
                        .column("CPU-s (median)", "%.2f")
                        .column("sluice / memcpy MB/s")
                        .column("sluice / memcpy-dram MB/s")
                        .column("sluice / threads MB/s")
                        .column("sluice / aeron msg/s");
        for (int size : SIZES) {
            Map<String, Summary> bandwidth = Summary.bySystem(runs, size, Run::megabytesPerSecond);
            Map<String, Summary> rate = Summary.bySystem(runs, size, Run::megaMessagesPerSecond);
            Map<String, Summary> cpu = Summary.bySystem(runs, size, Run::cpuSeconds);
            for (String system : SYSTEMS) {
                if (!bandwidth.containsKey(system)) {
                    continue;
                }
                boolean ratios = system.equals("sluice");
                table.row(
                        sizeName(size),
                        system,
                        bandwidth.get(system).format("%.0f"),
                        rate.get(system).format("%.4g"),
                        cpu.get(system).median(),
                        ratios ? Summary.ratio(bandwidth, system, "memcpy") : "",
                        ratios ? Summary.ratio(bandwidth, system, "memcpy-dram") : "",
                        ratios ? Summary.ratio(bandwidth, system, "threads") : "",
                        ratios ? Summary.ratio(rate, system, "aeron") : "");
            }
        }
        return table;
    }

    static String sizeName(int size) {
        return size >= MIB
                ? size / MIB + " MiB"
                : size >= 1024 ? size / 1024 + " KiB" : size + " B";
    }
}
