package dev.sluice.examples.printing;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.JobStatus;
import dev.sluice.client.stream.StreamReader;
import dev.sluice.examples.EmbeddedSluice;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;

/**
 * The digital-printing demo (seed 001 §5.1), end to end on this host: print jobs go through the
 * real submission path to the generation pipeline on a Flink MiniCluster, whose producers run the
 * raster image processor ({@link RipGenerator}) task by task; the chunks of each colour channel
 * travel through Kafka and {@code sluice-brokerd} to one {@link StreamReader} per channel, which
 * reads them at the printer's constant speed. Then each channel is checked against a sequential,
 * single-thread run of the same job, and written out as a PNG beside a composite preview.
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
     * @param bytesPerSecond each channel's constant reading speed, the printer's
     * @param image the input image; the generated test chart when null
     * @param out where the images go
     * @param brokerd the {@code sluice-brokerd} executable; the default one when null
     * @param parallelism producers of the generation pipeline
     * @param timeout how long a job may take
     */
    public record Options(
            List<PrintJob> jobs,
            long bytesPerSecond,
            Path image,
            Path out,
            Path brokerd,
            int parallelism,
            Duration timeout) {

        static Options parse(String[] args) {
            List<PrintJob> jobs = List.of(PrintJob.A, PrintJob.B.scaled(8));
            long speed = 1_500_000;
            Path image = null;
            Path out = Path.of("demo-output");
            Path brokerd = null;
            for (int i = 0; i < args.length; i++) {
                String value = i + 1 < args.length ? args[i + 1] : null;
                if (value == null) {
                    throw new IllegalArgumentException(args[i] + " needs a value");
                }
                switch (args[i++]) {
                    case "--jobs" ->
                            jobs = Arrays.stream(value.split(",")).map(PrintJob::preset).toList();
                    case "--speed" -> speed = speed(value);
                    case "--image" -> image = Path.of(value);
                    case "--out" -> out = Path.of(value);
                    case "--brokerd" -> brokerd = Path.of(value);
                    default ->
                            throw new IllegalArgumentException(
                                    "unknown option "
                                            + args[i - 1]
                                            + "; options: --jobs A,B/8 --speed MB/s --image PNG"
                                            + " --out DIR --brokerd PATH");
                }
            }
            return new Options(jobs, speed, image, out, brokerd, 2, Duration.ofMinutes(10));
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
            double seconds,
            double sequentialSeconds,
            List<ChannelReport> channels,
            Path composite) {

        public boolean ok() {
            return state == JobState.COMPLETED
                    && channels.stream().allMatch(ChannelReport::matches);
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
        List<JobReport> reports = run(options, System.out, System.console() != null);
        System.exit(reports.stream().allMatch(JobReport::ok) ? 0 : 1);
    }

    /** Runs the demo, printing its progress and summary to {@code out}. */
    public static List<JobReport> run(Options options, PrintStream out, boolean terminal)
            throws Exception {
        Files.createDirectories(options.out());
        Path image = options.image() != null ? options.image() : TestChart.write(options.out());
        if (!Files.isReadable(image)) {
            throw new IOException("--image: cannot read " + image);
        }
        BufferedImage input = ImageIO.read(image.toFile());
        if (input == null) {
            throw new IOException(image + " is not an image ImageIO can read");
        }
        List<String> locations =
                Arrays.stream(Channel.values()).map(PrintingDemo::outputLocation).toList();
        List<JobSpec> specs = new ArrayList<>();
        long largestTask = 0;
        for (PrintJob job : options.jobs()) {
            JobSpec spec =
                    spec(
                            "print-" + job.name().replace('/', '-'),
                            job,
                            image.toAbsolutePath().toUri(),
                            locations,
                            options.bytesPerSecond());
            largestTask = Math.max(largestTask, spec.taskSizeBytes());
            specs.add(spec);
        }

        long started = System.nanoTime();
        out.println("Sluice digital-printing demo: the raster image processor of seed 001 §5.1");
        out.printf("input      %s (%d x %d px)%n", image, input.getWidth(), input.getHeight());
        EmbeddedSluice.Builder parts =
                EmbeddedSluice.builder()
                        .parallelism(options.parallelism())
                        .outputLocations(locations, 4)
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
            for (int i = 0; i < specs.size(); i++) {
                PrintJob job = options.jobs().get(i);
                out.printf(
                        Locale.ROOT,
                        "job        %-10s %s: %.0f x %.0f in at %d dpi, 4 channels of %d x %d"
                                + " px (%.1f MB each), read at %.1f MB/s per channel%n",
                        specs.get(i).id(),
                        job.useCase(),
                        job.sheetWidthInches(),
                        job.sheetHeightInches(),
                        job.dpi(),
                        job.widthPx(),
                        job.heightPx(),
                        job.channelBytes() / 1e6,
                        options.bytesPerSecond() / 1e6);
            }
            return print(sluice, options, input, specs, out, terminal);
        }
    }

    private static List<JobReport> print(
            EmbeddedSluice sluice,
            Options options,
            BufferedImage input,
            List<JobSpec> specs,
            PrintStream out,
            boolean terminal)
            throws Exception {
        ExecutorService threads = Executors.newCachedThreadPool();
        try {
            // Every reader is there before its job is submitted: a job starts once each of its
            // streams has its reader.
            List<List<Future<ChannelReceiver.Result>>> results = new ArrayList<>();
            List<ProgressBar.Line> lines = new ArrayList<>();
            for (int i = 0; i < specs.size(); i++) {
                JobSpec spec = specs.get(i);
                PrintJob job = options.jobs().get(i);
                List<ChannelReceiver> channels = new ArrayList<>();
                List<Future<ChannelReceiver.Result>> futures = new ArrayList<>();
                for (Channel channel : Channel.values()) {
                    StreamReader reader = sluice.reader(spec, channel.streamName()).open();
                    ChannelReceiver receiver =
                            new ChannelReceiver(
                                    channel, reader, job.channelBytes(), options.timeout());
                    channels.add(receiver);
                    futures.add(threads.submit(receiver));
                }
                results.add(futures);
                lines.add(
                        new ProgressBar.Line(
                                spec.id(),
                                4 * job.channelBytes(),
                                () ->
                                        channels.stream()
                                                .mapToLong(ChannelReceiver::received)
                                                .sum()));
            }
            long submitted = System.nanoTime();
            specs.forEach(sluice.jobs()::submit);
            ProgressBar bar = new ProgressBar(out, terminal, lines);
            out.println();
            while (!results.stream().flatMap(List::stream).allMatch(Future::isDone)) {
                bar.update();
                TimeUnit.MILLISECONDS.sleep(terminal ? 200 : 500);
                if (!sluice.isGenerationRunning()) {
                    throw new IllegalStateException(
                            "the generation pipeline stopped; see the Flink log");
                }
            }
            bar.finish();
            out.println();

            List<JobReport> reports = new ArrayList<>();
            for (int i = 0; i < specs.size(); i++) {
                reports.add(
                        report(
                                sluice,
                                options,
                                input,
                                specs.get(i),
                                options.jobs().get(i),
                                results.get(i),
                                submitted,
                                out));
            }
            printSummary(reports, options, out);
            return reports;
        } finally {
            threads.shutdownNow();
        }
    }

    private static JobReport report(
            EmbeddedSluice sluice,
            Options options,
            BufferedImage input,
            JobSpec spec,
            PrintJob job,
            List<Future<ChannelReceiver.Result>> futures,
            long submittedNanos,
            PrintStream out)
            throws Exception {
        JobStatus status =
                sluice.jobs()
                        .awaitStatus(spec.id(), s -> s.state().isTerminal(), options.timeout());
        Map<Channel, ChannelReceiver.Result> received = new EnumMap<>(Channel.class);
        long last = 0;
        for (Future<ChannelReceiver.Result> future : futures) {
            ChannelReceiver.Result result = future.get();
            received.put(result.channel(), result);
            last = Math.max(last, result.lastChunkNanos());
        }
        double seconds = (last - submittedNanos) / 1e9;

        out.printf("check      %s: computing it again in one thread...%n", spec.id());
        long sequentialStart = System.nanoTime();
        Map<Channel, byte[]> reference =
                SequentialRip.sha256(
                        new RasterImageProcessor(input, job.widthPx(), job.heightPx()));
        double sequentialSeconds = (System.nanoTime() - sequentialStart) / 1e9;

        Path dir = options.out().resolve(spec.id());
        Files.createDirectories(dir);
        List<ChannelReport> channels = new ArrayList<>();
        Map<Channel, byte[]> rasters = new EnumMap<>(Channel.class);
        for (Channel channel : Channel.values()) {
            ChannelReceiver.Result result = received.get(channel);
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
                            SequentialRip.hex(result.sha256()),
                            SequentialRip.hex(reference.get(channel)),
                            png));
        }
        Path composite = dir.resolve("composite.png");
        ChannelImages.writeCompositePng(
                composite, rasters, job.widthPx(), job.heightPx(), PREVIEW_SIDE_PX);
        return new JobReport(
                job, spec.id(), status.state(), seconds, sequentialSeconds, channels, composite);
    }

    private static void printSummary(List<JobReport> reports, Options options, PrintStream out) {
        out.println();
        out.printf(
                Locale.ROOT,
                "%-10s %-8s %10s %7s %11s %8s  %-8s %-16s%n",
                "job",
                "stream",
                "MB",
                "chunks",
                "MB/s",
                "starved",
                "order",
                "sha-256 (= sequential)");
        for (JobReport report : reports) {
            for (ChannelReport channel : report.channels()) {
                out.printf(
                        Locale.ROOT,
                        "%-10s %-8s %10.1f %7d %11.2f %8d  %-8s %s %s%n",
                        report.jobId(),
                        channel.channel().streamName(),
                        channel.bytes() / 1e6,
                        channel.chunks(),
                        channel.bytesPerSecond() / 1e6,
                        channel.starvationEvents(),
                        "in order",
                        channel.streamedSha256().substring(0, 16),
                        channel.matches()
                                ? "= sequential"
                                : "DIFFERS from sequential "
                                        + channel.sequentialSha256().substring(0, 16));
            }
        }
        out.println();
        for (JobReport report : reports) {
            long bytes = report.channels().stream().mapToLong(ChannelReport::bytes).sum();
            out.printf(
                    Locale.ROOT,
                    "%-10s %s: %.1f MB in %.1f s from submission (%.1f MB/s over 4 channels read"
                            + " at %.1f MB/s each); one thread computes it in %.1f s%n",
                    report.jobId(),
                    report.state(),
                    bytes / 1e6,
                    report.seconds(),
                    bytes / 1e6 / report.seconds(),
                    options.bytesPerSecond() / 1e6,
                    report.sequentialSeconds());
            out.printf("           images: %s%n", report.composite().getParent().toAbsolutePath());
        }
        boolean ok = reports.stream().allMatch(JobReport::ok);
        out.println();
        out.println(
                ok
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
        int chunk = chunkSize(job);
        long task = RipJobs.rowAlignedTaskSize(job, (long) CHUNKS_PER_TASK * chunk, chunk);
        return RipJobs.spec(
                id, job, image, locations, task, chunk, OptionalLong.of(bytesPerSecond), true);
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
