package dev.sluice.benchmarks;

import dev.sluice.benchmarks.ResultTable.Column;
import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.KafkaBroker;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The source benchmark (benchmarks/README.md, Source): three jobs — count, filter, word count — on
 * Flink, reading one 8-partition topic through SluiceSource PUSH, SluiceSource PULL and Flink's own
 * KafkaSource, for 100 B and 1 KiB records of text, with and without a producer writing to another
 * topic of the same broker meanwhile. Each run is a JVM with a MiniCluster of its own ({@link
 * SourceBenchmarkJob}).
 *
 * <p>Arguments: {@code --bin DIR} (sluice-brokerd, sluice-kafka-tool), {@code --results DIR},
 * {@code --reps K} (3), {@code --mib V} (2048 MiB of values per topic), {@code --sizes B,B}, {@code
 * --jobs J,J}, {@code --producer off,on}, {@code --systems S,S} (a subset, for trials).
 *
 * <p>Count and filter read the whole topic, word count the first eighth of every partition,
 * windowed word count the first 64th ({@link #share}). A run must outlast the JIT: with 256 MiB a
 * run at 1 KiB read its 262 k records in about a second, while C2 still compiled the sources' code,
 * and the figures were of the compilers (PUSH at 0.5 of KafkaSource there, 1.8 with 2 GiB).
 */
public final class SourceBenchmark {
    static final int[] SIZES = {100, 1 << 10};

    /** The three sources, and the bound no source can pass: the values from memory. */
    static final String[] SYSTEMS = {"push", "pull", "kafka-source", "memory"};

    static final String[] JOBS = {"count", "filter", "wordcount", "windowed-wordcount"};

    /** The word the filter looks for: one of the vocabulary of the values ({@link #fill}). */
    static final String FILTER_WORD = "sluice";

    static final int PARTITIONS = 8;

    /**
     * The share of every partition a job reads, so that each runs about as long as count over the
     * whole topic: word count is 10-50 times slower per record than count, windowed word count (a
     * window operator firing for every word) about 15 times slower again.
     */
    static int share(String job) {
        return switch (job) {
            case "wordcount" -> 8;
            case "windowed-wordcount" -> 64;
            default -> 1;
        };
    }

    private static final long MIB = 1 << 20;

    /** One run: a job's measured window. */
    record Run(
            String system,
            int size,
            String job,
            boolean producer,
            int rep,
            long records,
            double seconds,
            double cpuSeconds,
            double daemonCpuSeconds,
            double brokerCpuSeconds,
            int sourceThreads)
            implements Measurement {
        double recordsPerSecond() {
            return records / seconds;
        }

        /** The broker's CPU time per million records read (with the producer's appends, if on). */
        double brokerCpuPerMillion() {
            return brokerCpuSeconds / (records / 1e6);
        }

        /** Flink's and the daemon's CPU time per million records: the reading side's cost. */
        double cpuPerMillion() {
            return (cpuSeconds + daemonCpuSeconds) / (records / 1e6);
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        Path bin = Path.of(options.get("--bin"));
        Path results = Path.of(options.getOrDefault("--results", "benchmarks/results"));
        int reps = Integer.parseInt(options.getOrDefault("--reps", "3"));
        long volume = Long.parseLong(options.getOrDefault("--mib", "2048")) * MIB;
        int[] sizes =
                Arrays.stream(options.getOrDefault("--sizes", "100,1024").split(","))
                        .mapToInt(Integer::parseInt)
                        .toArray();
        String[] jobs = options.getOrDefault("--jobs", String.join(",", JOBS)).split(",");
        String[] producers = options.getOrDefault("--producer", "off,on").split(",");
        String[] systems = options.getOrDefault("--systems", String.join(",", SYSTEMS)).split(",");
        Path work = Files.createTempDirectory("sluice-source-bench-");
        Files.createDirectories(results);
        List<Run> runs = new ArrayList<>();
        try (KafkaBroker broker = KafkaBroker.start();
                BrokerdProcess daemon =
                        BrokerdProcess.start(
                                bin.resolve("sluice-brokerd"),
                                broker.bootstrapServers(),
                                work.resolve("brokerd.sock"),
                                Map.of(
                                        "fetch.max.bytes", "52428800",
                                        "queued.min.messages", "1000000"))) {
            for (int size : sizes) {
                String topic = "source-" + size;
                long records = volume / size;
                fill(broker, topic, size, records);
                // Unmeasured: the page cache, and the daemon's first fetches.
                for (String system : systems) {
                    run(bin, broker, daemon, system, jobs[0], topic, size, records, false, 0);
                }
                for (String producer : producers) {
                    boolean loaded = producer.equals("on");
                    for (String job : jobs) {
                        for (int rep = 1; rep <= reps; rep++) {
                            // Rotating the order spreads the machine's drift over every system.
                            for (int k = 0; k < systems.length; k++) {
                                String system = systems[(k + rep) % systems.length];
                                runs.add(
                                        run(
                                                bin, broker, daemon, system, job, topic, size,
                                                records, loaded, rep));
                                // Written as it grows: a run cut short keeps what it measured.
                                csv(runs).writeCsv(results.resolve("source.csv"));
                            }
                        }
                    }
                }
            }
        }
        String table = table(runs).markdown();
        Files.writeString(results.resolve("source.md"), table);
        System.out.print(table);
    }

    /** Text values of {@code size} bytes: words of a 5,000-word vocabulary, space-separated. */
    private static void fill(KafkaBroker broker, String topic, int size, long records) {
        broker.createTopic(topic, PARTITIONS);
        Random random = new Random(size);
        List<String> vocabulary = new ArrayList<>();
        for (int w = 0; w < 5000; w++) {
            StringBuilder word = new StringBuilder();
            for (int c = 3 + random.nextInt(8); c > 0; c--) {
                word.append((char) ('a' + random.nextInt(26)));
            }
            vocabulary.add(word.toString());
        }
        vocabulary.set(0, FILTER_WORD);
        StringBuilder text = new StringBuilder();
        while (text.length() < (1 << 20) + size) {
            text.append(vocabulary.get(random.nextInt(vocabulary.size()))).append(' ');
        }
        byte[] corpus = text.toString().getBytes(StandardCharsets.US_ASCII);
        Properties props = broker.clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "1");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(512 * 1024));
        props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(256L * MIB));
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (long i = 0; i < records; i++) {
                int from = (int) ((i * 7919) % (corpus.length - size));
                producer.send(
                        new ProducerRecord<>(
                                topic,
                                (int) (i % PARTITIONS),
                                null,
                                Arrays.copyOfRange(corpus, from, from + size)));
            }
        }
    }

    private static Run run(
            Path bin,
            KafkaBroker broker,
            BrokerdProcess daemon,
            String system,
            String job,
            String topic,
            int size,
            long records,
            boolean loaded,
            int rep)
            throws IOException, InterruptedException {
        // Each partition holds records / PARTITIONS from offset 0 on (fill writes them in turn).
        long perPartition = share(job) > 1 ? records / PARTITIONS / share(job) : -1;
        String loadTopic = "load-" + System.nanoTime();
        Process load = loaded ? startLoad(bin, broker, loadTopic, size) : null;
        Map<String, String> result;
        try {
            result =
                    ChildProcess.run(
                            ChildProcess.java(
                                    SourceBenchmarkJob.class,
                                    List.of(
                                            system,
                                            job,
                                            broker.bootstrapServers(),
                                            topic,
                                            Long.toString(
                                                    perPartition < 0
                                                            ? records
                                                            : perPartition * PARTITIONS),
                                            Long.toString(perPartition),
                                            daemon.socket().toString(),
                                            Long.toString(daemon.pid()),
                                            Long.toString(broker.pid()))));
        } finally {
            if (load != null) {
                stopLoad(load, broker, loadTopic);
            }
        }
        Run run =
                new Run(
                        system,
                        size,
                        job,
                        loaded,
                        rep,
                        Long.parseLong(result.get("records")),
                        Double.parseDouble(result.get("seconds")),
                        Double.parseDouble(result.get("cpu_s")),
                        Double.parseDouble(result.get("daemon_cpu_s")),
                        Double.parseDouble(result.get("broker_cpu_s")),
                        Integer.parseInt(result.get("source_threads")));
        System.err.printf(
                Locale.ROOT,
                "%-12s %-9s %5d B producer %-3s rep %d: %,.0f records/s, %.2f CPU-s/M records,"
                        + " broker %.2f CPU-s/M records, %d source threads%n",
                system,
                job,
                size,
                loaded ? "on" : "off",
                rep,
                run.recordsPerSecond(),
                run.cpuPerMillion(),
                run.brokerCpuPerMillion(),
                run.sourceThreads());
        return run;
    }

    /**
     * A librdkafka producer writing to another topic of the broker for as long as the run. The
     * topic keeps its last 64 MiB per partition, and goes when the run ends: an unbounded producer
     * fills the disk within a long benchmark (one did, at 80 GB).
     */
    private static Process startLoad(Path bin, KafkaBroker broker, String topic, int size)
            throws IOException {
        try (Admin admin = Admin.create(broker.clientProperties())) {
            admin.createTopics(
                            List.of(
                                    new NewTopic(topic, PARTITIONS, (short) 1)
                                            .configs(
                                                    Map.of(
                                                            "retention.bytes",
                                                            Long.toString(64 * MIB),
                                                            "segment.bytes",
                                                            Long.toString(16 * MIB)))))
                    .all()
                    .get();
        } catch (InterruptedException | ExecutionException e) {
            throw new IOException("creating the load topic " + topic, e);
        }
        return new ProcessBuilder(
                        bin.resolve("sluice-kafka-tool").toString(),
                        "produce",
                        "--bootstrap-servers",
                        broker.bootstrapServers(),
                        "--topic",
                        topic,
                        "--count",
                        "1000000000000",
                        "--size",
                        Integer.toString(size))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
    }

    private static void stopLoad(Process load, KafkaBroker broker, String topic)
            throws InterruptedException, IOException {
        load.destroy();
        load.waitFor();
        try (Admin admin = Admin.create(broker.clientProperties())) {
            admin.deleteTopics(List.of(topic)).all().get();
        } catch (ExecutionException e) {
            throw new IOException("deleting the load topic " + topic, e);
        }
    }

    static ResultTable csv(List<Run> runs) {
        return ResultTable.of(
                runs,
                List.of(
                        new Column<>("system", Run::system),
                        new Column<>("size", "%d", Run::size),
                        new Column<>("job", Run::job),
                        new Column<>("producer", run -> run.producer() ? "on" : "off"),
                        new Column<>("rep", "%d", Run::rep),
                        new Column<>("records", "%d", Run::records),
                        new Column<>("seconds", "%.6f", Run::seconds),
                        new Column<>("cpu_seconds", "%.3f", Run::cpuSeconds),
                        new Column<>("daemon_cpu_seconds", "%.3f", Run::daemonCpuSeconds),
                        new Column<>("broker_cpu_seconds", "%.3f", Run::brokerCpuSeconds),
                        new Column<>("source_threads", "%d", Run::sourceThreads),
                        new Column<>("records_per_s", "%.0f", Run::recordsPerSecond),
                        new Column<>("cpu_s_per_m_records", "%.3f", Run::cpuPerMillion),
                        new Column<>(
                                "broker_cpu_s_per_m_records", "%.3f", Run::brokerCpuPerMillion)));
    }

    static ResultTable table(List<Run> runs) {
        ResultTable table =
                new ResultTable()
                        .column("job")
                        .column("size")
                        .column("producer")
                        .column("system")
                        .column("M records/s min / median / max")
                        .column("Flink + daemon CPU-s per M records (median)", "%.2f")
                        .column("broker CPU-s per M records (median)", "%.2f")
                        .column("source threads", "%.0f")
                        .column("/ KafkaSource records/s");
        for (String job : JOBS) {
            for (int size : SIZES) {
                for (boolean producer : new boolean[] {false, true}) {
                    List<Run> of =
                            runs.stream()
                                    .filter(r -> r.job().equals(job) && r.producer() == producer)
                                    .toList();
                    Map<String, Summary> rate =
                            Summary.bySystem(of, size, run -> run.recordsPerSecond() / 1e6);
                    Map<String, Summary> cpu = Summary.bySystem(of, size, Run::cpuPerMillion);
                    Map<String, Summary> broker =
                            Summary.bySystem(of, size, Run::brokerCpuPerMillion);
                    Map<String, Summary> threads = Summary.bySystem(of, size, Run::sourceThreads);
                    for (String system : SYSTEMS) {
                        if (!rate.containsKey(system)) {
                            continue;
                        }
                        table.row(
                                job,
                                HandoffBenchmark.sizeName(size),
                                producer ? "on" : "off",
                                system,
                                rate.get(system).format("%.3f"),
                                cpu.get(system).median(),
                                broker.get(system).median(),
                                threads.get(system).median(),
                                system.equals("kafka-source")
                                        ? ""
                                        : Summary.ratio(rate, system, "kafka-source"));
                    }
                }
            }
        }
        return table;
    }
}
