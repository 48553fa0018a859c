package dev.sluice.benchmarks;

import dev.sluice.client.job.BufferModel;
import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.GeneratorSpec;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.JobStatus;
import dev.sluice.client.job.Transport;
import dev.sluice.printing.EmbeddedSluice;
import dev.sluice.printing.PrintJob;
import dev.sluice.printing.RipJobs;
import dev.sluice.printing.TestChart;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The generation benchmarks (benchmarks/README.md, Generation): print jobs of the raster image
 * processor through the whole runtime on this host — submission, the GenerationSource scheduler,
 * producers as Flink subtasks, SluiceSink, Kafka, sluice-brokerd, and StreamReaders in reader
 * processes, one per output location.
 *
 * <ul>
 *   <li>Fig. 4: compute disabled, topologies one-to-one, one-to-many, many-to-one and many-to-many
 *       (producers: the Flink parallelism; consumers: output locations, each a reader process),
 *       beside the ceiling of bare Kafka producers writing the same bytes in records of the chunk
 *       size to a topic of as many partitions, with as many producers, in the same run, and those
 *       producers with a bare Kafka consumer reading what they write (Kafka in and out);
 *   <li>Fig. 5: the same with the raster computation;
 *   <li>Fig. 6: job B with computation, its readers at a constant speed of 50 %, 90 % and 100 % of
 *       the rate measured for the topology in Fig. 5: the rate achieved, the loss against the rate
 *       requested, starvation events per repetition, the chunks' lateness and the start buffer;
 *   <li>the printer room: four paced jobs at once, each on an output location of its own, and a
 *       greedy (unpaced) job beside them on a fifth, two producers: the paced streams' starvation,
 *       loss and lateness, and the greedy job's rate against the same job alone;
 *   <li>the faults: job B with computation, its readers at 50 %, 80 % and 90 % of the Fig. 5 rate
 *       of its topology (two producers), one producer killed halfway through the job or slowed four
 *       times for the whole of it ({@link FaultyRipGenerator}), with speculation off (the anchor)
 *       and on, on parts of their own, the readers starting with the buffer that rides out a
 *       producer's loss (docs/generation.md, "Buffer model");
 *   <li>the transports: each topology with compute disabled and enabled, through Kafka and the
 *       local way (docs/generation.md, Transports), beside single-thread memcpy ({@link
 *       MemcpyAnchor}) and the raster processor alone on one thread ({@link RipAlone}), in the same
 *       run.
 * </ul>
 *
 * <p>Every job's spec names its transport: Figs. 4 and 5, the printer room and the faults go
 * through Kafka, as they did before the local way existed, and Fig. 6 goes both ways; the output
 * locations are on the producers' host, so the local way is open to the transport figure's jobs.
 *
 * <p>A job's throughput is its bytes over the time from its submission to the last chunk read
 * (benchmarks/README.md, Generation). Arguments: {@link GenerationOptions}.
 */
public final class GenerationBenchmark {
    static final String[] TOPOLOGIES = {"one-to-one", "one-to-many", "many-to-one", "many-to-many"};
    static final double[] SPEEDS = {0.5, 0.9, 1.0};
    static final String ANCHOR = "0";

    // The runs as --figures and the results name them: after the figures of Godard et al. they
    // reproduce (docs/references.md, "Generation runtime").
    /** Throughput with the raster computation off, Fig. 4. */
    static final String COMPUTE_OFF = "4";

    /** Throughput with the raster computation on, Fig. 5. */
    static final String COMPUTE_ON = "5";

    /** Readers at a constant speed, a share of the compute-on rate, Fig. 6. */
    static final String CONSTANT_SPEED = "6";

    static final String FAULTS = GenerationOptions.FAULTS;
    static final double[] FAULT_SPEEDS = {0.5, 0.8, 0.9};
    static final List<String> FAULT_KINDS = List.of("kill", "slow");
    // The faulty producer: the second of two.
    private static final int FAULTY_PRODUCER = 1;
    // The duplicates of a COMPLETED status's reason (docs/generation.md, "Speculative duplicates").
    private static final Pattern DUPLICATES =
            Pattern.compile("(\\d+) duplicates issued, (\\d+) won, (\\d+) bytes wasted");
    static final String ROOM = GenerationOptions.ROOM;
    static final String TRANSPORT = GenerationOptions.TRANSPORT;
    private static final String WARM_UP = "warm-up";

    /** The printer room's paced jobs' output locations, one job each. */
    static final List<String> PRINTERS =
            List.of("printer-1", "printer-2", "printer-3", "printer-4");

    /** The printer room's greedy job's output location. */
    static final String GREEDY_LOCATION = "printer-5";

    /** The topology column of the greedy job's rows: beside the paced jobs, and alone. */
    static final String GREEDY = "greedy";

    static final String GREEDY_ALONE = "greedy alone";
    private static final int STREAMS_PER_JOB = 4;
    private static final int CHUNK_BYTES = 256 << 10;
    private static final long TASK_TARGET_BYTES = 4 << 20;
    private static final int PARTITIONS = 4;
    private static final String CEILING_TOPIC = "ceiling";
    static final String CEILING = "ceiling";
    static final String KAFKA_IN_AND_OUT = "kafka in and out";
    static final String MEMCPY = "memcpy";
    static final String RIP_ONE_THREAD = "rip one thread";

    /** The transport column of an anchor that moves no bytes through Sluice or Kafka. */
    static final String NO_TRANSPORT = "-";

    private static final int MIN_WARMUP_ROUNDS = 3;
    private static final int MAX_WARMUP_ROUNDS = 10;
    // A round in which this JVM compiled for less than this share of its time ends the warm-up.
    private static final double SETTLED_COMPILE_SHARE = 0.25;

    /**
     * One measured job, or one anchor run ({@code figure} {@link #ANCHOR}). Its CPU time is the
     * whole machine's through the run: in the printer room, that of all five jobs; {@code parts}
     * splits a pipeline run's by process ({@link PartsCpu#NONE} for the anchors). {@code
     * transport}: the JSON name of the job's {@link Transport}, {@code kafka} for the Kafka
     * anchors, {@link #NO_TRANSPORT} for memcpy and the raster processor alone.
     */
    record Run(
            String figure,
            String topology,
            int producers,
            int consumers,
            String job,
            boolean compute,
            String transport,
            double speed,
            int rep,
            long bytes,
            double seconds,
            double requestedBytesPerSecond,
            List<StreamOutcome> streams,
            double cpuSeconds,
            PartsCpu parts,
            Speculation speculation) {

        double mbPerSecond() {
            return bytes / seconds / 1e6;
        }

        /** The whole machine's CPU time per GB moved: every process and the kernel. */
        double cpuSecondsPerGb() {
            return cpuSeconds / (bytes / 1e9);
        }

        /** A part's CPU time per GB moved. */
        double cpuSecondsPerGb(ToDoubleFunction<PartsCpu> part) {
            return part.applyAsDouble(parts) / (bytes / 1e9);
        }

        /** How many of the machine's cores were busy, on average, through the run. */
        double coresBusy() {
            return cpuSeconds / seconds;
        }

        double[] achievedBytesPerSecond() {
            return streams.stream().mapToDouble(StreamOutcome::achievedBytesPerSecond).toArray();
        }

        /** Per stream, how far the achieved rate fell short of the requested one (0 if not). */
        double[] losses() {
            return Arrays.stream(achievedBytesPerSecond())
                    .map(a -> Math.max(0, 1 - a / requestedBytesPerSecond))
                    .toArray();
        }

        long starvationEvents() {
            return streams.stream().mapToLong(StreamOutcome::starvationEvents).sum();
        }

        /** The worst stream's median lateness. */
        long latenessP50Nanos() {
            return worst(StreamOutcome::latenessP50Nanos);
        }

        /** The worst stream's 99th percentile of lateness. */
        long latenessP99Nanos() {
            return worst(StreamOutcome::latenessP99Nanos);
        }

        long latenessMaxNanos() {
            return worst(StreamOutcome::latenessMaxNanos);
        }

        /** The longest start buffer of the streams (they share one rate, so one start delay). */
        long startDelayNanos() {
            return worst(StreamOutcome::startDelayNanos);
        }

        private long worst(ToLongFunction<StreamOutcome> metric) {
            return streams.stream().mapToLong(metric).max().orElse(0);
        }
    }

    /**
     * A run's fault and the scheduler's speculation: the fault struck ("" for none), whether
     * speculation was on, and the duplicates its job's COMPLETED status counts.
     */
    record Speculation(String fault, boolean on, long issued, long won, long bytesWasted) {
        static final Speculation NONE = new Speculation("", true, 0, 0, 0);

        /** The duplicates counted in {@code reason}, none if it counts none. */
        Speculation counted(String reason) {
            Matcher counts = DUPLICATES.matcher(reason);
            if (!counts.find()) {
                return new Speculation(fault, on, 0, 0, 0);
            }
            return new Speculation(
                    fault,
                    on,
                    Long.parseLong(counts.group(1)),
                    Long.parseLong(counts.group(2)),
                    Long.parseLong(counts.group(3)));
        }
    }

    /**
     * One job of a run: the topology column of its row, what it prints, where its streams go, each
     * stream's constant speed in bytes/s (0: read as fast as the chunks come), the way its chunks
     * go, and the fault struck on its producers ("" for none; its readers then start with the
     * buffer that rides out a producer's loss).
     */
    private record Launch(
            String topology,
            PrintJob print,
            List<String> locations,
            boolean compute,
            double rate,
            Transport transport,
            String fault) {

        Launch(
                String topology,
                PrintJob print,
                List<String> locations,
                boolean compute,
                double rate,
                Transport transport) {
            this(topology, print, locations, compute, rate, transport, "");
        }
    }

    private final GenerationOptions options;
    private final URI image;
    private final List<Run> runs = new ArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();

    private GenerationBenchmark(GenerationOptions options, URI image) {
        this.options = options;
        this.image = image;
    }

    public static void main(String[] args) throws Exception {
        GenerationOptions options = GenerationOptions.parse(args);
        Files.createDirectories(options.results());
        Path work = Files.createTempDirectory("sluice-generation-bench-");
        GenerationBenchmark benchmark =
                new GenerationBenchmark(options, TestChart.write(work).toUri());
        for (int producers = 1; producers <= 2; producers++) {
            benchmark.runAll(producers);
        }
        if (options.figures().contains(FAULTS)) {
            for (boolean speculation : List.of(false, true)) {
                benchmark.faults(speculation);
            }
        }
        String table = GenerationTables.markdown(benchmark.runs);
        Files.writeString(options.results().resolve("generation.md"), table);
        System.out.print(table);
        // Flink's split fetchers can outlive a closed MiniCluster, blocked for good on a handover
        // the reader never took (FLINK-40660); they are not daemon threads and kept this JVM up.
        System.exit(0);
    }

    /** Every measurement with {@code producers} producers, on parts started for them. */
    private void runAll(int producers) throws Exception {
        List<String> topologies =
                options.topologies().stream().filter(t -> producers(t) == producers).toList();
        if (topologies.isEmpty()) {
            return;
        }
        boolean room = producers == 2 && options.figures().contains(ROOM);
        List<String> locations = new ArrayList<>(locations(4));
        List<PrintJob> printed = new ArrayList<>(options.jobs());
        if (room) {
            locations.addAll(roomLocations());
            printed.add(options.roomGreedy());
        }
        long largestTask = printed.stream().mapToLong(this::taskSize).max().orElseThrow();
        try (EmbeddedSluice sluice =
                        EmbeddedSluice.builder()
                                .brokerdBinary(options.brokerd())
                                .parallelism(producers)
                                .outputLocations(locations, PARTITIONS)
                                .outputLocationsOnProducersHost()
                                .maxTaskSizeBytes(largestTask)
                                // Small segments, deleted soon after each run's records:
                                // the benchmark writes many GB, the disk keeps little of it.
                                .brokerProperty("log.segment.bytes", Long.toString(64L << 20))
                                .brokerProperty("log.segment.delete.delay.ms", "1000")
                                .start();
                OutputNode.Group nodes =
                        new OutputNode.Group(sluice.daemon().socket(), sluice.bootstrapServers())) {
            sluice.broker().createTopic(CEILING_TOPIC, PARTITIONS);
            warmUp(sluice, nodes, topologies);
            for (int rep = 1; rep <= options.reps(); rep++) {
                if (options.figures().contains(TRANSPORT)) {
                    runs.add(memcpy(rep));
                }
                for (PrintJob job : options.jobs()) {
                    if (options.runsCeilings()) {
                        runs.add(ceiling(sluice, producers, job, rep, false));
                        runs.add(ceiling(sluice, producers, job, rep, true));
                    }
                    if (options.figures().contains(TRANSPORT)) {
                        transports(sluice, nodes, topologies, job, rep);
                    }
                    for (String topology : topologies) {
                        for (String figure : List.of(COMPUTE_OFF, COMPUTE_ON)) {
                            boolean compute = figure.equals(COMPUTE_ON);
                            if (compute
                                    ? !options.runsComputeOn()
                                    : !options.figures().contains(COMPUTE_OFF)) {
                                continue;
                            }
                            runs.add(
                                    runOne(
                                            sluice,
                                            nodes,
                                            figure,
                                            topology,
                                            job,
                                            compute,
                                            Transport.KAFKA,
                                            0,
                                            0,
                                            rep));
                            save();
                        }
                    }
                }
            }
            PrintJob paced = options.pacedJob();
            for (String topology :
                    options.figures().contains(CONSTANT_SPEED) ? topologies : List.<String>of()) {
                double max = medianRate(COMPUTE_ON, topology, paced) * 1e6 / STREAMS_PER_JOB;
                for (int rep = 1; rep <= options.pacedReps(); rep++) {
                    for (double speed : SPEEDS) {
                        for (Transport transport : List.of(Transport.KAFKA, Transport.LOCAL)) {
                            runs.add(
                                    runOne(
                                            sluice,
                                            nodes,
                                            CONSTANT_SPEED,
                                            topology,
                                            paced,
                                            true,
                                            transport,
                                            speed,
                                            speed * max,
                                            rep));
                            save();
                        }
                    }
                }
            }
            if (room) {
                printerRoom(sluice, nodes);
            }
        }
    }

    /**
     * The faults figure on parts of its own, two producers, speculation on or off: per repetition,
     * fault and speed, job B with compute, each stream read at that share of its topology's Fig. 5
     * median (the runs of {@link #runAll} with two producers, speculation on), through Kafka.
     */
    private void faults(boolean speculation) throws Exception {
        List<String> topologies =
                options.topologies().stream().filter(t -> producers(t) == 2).toList();
        if (topologies.isEmpty()) {
            return;
        }
        PrintJob paced = options.pacedJob();
        try (EmbeddedSluice sluice =
                        EmbeddedSluice.builder()
                                .brokerdBinary(options.brokerd())
                                .parallelism(2)
                                .speculation(speculation)
                                // One kill per job: each restored as if it were the first.
                                .fixedRestartDelay(Duration.ofSeconds(1))
                                .outputLocations(locations(4), PARTITIONS)
                                .outputLocationsOnProducersHost()
                                .maxTaskSizeBytes(taskSize(paced))
                                .brokerProperty("log.segment.bytes", Long.toString(64L << 20))
                                .brokerProperty("log.segment.delete.delay.ms", "1000")
                                .start();
                OutputNode.Group nodes =
                        new OutputNode.Group(sluice.daemon().socket(), sluice.bootstrapServers())) {
            warmUp(sluice, nodes, topologies);
            for (String topology : topologies) {
                double max = medianRate(COMPUTE_ON, topology, paced) * 1e6 / STREAMS_PER_JOB;
                for (int rep = 1; rep <= options.pacedReps(); rep++) {
                    for (String fault : FAULT_KINDS) {
                        for (double speed : FAULT_SPEEDS) {
                            Launch launch =
                                    new Launch(
                                            topology,
                                            paced,
                                            locations(consumers(topology)),
                                            true,
                                            speed * max,
                                            Transport.KAFKA,
                                            fault);
                            runs.add(
                                    run(sluice, nodes, FAULTS, 2, speed, rep, List.of(launch))
                                            .get(0));
                            save();
                        }
                    }
                }
            }
        }
    }

    /**
     * The printer room: per repetition, the greedy job alone, then the four paced jobs (one per
     * printer) and the greedy job submitted together. Each paced stream reads at {@code
     * --room-load} of the many-to-many Fig. 5 median over the room's 16 paced streams; the greedy
     * job is submitted first, so that the printers' jobs come to producers already busy with it.
     * The printers' output nodes start here, after the warm-up of the figures: before the measured
     * repetitions, {@link #MIN_WARMUP_ROUNDS} unmeasured rounds of the first job, compute disabled,
     * on the five locations at once give their JVMs the warm-up the figures' nodes got.
     */
    private void printerRoom(EmbeddedSluice sluice, OutputNode.Group nodes) throws Exception {
        List<Launch> warmUp = new ArrayList<>();
        for (String location : roomLocations()) {
            warmUp.add(
                    new Launch(
                            location,
                            options.jobs().get(0),
                            List.of(location),
                            false,
                            0,
                            Transport.KAFKA));
        }
        for (int round = 1; round <= MIN_WARMUP_ROUNDS; round++) {
            run(sluice, nodes, WARM_UP, 2, 0, 0, warmUp);
        }
        PrintJob paced = options.pacedJob();
        double rate =
                options.roomLoad()
                        * medianRate(COMPUTE_ON, "many-to-many", paced)
                        * 1e6
                        / (PRINTERS.size() * STREAMS_PER_JOB);
        Launch greedy =
                new Launch(
                        GREEDY,
                        options.roomGreedy(),
                        List.of(GREEDY_LOCATION),
                        true,
                        0,
                        Transport.KAFKA);
        for (int rep = 1; rep <= options.pacedReps(); rep++) {
            runs.addAll(
                    run(
                            sluice,
                            nodes,
                            ROOM,
                            2,
                            0,
                            rep,
                            List.of(
                                    new Launch(
                                            GREEDY_ALONE,
                                            greedy.print(),
                                            greedy.locations(),
                                            true,
                                            0,
                                            Transport.KAFKA))));
            List<Launch> room = new ArrayList<>(List.of(greedy));
            for (String printer : PRINTERS) {
                room.add(new Launch(printer, paced, List.of(printer), true, rate, Transport.KAFKA));
            }
            runs.addAll(run(sluice, nodes, ROOM, 2, options.roomLoad(), rep, room));
            save();
        }
    }

    /**
     * Unmeasured rounds of every topology on the first job, as the figures will run them (with and
     * without compute): the JIT of every JVM (Flink's MiniCluster in this one, the broker's, the
     * nodes'), the page cache, the first metadata lookups. Measured after a single run, Flink's C2
     * thread took 30–50 % of a core through the first minute of runs and the broker's 30–40 %.
     * Rounds go on until this JVM compiles for less than a quarter of one (at most ten): after
     * three of B/2 it still compiled for 6.8 s of a 9.2 s round, and its C2 thread took 0.43 of a
     * core through the measured runs; the share falls to 15–25 % by the seventh round and stays
     * there. With the transport figure, each round runs the local way too.
     */
    private void warmUp(EmbeddedSluice sluice, OutputNode.Group nodes, List<String> topologies)
            throws Exception {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean transports = options.figures().contains(TRANSPORT);
        List<Boolean> computeModes =
                options.runsComputeOn() || transports ? List.of(false, true) : List.of(false);
        List<Transport> ways =
                transports ? List.of(Transport.KAFKA, Transport.LOCAL) : List.of(Transport.KAFKA);
        for (int round = 1; round <= MAX_WARMUP_ROUNDS; round++) {
            long compiledMillis = jit.getTotalCompilationTime();
            long start = System.nanoTime();
            for (String topology : topologies) {
                for (boolean compute : computeModes) {
                    for (Transport way : ways) {
                        runOne(
                                sluice,
                                nodes,
                                WARM_UP,
                                topology,
                                options.jobs().get(0),
                                compute,
                                way,
                                0,
                                0,
                                0);
                    }
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            double compiling = (jit.getTotalCompilationTime() - compiledMillis) / 1e3;
            System.err.printf(
                    Locale.ROOT,
                    "warm-up round %d: %.1f s, %.2f s of it compiling in this JVM%n",
                    round,
                    seconds,
                    compiling);
            if (round >= MIN_WARMUP_ROUNDS && compiling < SETTLED_COMPILE_SHARE * seconds) {
                return;
            }
        }
    }

    /** One job of {@code topology} alone; {@code rate}: as in {@link Launch}. */
    private Run runOne(
            EmbeddedSluice sluice,
            OutputNode.Group nodes,
            String figure,
            String topology,
            PrintJob print,
            boolean compute,
            Transport transport,
            double speed,
            double rate,
            int rep)
            throws Exception {
        Launch launch =
                new Launch(
                        topology, print, locations(consumers(topology)), compute, rate, transport);
        return run(sluice, nodes, figure, producers(topology), speed, rep, List.of(launch)).get(0);
    }

    /**
     * The transport figure's runs of {@code job} in one repetition: the raster processor alone,
     * then per topology, compute disabled and enabled, the job through Kafka and right after it the
     * local way, so that each pair sees the same state of the machine.
     */
    private void transports(
            EmbeddedSluice sluice,
            OutputNode.Group nodes,
            List<String> topologies,
            PrintJob job,
            int rep)
            throws Exception {
        runs.add(ripAlone(job, rep));
        for (String topology : topologies) {
            for (boolean compute : List.of(false, true)) {
                for (Transport transport : List.of(Transport.KAFKA, Transport.LOCAL)) {
                    runs.add(
                            runOne(
                                    sluice, nodes, TRANSPORT, topology, job, compute, transport, 0,
                                    0, rep));
                    save();
                }
            }
        }
    }

    /** The compute-disabled anchor: single-thread copies of chunks in this JVM. */
    private Run memcpy(int rep) throws Exception {
        return anchor(MEMCPY, "", false, rep, MemcpyAnchor.measure(CHUNK_BYTES));
    }

    /** The compute-enabled anchor: the raster processor alone computing {@code job}. */
    private Run ripAlone(PrintJob job, int rep) throws Exception {
        Launch alone = new Launch(RIP_ONE_THREAD, job, locations(1), true, 0, Transport.KAFKA);
        return anchor(RIP_ONE_THREAD, job.name(), true, rep, RipAlone.measure(spec(alone)));
    }

    private Run anchor(String kind, String job, boolean compute, int rep, TimedBytes timed) {
        Run run =
                new Run(
                        ANCHOR,
                        kind,
                        1,
                        0,
                        job,
                        compute,
                        NO_TRANSPORT,
                        0,
                        rep,
                        timed.bytes(),
                        timed.seconds(),
                        0,
                        List.of(),
                        timed.cpuSeconds(),
                        PartsCpu.NONE,
                        Speculation.NONE);
        System.err.printf(
                Locale.ROOT,
                "%s %-4s: %.1f MB/s, %.2f cores busy%n",
                kind,
                job,
                run.mbPerSecond(),
                run.coresBusy());
        return run;
    }

    /**
     * The spec of a launch: a print job of the raster processor (fresh id) with the launch's
     * transport. A paced job's spec carries its streams' rate, as a printer's would
     * (docs/formats.md, Job spec): the scheduler knows which streams have a pace to keep.
     */
    private JobSpec spec(Launch launch) {
        JobSpec print =
                RipJobs.spec(
                        "bench-" + ids.incrementAndGet(),
                        launch.print(),
                        image,
                        launch.locations(),
                        taskSize(launch.print()),
                        CHUNK_BYTES,
                        launch.rate() > 0
                                ? OptionalLong.of(Math.round(launch.rate()))
                                : OptionalLong.empty(),
                        launch.compute());
        GeneratorSpec generator = print.generator();
        if (!launch.fault().isEmpty()) {
            Map<String, String> parameters = new HashMap<>(generator.parameters());
            parameters.put(FaultyRipGenerator.FAULT, launch.fault());
            parameters.put(FaultyRipGenerator.PRODUCER, Integer.toString(FAULTY_PRODUCER));
            generator = new GeneratorSpec(FaultyRipGenerator.class.getName(), parameters);
        }
        return new JobSpec(
                print.id(),
                print.inputs(),
                generator,
                print.taskSizeBytes(),
                print.streams(),
                print.weight(),
                launch.transport(),
                !launch.fault().isEmpty());
    }

    /**
     * Jobs at once: each one's output locations' nodes handed its streams, ready before any job is
     * submitted; the jobs submitted one after the other, in their order; then per job its bytes
     * over the time from its submission to its last chunk read, and the machine's CPU through them
     * all, in all and per part ({@link PartsCpu}).
     */
    private List<Run> run(
            EmbeddedSluice sluice,
            OutputNode.Group nodes,
            String figure,
            int producers,
            double speed,
            int rep,
            List<Launch> launches)
            throws Exception {
        List<JobSpec> specs = new ArrayList<>();
        List<String> topics =
                launches.stream()
                        .flatMap(l -> l.locations().stream())
                        .distinct()
                        .map(ChunkTopics::forOutputLocation)
                        .toList();
        try {
            for (Launch launch : launches) {
                JobSpec spec = spec(launch);
                for (String location : launch.locations()) {
                    nodes.of(location)
                            .read(
                                    spec,
                                    Math.round(launch.rate()),
                                    startDelayMillis(launch),
                                    spec.streams().stream()
                                            .filter(s -> s.outputLocation().equals(location))
                                            .map(s -> s.name())
                                            .toList());
                }
                specs.add(spec);
            }
            // A local job whose chunks went through Kafka after all (a sink without the daemon's
            // socket sends them there, docs/sluice-sink.md) would be measured as the wrong path.
            boolean local = launches.stream().allMatch(l -> l.transport() == Transport.LOCAL);
            long chunkRecordsBefore = local ? recordsEverWritten(sluice, topics) : 0;
            double cpuBefore = MachineCpu.busySeconds();
            PartsCpu partsBefore = parts(sluice, nodes);
            List<Long> submitted = new ArrayList<>();
            for (JobSpec spec : specs) {
                submitted.add(GenerationReader.epochNanos());
                sluice.jobs().submit(spec);
            }
            List<ReadResult> results = new ArrayList<>();
            for (Launch launch : launches) {
                List<ReadResult> ofNodes = new ArrayList<>();
                for (String location : launch.locations()) {
                    ofNodes.add(nodes.of(location).result());
                }
                results.add(ReadResult.of(ofNodes));
            }
            double cpu = MachineCpu.busySeconds() - cpuBefore;
            PartsCpu parts = parts(sluice, nodes).minus(partsBefore);
            long throughKafka = local ? recordsEverWritten(sluice, topics) - chunkRecordsBefore : 0;
            if (throughKafka > 0) {
                throw new IllegalStateException(
                        "jobs "
                                + specs.stream().map(JobSpec::id).toList()
                                + " asked for the local way, but "
                                + throughKafka
                                + " of their chunks went through Kafka: does the sink have the"
                                + " daemon's socket?");
            }
            List<Run> done = new ArrayList<>();
            for (int i = 0; i < launches.size(); i++) {
                Launch launch = launches.get(i);
                ReadResult read = results.get(i);
                String id = specs.get(i).id();
                JobStatus status =
                        sluice.jobs()
                                .awaitStatus(
                                        id, s -> s.state().isTerminal(), Duration.ofMinutes(1));
                long expected = STREAMS_PER_JOB * launch.print().channelBytes();
                if (status.state() != JobState.COMPLETED || read.bytes() != expected) {
                    throw new IllegalStateException(
                            id + " " + status + ": " + read.bytes() + " of " + expected);
                }
                Run run =
                        new Run(
                                figure,
                                launch.topology(),
                                producers,
                                launch.locations().size(),
                                launch.print().name(),
                                launch.compute(),
                                launch.transport().json(),
                                speed,
                                rep,
                                read.bytes(),
                                (read.lastNanos() - submitted.get(i)) / 1e9,
                                launch.rate(),
                                read.streams(),
                                cpu,
                                parts,
                                new Speculation(launch.fault(), sluice.speculation(), 0, 0, 0)
                                        .counted(status.reason().orElse("")));
                System.err.printf(
                        Locale.ROOT,
                        "fig %s %-12s %-4s compute=%-5s %-5s rate=%.1f MB/s: %.1f MB/s, first"
                                + " chunk after %.2f s, starved %d, lateness p99 %.3f ms (max"
                                + " %.3f), %.2f cores busy%n",
                        figure,
                        launch.topology(),
                        launch.print().name(),
                        launch.compute(),
                        launch.transport().json(),
                        launch.rate() / 1e6,
                        run.mbPerSecond(),
                        (read.firstNanos() - submitted.get(i)) / 1e9,
                        run.starvationEvents(),
                        run.latenessP99Nanos() / 1e6,
                        run.latenessMaxNanos() / 1e6,
                        run.coresBusy());
                done.add(run);
            }
            return done;
        } finally {
            deleteRecords(sluice, topics);
        }
    }

    /**
     * Bare Kafka producers, as many as the pipeline's, writing the job's bytes in records of the
     * chunk size with the sink's settings (acks=all) to a topic of as many partitions: the rate the
     * runtime's transfer cannot beat on this broker. With {@code consumed}, a bare Kafka consumer
     * reads them as they come, and the run ends at the last record read: Kafka alone moving the
     * same bytes in and out on the same cores, as the pipeline must.
     */
    private Run ceiling(
            EmbeddedSluice sluice, int producers, PrintJob print, int rep, boolean consumed)
            throws Exception {
        long total = 4 * print.channelBytes();
        long records = (total + CHUNK_BYTES - 1) / CHUNK_BYTES;
        byte[] value = new byte[CHUNK_BYTES];
        var props = sluice.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        ExecutorService threads = Executors.newFixedThreadPool(producers + 1);
        KafkaConsumer<byte[], byte[]> consumer = consumed ? tailingConsumer(sluice) : null;
        double cpuBefore = MachineCpu.busySeconds();
        long start = System.nanoTime();
        try {
            List<Future<?>> done = new ArrayList<>();
            if (consumer != null) {
                done.add(
                        threads.submit(
                                () -> {
                                    long read = 0;
                                    long deadline =
                                            System.nanoTime() + Duration.ofMinutes(5).toNanos();
                                    while (read < records) {
                                        if (System.nanoTime() > deadline) {
                                            throw new IllegalStateException(
                                                    "the ceiling's consumer read "
                                                            + read
                                                            + " of "
                                                            + records
                                                            + " records in 5 minutes");
                                        }
                                        read += consumer.poll(Duration.ofMillis(200)).count();
                                    }
                                    return null;
                                }));
            }
            for (int p = 0; p < producers; p++) {
                int producer = p;
                done.add(
                        threads.submit(
                                () -> {
                                    try (var kafka =
                                            new KafkaProducer<>(
                                                    props,
                                                    new ByteArraySerializer(),
                                                    new ByteArraySerializer())) {
                                        for (long r = producer; r < records; r += producers) {
                                            kafka.send(
                                                    new ProducerRecord<byte[], byte[]>(
                                                            CEILING_TOPIC,
                                                            (int) (r % PARTITIONS),
                                                            null,
                                                            value));
                                        }
                                        kafka.flush();
                                    }
                                    return null;
                                }));
            }
            for (Future<?> future : done) {
                future.get();
            }
        } finally {
            if (consumer != null) {
                // Ends a poll still running after a producer failed; a no-op after the last record.
                consumer.wakeup();
            }
            threads.shutdown();
            threads.awaitTermination(1, TimeUnit.MINUTES);
            if (consumer != null) {
                consumer.close();
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        double cpu = MachineCpu.busySeconds() - cpuBefore;
        deleteRecords(sluice, List.of(CEILING_TOPIC));
        Run run =
                new Run(
                        ANCHOR,
                        consumed ? KAFKA_IN_AND_OUT : CEILING,
                        producers,
                        consumed ? 1 : 0,
                        print.name(),
                        false,
                        Transport.KAFKA.json(),
                        0,
                        rep,
                        records * CHUNK_BYTES,
                        seconds,
                        0,
                        List.of(),
                        cpu,
                        PartsCpu.NONE,
                        Speculation.NONE);
        System.err.printf(
                Locale.ROOT,
                "%s %d producer(s) %-4s: %.1f MB/s, %.2f cores busy%n",
                run.topology(),
                producers,
                print.name(),
                run.mbPerSecond(),
                run.coresBusy());
        return run;
    }

    /**
     * A group-less consumer of every partition of the ceiling's topic, at its end. Its fetches wait
     * 10 ms for data, not the default 500: the broker held them that long past the appends (job A
     * in and out at 54 MB/s with the machine half idle, 150-210 with 10 ms).
     */
    private static KafkaConsumer<byte[], byte[]> tailingConsumer(EmbeddedSluice sluice) {
        var props = sluice.broker().clientProperties();
        props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(8 << 20));
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        var consumer =
                new KafkaConsumer<>(
                        props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions =
                IntStream.range(0, PARTITIONS)
                        .mapToObj(p -> new TopicPartition(CEILING_TOPIC, p))
                        .toList();
        consumer.assign(partitions);
        consumer.seekToEnd(partitions);
        // Resolves the positions now, not in the first poll of the measured run.
        partitions.forEach(consumer::position);
        return consumer;
    }

    private static PartsCpu parts(EmbeddedSluice sluice, OutputNode.Group nodes) throws Exception {
        return PartsCpu.sample(sluice.broker().pid(), sluice.daemon().pid(), nodes.pids());
    }

    /** Frees the disk: the runs' records are read, their segments can go. */
    private static void deleteRecords(EmbeddedSluice sluice, List<String> topics) throws Exception {
        try (Admin admin = Admin.create(sluice.broker().clientProperties())) {
            Map<TopicPartition, RecordsToDelete> delete = new HashMap<>();
            endOffsets(admin, topics)
                    .forEach(
                            (partition, offset) ->
                                    delete.put(partition, RecordsToDelete.beforeOffset(offset)));
            admin.deleteRecords(delete).all().get();
        }
    }

    /** How many records the topics were ever given: the sum of their partitions' end offsets. */
    private static long recordsEverWritten(EmbeddedSluice sluice, List<String> topics)
            throws Exception {
        try (Admin admin = Admin.create(sluice.broker().clientProperties())) {
            return endOffsets(admin, topics).values().stream().mapToLong(Long::longValue).sum();
        }
    }

    private static Map<TopicPartition, Long> endOffsets(Admin admin, List<String> topics)
            throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (String topic : topics) {
            IntStream.range(0, PARTITIONS)
                    .forEach(p -> latest.put(new TopicPartition(topic, p), OffsetSpec.latest()));
        }
        Map<TopicPartition, Long> offsets = new HashMap<>();
        admin.listOffsets(latest)
                .all()
                .get()
                .forEach((partition, info) -> offsets.put(partition, info.offset()));
        return offsets;
    }

    private double medianRate(String figure, String topology, PrintJob job) {
        return Summary.of(
                        runs.stream()
                                .filter(
                                        r ->
                                                r.figure().equals(figure)
                                                        && r.topology().equals(topology)
                                                        && r.job().equals(job.name()))
                                .mapToDouble(Run::mbPerSecond)
                                .toArray())
                .median();
    }

    /**
     * A paced reader's start delay: one task of its stream at its rate, or under a fault the buffer
     * that rides out a producer's loss (docs/generation.md, "Buffer model"). A stream's chunks come
     * a task at a time, once per round of the producers over the job's streams, faster than it is
     * read, with a gap after each; the reader must hold enough to outlast a late round. With half a
     * task, two producers starved a reader at 90 % of their median in one of three repetitions of
     * most runs (up to 8.6 % loss on a stream).
     */
    private long startDelayMillis(Launch launch) {
        if (launch.rate() <= 0) {
            return 0;
        }
        return BufferModel.startDelayNanos(
                        taskSize(launch.print()), launch.rate(), !launch.fault().isEmpty())
                / 1_000_000;
    }

    private long taskSize(PrintJob job) {
        return RipJobs.rowAlignedTaskSize(job, TASK_TARGET_BYTES, CHUNK_BYTES);
    }

    private void save() throws Exception {
        GenerationTables.csv(runs).writeCsv(options.results().resolve("generation.csv"));
    }

    static int producers(String topology) {
        return topology.startsWith("many-") ? 2 : 1;
    }

    static int consumers(String topology) {
        return topology.endsWith("-many") ? 4 : 1;
    }

    /** The printers and the greedy job's location. */
    private static List<String> roomLocations() {
        List<String> locations = new ArrayList<>(PRINTERS);
        locations.add(GREEDY_LOCATION);
        return locations;
    }

    private static List<String> locations(int consumers) {
        return IntStream.range(0, consumers).mapToObj(i -> "reader-" + i).toList();
    }
}
