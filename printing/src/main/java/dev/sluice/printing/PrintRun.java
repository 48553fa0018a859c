package dev.sluice.printing;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.JobStatus;
import dev.sluice.client.read.StreamReader;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Print jobs submitted together and read to the end, one {@link ChannelReceiver} per channel: what
 * the demo's calibration and its jobs both do (docs/printing.md, The demo).
 */
final class PrintRun {

    /** One job of the run: its final status and what each channel received. */
    record Job(
            PrintJob job,
            JobSpec spec,
            JobStatus status,
            Map<Channel, ChannelReceiver.Result> channels) {

        long bytes() {
            return channels.values().stream().mapToLong(result -> result.raster().length).sum();
        }

        long lastChunkNanos() {
            return channels.values().stream()
                    .mapToLong(ChannelReceiver.Result::lastChunkNanos)
                    .max()
                    .orElseThrow();
        }

        boolean completed() {
            return status.state() == JobState.COMPLETED;
        }
    }

    /**
     * The whole run.
     *
     * @param submittedNanos when the first job was submitted ({@link System#nanoTime})
     */
    record Result(long submittedNanos, List<Job> jobs) {

        long bytes() {
            return jobs.stream().mapToLong(Job::bytes).sum();
        }

        int channels() {
            return jobs.stream().mapToInt(job -> job.channels().size()).sum();
        }

        /** From the first submission to the last chunk read, of any job. */
        double seconds() {
            long last = jobs.stream().mapToLong(Job::lastChunkNanos).max().orElseThrow();
            return (last - submittedNanos) / 1e9;
        }

        /** Every channel's bytes over {@link #seconds()}: what the pipeline moved. */
        double bytesPerSecond() {
            return bytes() / seconds();
        }
    }

    private PrintRun() {}

    /**
     * Opens a reader per channel of each job, submits the jobs and waits until every stream has
     * ended, then for each job's final status. With {@code progress}, a progress bar per job is
     * drawn on it meanwhile.
     *
     * @throws IllegalStateException naming the job and stream, if a stream came out of order,
     *     short, long, or not within {@code timeout}, or if the generation pipeline stopped
     */
    static Result run(
            EmbeddedSluice sluice,
            List<PrintJob> jobs,
            List<JobSpec> specs,
            Duration timeout,
            PrintStream progress,
            boolean terminal)
            throws Exception {
        ExecutorService threads = Executors.newCachedThreadPool();
        try {
            // Every reader is there before its job is submitted: a job starts once each of its
            // streams has its reader. They open side by side: each one connects to the daemon and
            // starts a Kafka producer for its progress, about half a second on a cold JVM.
            List<List<Future<StreamReader>>> readers = new ArrayList<>();
            for (JobSpec spec : specs) {
                List<Future<StreamReader>> opening = new ArrayList<>();
                for (Channel channel : Channel.values()) {
                    opening.add(
                            threads.submit(() -> sluice.reader(spec, channel.streamName()).open()));
                }
                readers.add(opening);
            }
            List<List<Future<ChannelReceiver.Result>>> results = new ArrayList<>();
            List<ProgressBar.Line> lines = new ArrayList<>();
            for (int i = 0; i < specs.size(); i++) {
                JobSpec spec = specs.get(i);
                PrintJob job = jobs.get(i);
                List<ChannelReceiver> channels = new ArrayList<>();
                List<Future<ChannelReceiver.Result>> futures = new ArrayList<>();
                for (Channel channel : Channel.values()) {
                    StreamReader reader = opened(spec, readers.get(i).get(channel.ordinal()));
                    ChannelReceiver receiver =
                            new ChannelReceiver(channel, reader, job.channelBytes(), timeout);
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
            ProgressBar bar = progress == null ? null : new ProgressBar(progress, terminal, lines);
            if (bar != null) {
                progress.println();
            }
            Duration tick = Duration.ofMillis(terminal ? 200 : 500);
            while (!awaitAll(specs, results, tick)) {
                if (bar != null) {
                    bar.update();
                }
                if (!sluice.isGenerationRunning()) {
                    throw new IllegalStateException(
                            "the generation pipeline stopped; see the Flink log");
                }
            }
            if (bar != null) {
                bar.finish();
                progress.println();
            }

            List<Job> done = new ArrayList<>();
            for (int i = 0; i < specs.size(); i++) {
                JobSpec spec = specs.get(i);
                JobStatus status =
                        sluice.jobs().awaitStatus(spec.id(), s -> s.state().isTerminal(), timeout);
                Map<Channel, ChannelReceiver.Result> received = new EnumMap<>(Channel.class);
                for (Future<ChannelReceiver.Result> future : results.get(i)) {
                    ChannelReceiver.Result result = result(spec, future);
                    received.put(result.channel(), result);
                }
                done.add(new Job(jobs.get(i), spec, status, received));
            }
            return new Result(submitted, done);
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * Waits up to {@code tick} for the streams to end and says whether all have: the wait returns
     * as soon as the last one ends, not at the next tick. A stream that failed ends the wait within
     * a tick rather than after the others' timeouts.
     */
    private static boolean awaitAll(
            List<JobSpec> specs, List<List<Future<ChannelReceiver.Result>>> results, Duration tick)
            throws InterruptedException {
        long deadline = System.nanoTime() + tick.toNanos();
        for (int i = 0; i < specs.size(); i++) {
            for (Future<ChannelReceiver.Result> future : results.get(i)) {
                if (!future.isDone()) {
                    long left = deadline - System.nanoTime();
                    try {
                        future.get(Math.max(0, left), TimeUnit.NANOSECONDS);
                    } catch (TimeoutException e) {
                        return false;
                    } catch (ExecutionException e) {
                        // Thrown below, with the job's id.
                    }
                }
                result(specs.get(i), future);
            }
        }
        return true;
    }

    private static StreamReader opened(JobSpec spec, Future<StreamReader> opening)
            throws InterruptedException {
        try {
            return opening.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(
                    "job "
                            + spec.id()
                            + ": a stream reader did not open: "
                            + e.getCause().getMessage(),
                    e.getCause());
        }
    }

    private static ChannelReceiver.Result result(
            JobSpec spec, Future<ChannelReceiver.Result> future) throws InterruptedException {
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(
                    "job " + spec.id() + ", stream " + e.getCause().getMessage(), e.getCause());
        }
    }
}
