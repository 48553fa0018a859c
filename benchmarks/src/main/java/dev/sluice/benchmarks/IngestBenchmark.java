package dev.sluice.benchmarks;

import dev.sluice.benchmarks.ResultTable.Column;
import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.KafkaBroker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The ingest benchmark (benchmarks/README.md, Ingest): records from an 8-partition topic of the
 * real broker into a Java reader through {@code sluice-brokerd}, beside a bare librdkafka consumer
 * ({@code sluice-kafka-tool consume}) reading the same topic, for 100 B and 1 KiB records. Both
 * readers compute the same digest of every value, and their checksums must agree.
 *
 * <p>The daemon runs on mimalloc, which halves librdkafka's cost per record; the bare consumer runs
 * a second time on the same library (preloaded), so that the table tells what the allocator gives
 * from what the daemon does.
 *
 * <p>Arguments: {@code --bin DIR} (holding sluice-brokerd and sluice-kafka-tool), {@code --results
 * DIR}, {@code --reps K} (5), {@code --mib V} (2048 MiB of values per topic), {@code --sizes B,B}
 * (100,1024).
 */
public final class IngestBenchmark {
    static final int[] SIZES = {100, 1 << 10};
    static final String[] SYSTEMS = {"sluice", "librdkafka", "librdkafka-mimalloc"};
    static final int PARTITIONS = 8;
    private static final long MIB = 1 << 20;

    /** One run: the measured window of a system reading the whole topic. */
    record Run(
            String system,
            int size,
            int rep,
            long records,
            long bytes,
            double seconds,
            double cpuSeconds,
            String checksum)
            implements Measurement {
        double recordsPerSecond() {
            return records / seconds;
        }

        double cpuSecondsPerGigabyte() {
            return cpuSeconds / (bytes / 1e9);
        }
    }

    private final Path bin;
    private final KafkaBroker broker;
    private final BrokerdProcess daemon;
    private final Map<String, String> daemonsMalloc;

    private IngestBenchmark(Path bin, KafkaBroker broker, BrokerdProcess daemon)
            throws IOException {
        this.bin = bin;
        this.broker = broker;
        this.daemon = daemon;
        this.daemonsMalloc = Map.of("LD_PRELOAD", mappedLibrary(daemon.pid(), "libmimalloc"));
    }

    /** The file of the shared library named {@code prefix...} that process {@code pid} mapped. */
    private static String mappedLibrary(long pid, String prefix) throws IOException {
        return Files.readAllLines(Path.of("/proc", Long.toString(pid), "maps")).stream()
                .map(line -> line.substring(line.lastIndexOf(' ') + 1))
                .filter(file -> Path.of(file).getFileName().toString().startsWith(prefix))
                .findFirst()
                .orElseThrow(
                        () -> new IllegalStateException("sluice-brokerd did not map " + prefix));
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        Path bin = Path.of(options.get("--bin"));
        Path results = Path.of(options.getOrDefault("--results", "benchmarks/results"));
        int reps = Integer.parseInt(options.getOrDefault("--reps", "5"));
        long volume = Long.parseLong(options.getOrDefault("--mib", "2048")) * MIB;
        int[] sizes =
                options.containsKey("--sizes")
                        ? Arrays.stream(options.get("--sizes").split(","))
                                .mapToInt(Integer::parseInt)
                                .toArray()
                        : SIZES;
        Path work = Files.createTempDirectory("sluice-ingest-");
        List<Run> runs = new ArrayList<>();
        try (KafkaBroker broker = KafkaBroker.start();
                BrokerdProcess daemon =
                        BrokerdProcess.start(
                                bin.resolve("sluice-brokerd"),
                                broker.bootstrapServers(),
                                work.resolve("brokerd.sock"),
                                // The anchor's fetch tuning (sluice-kafka-tool consume), so that
                                // both consume alike.
                                Map.of(
                                        "fetch.max.bytes", "52428800",
                                        "queued.min.messages", "1000000"))) {
            IngestBenchmark benchmark = new IngestBenchmark(bin, broker, daemon);
            for (int size : sizes) {
                String topic = "ingest-" + size;
                long records = volume / size;
                benchmark.fill(topic, size, records);
                // Unmeasured: JIT and page cache, for both.
                for (String system : SYSTEMS) {
                    benchmark.run(system, topic, size, 0, records);
                }
                for (int rep = 1; rep <= reps; rep++) {
                    // Rotating the order spreads the machine's drift over the systems.
                    for (int k = 0; k < SYSTEMS.length; k++) {
                        String system = SYSTEMS[(k + rep) % SYSTEMS.length];
                        Run run = benchmark.run(system, topic, size, rep, records);
                        runs.add(run);
                        System.err.printf(
                                Locale.ROOT,
                                "%-10s %6d B rep %d: %,.0f records/s, %.2f CPU-s/GB%n",
                                system,
                                size,
                                rep,
                                run.recordsPerSecond(),
                                run.cpuSecondsPerGigabyte());
                    }
                }
                checkChecksums(runs, size);
            }
        }
        Files.createDirectories(results);
        csv(runs).writeCsv(results.resolve("ingest.csv"));
        String table = table(runs).markdown();
        Files.writeString(results.resolve("ingest.md"), table);
        System.out.print(table);
    }

    private void fill(String topic, int size, long records)
            throws IOException, InterruptedException {
        broker.createTopic(topic, PARTITIONS);
        kafkaTool(
                "produce",
                topic,
                records,
                "--size",
                Integer.toString(size),
                "--timeout-ms",
                "600000");
    }

    private Run run(String system, String topic, int size, int rep, long records)
            throws IOException, InterruptedException {
        return switch (system) {
            case "sluice" -> sluice(topic, size, rep, records);
            case "librdkafka" -> librdkafka(system, Map.of(), topic, size, rep, records);
            case "librdkafka-mimalloc" ->
                    librdkafka(system, daemonsMalloc, topic, size, rep, records);
            default -> throw new IllegalArgumentException(system);
        };
    }

    /** Runs sluice-kafka-tool against the broker and returns its result line. */
    private Map<String, String> kafkaTool(String mode, String topic, long count, String... more)
            throws IOException, InterruptedException {
        return kafkaTool(Map.of(), mode, topic, count, more);
    }

    private Map<String, String> kafkaTool(
            Map<String, String> environment, String mode, String topic, long count, String... more)
            throws IOException, InterruptedException {
        List<String> command =
                new ArrayList<>(
                        List.of(
                                bin.resolve("sluice-kafka-tool").toString(),
                                mode,
                                "--bootstrap-servers",
                                broker.bootstrapServers(),
                                "--topic",
                                topic,
                                "--count",
                                Long.toString(count)));
        command.addAll(List.of(more));
        return ChildProcess.result(ChildProcess.start(command, environment));
    }

    private Run sluice(String topic, int size, int rep, long records)
            throws IOException, InterruptedException {
        Map<String, String> reader =
                ChildProcess.run(
                        ChildProcess.java(
                                IngestReader.class,
                                List.of(
                                        daemon.socket().toString(),
                                        topic,
                                        Integer.toString(PARTITIONS),
                                        Long.toString(records),
                                        Long.toString(warmup(records)),
                                        Long.toString(daemon.pid()))));
        System.err.printf(
                Locale.ROOT,
                "  CPU-s in the window: reader %s, daemon %s (after %s warm-up passes)%n",
                reader.get("window_cpu_s"),
                reader.get("daemon_window_cpu_s"),
                reader.get("warmup_passes"));
        return run(
                "sluice",
                size,
                rep,
                reader,
                Double.parseDouble(reader.get("window_cpu_s"))
                        + Double.parseDouble(reader.get("daemon_window_cpu_s")));
    }

    private Run librdkafka(
            String system,
            Map<String, String> environment,
            String topic,
            int size,
            int rep,
            long records)
            throws IOException, InterruptedException {
        Map<String, String> consumer =
                kafkaTool(
                        environment,
                        "consume",
                        topic,
                        records,
                        "--warmup",
                        Long.toString(warmup(records)),
                        "--digest",
                        "sum64");
        return run(system, size, rep, consumer, Double.parseDouble(consumer.get("window_cpu_s")));
    }

    /** Both measure from here on: the first tenth warms up page cache, JIT and fetch sessions. */
    private static long warmup(long records) {
        return records / 10;
    }

    private static Run run(
            String system, int size, int rep, Map<String, String> result, double cpuSeconds) {
        return new Run(
                system,
                size,
                rep,
                Long.parseLong(result.get("window_records")),
                Long.parseLong(result.get("window_bytes")),
                Double.parseDouble(result.get("window_s")),
                cpuSeconds,
                result.get("checksum"));
    }

    /**
     * Both systems read the same values: a benchmark of a reader that skips data proves nothing.
     */
    private static void checkChecksums(List<Run> runs, int size) {
        long distinct =
                runs.stream().filter(r -> r.size() == size).map(Run::checksum).distinct().count();
        if (distinct != 1) {
            throw new IllegalStateException("the readers disagree on the values of " + size + " B");
        }
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
                        new Column<>("cpu_seconds", "%.6f", Run::cpuSeconds),
                        new Column<>("records_per_s", "%.0f", Run::recordsPerSecond),
                        new Column<>("cpu_s_per_gb", "%.4f", Run::cpuSecondsPerGigabyte)));
    }

    static ResultTable table(List<Run> runs) {
        ResultTable table =
                new ResultTable()
                        .column("size")
                        .column("system")
                        .column("M records/s min / median / max")
                        .column("CPU-s per GB min / median / max")
                        .column("sluice / librdkafka records/s")
                        .column("sluice / librdkafka CPU per GB")
                        .column("sluice / librdkafka-mimalloc records/s")
                        .column("sluice / librdkafka-mimalloc CPU per GB");
        for (int size : SIZES) {
            Map<String, Summary> rate =
                    Summary.bySystem(runs, size, run -> run.recordsPerSecond() / 1e6);
            Map<String, Summary> cpu = Summary.bySystem(runs, size, Run::cpuSecondsPerGigabyte);
            for (String system : SYSTEMS) {
                if (!rate.containsKey(system)) {
                    continue;
                }
                boolean sluice = system.equals("sluice");
                table.row(
                        HandoffBenchmark.sizeName(size),
                        system,
                        rate.get(system).format("%.3f"),
                        cpu.get(system).format("%.2f"),
                        sluice ? Summary.ratio(rate, system, "librdkafka") : "",
                        sluice ? Summary.ratio(cpu, system, "librdkafka") : "",
                        sluice ? Summary.ratio(rate, system, "librdkafka-mimalloc") : "",
                        sluice ? Summary.ratio(cpu, system, "librdkafka-mimalloc") : "");
            }
        }
        return table;
    }
}
