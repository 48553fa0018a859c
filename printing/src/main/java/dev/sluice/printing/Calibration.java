package dev.sluice.printing;

import dev.sluice.client.job.JobSpec;
import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.stream.Collectors;

/**
 * The demo's per-channel speed when {@code --speed} is not given, measured on this machine
 * (docs/printing.md, The demo): the chosen jobs, scaled down, go through the real pipeline to
 * unpaced readers, and a share of the rate they moved at, over the channels of the chosen jobs, is
 * the speed each channel is then read at.
 */
final class Calibration {

    /**
     * The share of the measured rate the jobs are read at. The calibration is short and part of the
     * JVM's warm-up: even its measured round runs on code still being compiled, and a second or two
     * on a shared machine is a noisy figure. And the real jobs then run side by side at different
     * sizes, a job's tasks starting, checkpointing and ending while the others' stream on. Half
     * keeps each stream's producers ahead of its reader through the other jobs' bursts.
     */
    static final double MARGIN = 0.5;

    /**
     * All calibration jobs' channels together, in each of its two rounds: 2.3 s and 1.6 s through
     * the pipeline on the development machine's two cores, long enough that the jobs' start (0.05 s
     * to the first chunk once warm) is a small part of the measured round.
     */
    static final long BYTES = 64_000_000;

    /** The speed's step: speeds are rounded down to it, and it is the least speed. */
    static final long STEP_BYTES_PER_SECOND = 100_000;

    /**
     * What the calibration measured.
     *
     * @param jobs the chosen jobs it stood for
     * @param run the calibration jobs' run
     * @param bytesPerSecond the speed it gives each channel
     */
    record Measurement(List<PrintJob> jobs, PrintRun.Result run, long bytesPerSecond) {

        /** The line the demo prints. */
        String describe() {
            return String.format(
                    Locale.ROOT,
                    "%.1f MB/s per channel (measured: this machine's pipeline moved %.1f MB/s"
                            + " unpaced for %s in %.1f s; %.0f %% of it over %d channels);"
                            + " --speed MB/s sets it",
                    bytesPerSecond / 1e6,
                    run.bytesPerSecond() / 1e6,
                    jobs.stream().map(PrintJob::name).collect(Collectors.joining(",")),
                    run.seconds(),
                    MARGIN * 100,
                    4 * jobs.size());
        }
    }

    /** The calibration failed: what failed, and how to do without it. */
    static final class Failed extends Exception {
        Failed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private Calibration() {}

    /**
     * Runs the calibration jobs of {@code jobs} on {@code sluice}, saying which on {@code out}, and
     * returns the per-channel speed.
     *
     * @throws Failed if a calibration job did not complete, or a stream of it came incomplete or
     *     out of order
     */
    static Measurement measure(
            EmbeddedSluice sluice,
            List<PrintJob> jobs,
            URI image,
            List<String> locations,
            Duration timeout,
            PrintStream out)
            throws Exception {
        List<PrintJob> scaled = scaledDown(jobs);
        out.printf(
                Locale.ROOT,
                "calibrate  %s, %.1f MB, read unpaced twice (warm-up-*, then calibrate-*) to"
                        + " measure the speed this machine sustains...%n",
                scaled.stream().map(PrintJob::name).collect(Collectors.joining(", ")),
                scaled.stream().mapToLong(job -> 4 * job.channelBytes()).sum() / 1e6);
        // A cold pipeline is not what the jobs run on: on the development machine the default
        // jobs' calibration moved 27 MB/s the first time on a fresh cluster, 40 the second and 51
        // the third. The first round warms up and only the second is measured.
        runChecked(sluice, jobs, scaled, "warm-up-", image, locations, timeout);
        PrintRun.Result run =
                runChecked(sluice, jobs, scaled, "calibrate-", image, locations, timeout);
        return new Measurement(jobs, run, perChannelSpeed(run.bytesPerSecond(), 4 * jobs.size()));
    }

    /** The calibration jobs of {@code jobs}, ids with {@code prefix}, run and checked complete. */
    private static PrintRun.Result runChecked(
            EmbeddedSluice sluice,
            List<PrintJob> jobs,
            List<PrintJob> scaled,
            String prefix,
            URI image,
            List<String> locations,
            Duration timeout)
            throws Exception {
        List<JobSpec> specs = new ArrayList<>();
        for (int i = 0; i < jobs.size(); i++) {
            specs.add(
                    PrintingDemo.spec(
                            prefix + PrintingDemo.idOf(jobs.get(i)),
                            scaled.get(i),
                            image,
                            locations,
                            OptionalLong.empty()));
        }
        PrintRun.Result run;
        try {
            run = PrintRun.run(sluice, scaled, specs, timeout, null, false);
        } catch (IllegalStateException e) {
            throw failed(e.getMessage(), e);
        }
        checkCompleted(run);
        return run;
    }

    /**
     * A calibration job that did not complete fails the calibration: its streams may have ended
     * whole, but its rate would be a job's that went wrong.
     */
    static void checkCompleted(PrintRun.Result run) throws Failed {
        for (PrintRun.Job job : run.jobs()) {
            if (!job.completed()) {
                throw failed(
                        "job "
                                + job.spec().id()
                                + " ended "
                                + job.status().state()
                                + job.status().reason().map(reason -> ": " + reason).orElse(""),
                        null);
            }
        }
    }

    /**
     * Each job at the resolution that makes its channels {@link #BYTES} over the chosen jobs'
     * channels (rounded down), or the job itself if it is that small already.
     */
    static List<PrintJob> scaledDown(List<PrintJob> jobs) {
        double channelBytes = (double) BYTES / (4 * jobs.size());
        List<PrintJob> scaled = new ArrayList<>();
        for (PrintJob job : jobs) {
            double squareInches = job.sheetWidthInches() * job.sheetHeightInches();
            int dpi =
                    (int) Math.max(1, Math.min(job.dpi(), Math.sqrt(channelBytes / squareInches)));
            scaled.add(
                    dpi == job.dpi()
                            ? job
                            : new PrintJob(
                                    job.name() + " at " + dpi + " dpi",
                                    job.useCase(),
                                    job.sheetWidthInches(),
                                    job.sheetHeightInches(),
                                    dpi));
        }
        return scaled;
    }

    /**
     * {@link #MARGIN} of {@code aggregateBytesPerSecond} over {@code channels}, rounded down to
     * {@link #STEP_BYTES_PER_SECOND} and at least that.
     */
    static long perChannelSpeed(double aggregateBytesPerSecond, int channels) {
        // The nudge keeps a whole number of steps computed as 41.999... at 42.
        double steps = MARGIN * aggregateBytesPerSecond / channels / STEP_BYTES_PER_SECOND;
        return Math.max(1, (long) Math.floor(steps + 1e-9)) * STEP_BYTES_PER_SECOND;
    }

    private static Failed failed(String what, Throwable cause) {
        return new Failed(
                "the calibration failed: "
                        + what
                        + "; --speed MB/s sets the per-channel speed without it",
                cause);
    }
}
