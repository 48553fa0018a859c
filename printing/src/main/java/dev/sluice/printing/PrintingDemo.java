package dev.sluice.printing;

import dev.sluice.client.job.BufferModel;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.read.StreamReader;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Stream;
import javax.imageio.ImageIO;

/**
 * The digital-printing demo (docs/printing.md), end to end on this host: print jobs go through the
 * real submission path to the generation pipeline on a Flink MiniCluster, whose producers run the
 * raster image processor ({@link RipGenerator}) task by task; the chunks of each colour channel
 * travel through Kafka and {@code sluice-brokerd} to one {@link StreamReader} per channel, which
 * reads them at the printer's constant speed: {@code --speed}, or what a short calibration run
 * measures this machine sustains ({@link Calibration}). Then each channel is checked against a
 * sequential, single-thread run of the same job, and written out as a PNG beside a composite
 * preview; the summary sets the pipeline's aggregate rate beside one thread's.
 *
 * <p>{@code ./sluice demo [--jobs A,B/8] [--speed MB/s] [--out DIR] [--image PNG]}
 */
public final class PrintingDemo {
    private static final int MAX_CHUNK_BYTES = 256 << 10;
    private static final int MIN_CHUNK_BYTES = 4 << 10;
    private static final int CHUNKS_PER_TASK = 16;
    private static final int PREVIEW_SIDE_PX = 900;

    /**
     * The demo's settings.
     *
     * @param jobs the print jobs, run at the same time
     * @param bytesPerSecond each channel's constant reading speed, the printer's; empty: measured
     *     by a calibration run on this machine ({@link Calibration})
     * @param image the input image; the generated test chart when null
     * @param out where the images go
     * @param brokerd the {@code sluice-brokerd} executable; the default one when null
     * @param parallelism producers of the generation pipeline
     * @param timeout how long a job may take
     * @param survivesProducerLoss whether the jobs' readers start with the buffer that rides out a
     *     producer's loss ({@code --buffer producer-loss}) rather than one task ({@code --buffer
     *     task}, the default): docs/generation.md, "Buffer model"
     */
    public record Options(
            List<PrintJob> jobs,
            OptionalLong bytesPerSecond,
            Path image,
            Path out,
            Path brokerd,
            int parallelism,
            Duration timeout,
            boolean survivesProducerLoss) {

        static Options parse(String[] args) {
            List<PrintJob> jobs = List.of(PrintJob.A, PrintJob.B.scaled(8));
            OptionalLong speed = OptionalLong.empty();
            Path image = null;
            Path out = Path.of("demo-output");
            Path brokerd = null;
            boolean survivesProducerLoss = false;
            for (int i = 0; i < args.length; i++) {
                String value = i + 1 < args.length ? args[i + 1] : null;
                if (value == null) {
                    throw new IllegalArgumentException(args[i] + " needs a value");
                }
                switch (args[i++]) {
                    case "--jobs" ->
                            jobs = Arrays.stream(value.split(",")).map(PrintJob::preset).toList();
                    case "--speed" -> speed = OptionalLong.of(speed(value));
                    case "--image" -> image = Path.of(value);
                    case "--out" -> out = Path.of(value);
                    case "--brokerd" -> brokerd = Path.of(value);
                    case "--buffer" -> survivesProducerLoss = survivesProducerLoss(value);
                    default ->
                            throw new IllegalArgumentException(
                                    "unknown option "
                                            + args[i - 1]
                                            + "; options: --jobs A,B/8 --speed MB/s --image PNG"
                                            + " --out DIR --brokerd PATH"
                                            + " --buffer task|producer-loss");
                }
            }
            return new Options(
                    jobs,
                    speed,
                    image,
                    out,
                    brokerd,
                    2,
                    Duration.ofMinutes(10),
                    survivesProducerLoss);
        }

        /**
         * What {@code --buffer} says: {@code producer-loss}, the buffer that rides out a producer's
         * loss, or {@code task}, one task.
         */
        public static boolean survivesProducerLoss(String buffer) {
            return switch (buffer) {
                case "task" -> false;
                case "producer-loss" -> true;
                default ->
                        throw new IllegalArgumentException(
                                "--buffer: task or producer-loss, got '" + buffer + "'");
            };
        }

        private static long speed(String megabytesPerSecond) {
            double parsed;
            try {
                parsed = Double.parseDouble(megabytesPerSecond);
            } catch (NumberFormatException e) {
                parsed = Double.NaN;
            }
            long bytes = Math.round(parsed * 1e6);
            if (!(parsed > 0) || bytes < 1) {
                throw new IllegalArgumentException(
                        "--speed: a positive rate in MB/s, got '" + megabytesPerSecond + "'");
            }
            return bytes;
        }
    }

    /** What one channel of one job came to. */
    public record ChannelReport(
            Channel channel,
            long bytes,
            long chunks,
            double bytesPerSecond,
            long starvationEvents,
            long latenessP99Nanos,
            long latenessMaxNanos,
            String streamedSha256,
            String sequentialSha256,
            Path png) {

        public boolean matches() {
            return streamedSha256.equals(sequentialSha256);
        }
    }

    /** What one print job came to. */
    public record JobReport(
            PrintJob job,
            String jobId,
            JobState state,
            String reason,
            double seconds,
            double sequentialSeconds,
            List<ChannelReport> channels,
            Path composite) {

        public long bytes() {
            return channels.stream().mapToLong(ChannelReport::bytes).sum();
        }

        public boolean ok() {
            return state == JobState.COMPLETED
                    && channels.stream().allMatch(ChannelReport::matches);
        }
    }

    /**
     * What the demo came to.
     *
     * @param bytesPerSecond the speed each channel was read at
     * @param measured whether the calibration measured it ({@code --speed} not given)
     * @param jobs each job's report
     * @param seconds from the first submission to the last chunk read, of any job
     */
    public record Report(
            long bytesPerSecond, boolean measured, List<JobReport> jobs, double seconds) {

        public long bytes() {
            return jobs.stream().mapToLong(JobReport::bytes).sum();
        }

        /** Every channel's bytes over {@link #seconds()}: what the pipeline moved. */
        public double aggregateBytesPerSecond() {
            return bytes() / seconds;
        }

        /** One thread computing the same jobs, one after the other ({@link SequentialRip}). */
        public double sequentialBytesPerSecond() {
            return bytes() / jobs.stream().mapToDouble(JobReport::sequentialSeconds).sum();
        }

        public long starvationEvents() {
            return jobs.stream()
                    .flatMap(job -> job.channels().stream())
                    .mapToLong(ChannelReport::starvationEvents)
                    .sum();
        }

        public boolean ok() {
            return jobs.stream().allMatch(JobReport::ok);
        }
    }

    private PrintingDemo() {}

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("demo: " + e.getMessage());
            System.exit(2);
            return;
        }
        Report report;
        try {
            report = run(options, System.out, System.console() != null);
        } catch (Calibration.Failed e) {
            System.err.println("demo: " + e.getMessage());
            System.exit(1);
            return;
        }
        System.exit(report.ok() ? 0 : 1);
    }

    /**
     * Runs the demo, printing its progress and summary to {@code out}.
     *
     * @throws Calibration.Failed if the speed was to be measured and the calibration failed
     */
    public static Report run(Options options, PrintStream out, boolean terminal) throws Exception {
        Files.createDirectories(options.out());
        Path image = options.image() != null ? options.image() : TestChart.write(options.out());
        if (!Files.isReadable(image)) {
            throw new IOException("--image: cannot read " + image);
        }
        BufferedImage input = ImageIO.read(image.toFile());
        if (input == null) {
            throw new IOException(image + " is not an image ImageIO can read");
        }
        URI imageUri = image.toAbsolutePath().toUri();
        List<String> locations =
                Arrays.stream(Channel.values()).map(PrintingDemo::outputLocation).toList();
        long largestTask = largestTask(options.jobs());

        long started = System.nanoTime();
        out.println("Sluice digital-printing demo: the raster image processor of docs/printing.md");
        out.printf("input      %s (%d x %d px)%n", image, input.getWidth(), input.getHeight());
        EmbeddedSluice.Builder parts =
                EmbeddedSluice.builder()
                        .parallelism(options.parallelism())
                        .outputLocations(locations, 4)
                        // The print heads are on this machine, as the producers are: their chunks
                        // go the local way (docs/generation.md, "Transports").
                        .outputLocationsOnProducersHost()
                        .maxTaskSizeBytes(largestTask);
        if (options.brokerd() != null) {
            parts.brokerdBinary(options.brokerd());
        }
        try (EmbeddedSluice sluice = parts.start()) {
            out.printf(
                    Locale.ROOT,
                    "cluster    Kafka broker %s, sluice-brokerd pid %d, Flink MiniCluster with %d"
                            + " producers (%.1f s)%n",
                    sluice.bootstrapServers(),
                    sluice.daemon().pid(),
                    sluice.parallelism(),
                    (System.nanoTime() - started) / 1e9);
            long speed;
            if (options.bytesPerSecond().isPresent()) {
                speed = options.bytesPerSecond().getAsLong();
                out.printf(
                        Locale.ROOT,
                        "speed      %.1f MB/s per channel (--speed; not measured)%n",
                        speed / 1e6);
            } else {
                Calibration.Measurement measured =
                        Calibration.measure(
                                sluice,
                                options.jobs(),
                                imageUri,
                                locations,
                                options.timeout(),
                                out);
                speed = measured.bytesPerSecond();
                out.println("speed      " + measured.describe());
            }
            List<JobSpec> specs = new ArrayList<>();
            for (PrintJob job : options.jobs()) {
                JobSpec spec =
                        spec("print-" + idOf(job), job, imageUri, locations, OptionalLong.of(speed))
                                .withSurvivesProducerLoss(options.survivesProducerLoss());
                specs.add(spec);
                out.printf(
                        Locale.ROOT,
                        "job        %-10s %s: %.0f x %.0f in at %d dpi, 4 channels of %d x %d"
                                + " px (%.1f MB each), read at %.1f MB/s per channel%n",
                        spec.id(),
                        job.useCase(),
                        job.sheetWidthInches(),
                        job.sheetHeightInches(),
                        job.dpi(),
                        job.widthPx(),
                        job.heightPx(),
                        job.channelBytes() / 1e6,
                        speed / 1e6);
                out.printf(
                        "buffer     %-10s %s%n",
                        spec.id(),
                        BufferModel.explain(
                                spec.taskSizeBytes(), speed, spec.survivesProducerLoss()));
            }
            PrintRun.Result run =
                    PrintRun.run(sluice, options.jobs(), specs, options.timeout(), out, terminal);
            List<JobReport> jobs = new ArrayList<>();
            for (PrintRun.Job job : run.jobs()) {
                jobs.add(report(options, input, job, run.submittedNanos(), out));
            }
            Report report =
                    new Report(speed, options.bytesPerSecond().isEmpty(), jobs, run.seconds());
            printSummary(report, out);
            return report;
        }
    }

    private static JobReport report(
            Options options,
            BufferedImage input,
            PrintRun.Job run,
            long submittedNanos,
            PrintStream out)
            throws Exception {
        PrintJob job = run.job();
        String id = run.spec().id();
        double seconds = (run.lastChunkNanos() - submittedNanos) / 1e9;

        out.printf("check      %s: computing it again in one thread...%n", id);
        long sequentialStart = System.nanoTime();
        Map<Channel, byte[]> reference =
                SequentialRip.sha256(
                        new RasterImageProcessor(input, job.widthPx(), job.heightPx()));
        double sequentialSeconds = (System.nanoTime() - sequentialStart) / 1e9;

        Path dir = options.out().resolve(id);
        Files.createDirectories(dir);
        List<ChannelReport> channels = new ArrayList<>();
        Map<Channel, byte[]> rasters = new EnumMap<>(Channel.class);
        for (Channel channel : Channel.values()) {
            ChannelReceiver.Result result = run.channels().get(channel);
            Path png = dir.resolve(channel.streamName() + ".png");
            ChannelImages.writeChannelPng(png, result.raster(), job.widthPx(), job.heightPx());
            rasters.put(channel, result.raster());
            channels.add(
                    new ChannelReport(
                            channel,
                            result.raster().length,
                            result.chunks(),
                            result.stats().achievedRateBytesPerSecond(),
                            result.stats().starvationEvents(),
                            result.stats().latenessP99Nanos(),
                            result.stats().latenessMaxNanos(),
                            SequentialRip.hex(result.sha256()),
                            SequentialRip.hex(reference.get(channel)),
                            png));
        }
        Path composite = dir.resolve("composite.png");
        ChannelImages.writeCompositePng(
                composite, rasters, job.widthPx(), job.heightPx(), PREVIEW_SIDE_PX);
        return new JobReport(
                job,
                id,
                run.status().state(),
                run.status().reason().orElse(""),
                seconds,
                sequentialSeconds,
                channels,
                composite);
    }

    private static void printSummary(Report report, PrintStream out) {
        out.println();
        out.printf(
                Locale.ROOT,
                "%-10s %-8s %10s %7s %11s %8s %9s %9s  %-8s %-16s%n",
                "job",
                "stream",
                "MB",
                "chunks",
                "MB/s",
                "starved",
                "late p99",
                "late max",
                "order",
                "sha-256 (= sequential)");
        for (JobReport job : report.jobs()) {
            for (ChannelReport channel : job.channels()) {
                out.printf(
                        Locale.ROOT,
                        "%-10s %-8s %10.1f %7d %11.2f %8d %6.1f ms %6.1f ms  %-8s %s %s%n",
                        job.jobId(),
                        channel.channel().streamName(),
                        channel.bytes() / 1e6,
                        channel.chunks(),
                        channel.bytesPerSecond() / 1e6,
                        channel.starvationEvents(),
                        channel.latenessP99Nanos() / 1e6,
                        channel.latenessMaxNanos() / 1e6,
                        "in order",
                        channel.streamedSha256().substring(0, 16),
                        channel.matches()
                                ? "= sequential"
                                : "DIFFERS from sequential "
                                        + channel.sequentialSha256().substring(0, 16));
            }
        }
        out.println();
        for (JobReport job : report.jobs()) {
            out.printf(
                    Locale.ROOT,
                    "%-10s %s: %.1f MB in %.1f s from submission (%.1f MB/s over 4 channels read"
                            + " at %.1f MB/s each); one thread computes it in %.1f s%n",
                    job.jobId(),
                    job.state(),
                    job.bytes() / 1e6,
                    job.seconds(),
                    job.bytes() / 1e6 / job.seconds(),
                    report.bytesPerSecond() / 1e6,
                    job.sequentialSeconds());
            if (!job.reason().isEmpty()) {
                // The scheduler's count: those tasks' chunks went the local way.
                out.printf("           %s%n", job.reason());
            }
            out.printf("           images: %s%n", job.composite().getParent().toAbsolutePath());
        }
        int channels = 4 * report.jobs().size();
        out.println();
        out.printf(
                Locale.ROOT,
                "aggregate  %.1f MB in %.1f s from the first submission: %.1f MB/s over %d"
                        + " channels read at %.1f MB/s each (%.1f MB/s requested, %s); one thread"
                        + " computes the same jobs at %.1f MB/s, so the pipeline moved %.2f times"
                        + " that%n",
                report.bytes() / 1e6,
                report.seconds(),
                report.aggregateBytesPerSecond() / 1e6,
                channels,
                report.bytesPerSecond() / 1e6,
                channels * report.bytesPerSecond() / 1e6,
                report.measured() ? "measured" : "--speed",
                report.sequentialBytesPerSecond() / 1e6,
                report.aggregateBytesPerSecond() / report.sequentialBytesPerSecond());
        out.printf("starvation events: %d%n", report.starvationEvents());
        out.println();
        out.println(
                report.ok()
                        ? "every channel arrived complete, in order, and equal to the sequential"
                                + " run"
                        : "MISMATCH: see the rows above");
    }

    /**
     * The demo's print job: its four channels to {@code locations}, read at {@code bytesPerSecond}
     * each, in chunks of {@link #chunkSize} and tasks of about 16 chunks of whole rows.
     */
    public static JobSpec spec(
            String id, PrintJob job, URI image, List<String> locations, long bytesPerSecond) {
        return spec(id, job, image, locations, OptionalLong.of(bytesPerSecond));
    }

    /** {@link #spec(String, PrintJob, URI, List, long)}, unpaced when {@code rate} is empty. */
    static JobSpec spec(
            String id, PrintJob job, URI image, List<String> locations, OptionalLong rate) {
        return RipJobs.spec(id, job, image, locations, taskSize(job), chunkSize(job), rate, true);
    }

    /** Tasks of about {@value #CHUNKS_PER_TASK} chunks, whole rows. */
    static long taskSize(PrintJob job) {
        int chunk = chunkSize(job);
        return RipJobs.rowAlignedTaskSize(job, (long) CHUNKS_PER_TASK * chunk, chunk);
    }

    /**
     * The largest task of {@code jobs} and of their calibration jobs, which sizes the sink's
     * in-flight cap per stream (four tasks per producer: docs/printing.md, The demo). Rounded to
     * their own rows, a calibration job's task may come out a little larger than the task of the
     * job it stands for (B's are 4,176,000 bytes, its calibration job's 4,192,000).
     */
    static long largestTask(List<PrintJob> jobs) {
        return Stream.concat(jobs.stream(), Calibration.scaledDown(jobs).stream())
                .mapToLong(PrintingDemo::taskSize)
                .max()
                .orElseThrow();
    }

    /** A job's name as part of a job id: {@code B/8} is {@code B-8}. */
    static String idOf(PrintJob job) {
        return job.name().replace('/', '-');
    }

    /**
     * Chunks of 256 KiB, or smaller for a small job, so that even a small channel comes as a run of
     * chunks computed by several tasks on both producers.
     */
    static int chunkSize(PrintJob job) {
        long chunk = Math.min(MAX_CHUNK_BYTES, Math.max(MIN_CHUNK_BYTES, job.channelBytes() / 32));
        return (int) chunk;
    }

    /** The print head of a channel: where its stream goes. */
    public static String outputLocation(Channel channel) {
        return "printhead-" + channel.streamName();
    }
}
