package dev.sluice.flink.generation.scheduler;

import dev.sluice.client.job.StreamSpec;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.SchedulingPolicy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.annotation.Internal;

/**
 * The default policy (docs/generation.md, "Scheduling policy"): tasks are created as producers ask
 * for them (docs/generation.md, "The scheduler"), and the scheduler offers only streams with room
 * in the asking producer's window, so what a stream takes is bounded by its readers' pace.
 *
 * <ol>
 *   <li><b>Paced streams first</b> (those with a {@code rateBytesPerSecond}): the most urgent one,
 *       the one whose readers' buffer lasts the shortest ({@code bufferedBytes / rate}), unless a
 *       stream on the producer's host lasts less than one of the producer's tasks longer (ties
 *       too). A paced stream must keep its speed whatever else runs.
 *   <li><b>Then the other streams by weighted fair share</b>: stride scheduling over jobs, a job's
 *       pass growing by the bytes it was handed divided by its {@code weight}, the job of the
 *       smallest pass served. A job that joins (or comes back after having nothing that could go
 *       out) starts at the current pass, so that it neither floods the others nor waits behind
 *       them. Within the job, a stream on the producer's host first, else its streams take turns.
 * </ol>
 */
@Internal
public final class OnDemandPolicy implements SchedulingPolicy {
    private static final long serialVersionUID = 1L;

    // Stride scheduling: each job's pass, and the pass of the job served last (the current one).
    private final Map<String, Double> passes = new HashMap<>();
    private double currentPass;
    private int streamTurn;

    @Override
    public Optional<ComputeTask> next(Producer producer, List<SchedulableJob> jobs) {
        Optional<ComputeTask> paced = mostUrgentPaced(producer, jobs);
        return paced.isPresent() ? paced : fairShare(producer, jobs);
    }

    private static boolean isPaced(SchedulableJob job, String stream) {
        return rateOf(job, stream) > 0;
    }

    private static long rateOf(SchedulableJob job, String stream) {
        StreamSpec spec = job.spec().stream(stream).orElseThrow();
        return spec.rateBytesPerSecond().orElse(0);
    }

    /** A paced stream with room, and how long its readers' buffer lasts. */
    private record Urgency(SchedulableJob job, String stream, double seconds) {}

    /**
     * The most urgent paced stream, unless a stream on the producer's host is nearly as urgent: its
     * buffer lasts longer by less than the producer needs to compute one of its tasks. Giving it
     * the local one then costs the most urgent stream at most that much buffer, which the next
     * producer to ask (one on that stream's host among them) makes up; and its chunks cross the
     * network once rather than twice (docs/generation.md, "Scheduling policy").
     */
    private static Optional<ComputeTask> mostUrgentPaced(
            Producer producer, List<SchedulableJob> jobs) {
        Urgency urgent = null;
        Urgency local = null;
        for (SchedulableJob job : jobs) {
            for (String stream : job.streamsWithWork()) {
                if (!isPaced(job, stream)) {
                    continue;
                }
                Urgency candidate =
                        new Urgency(
                                job,
                                stream,
                                (double) job.bufferedBytes(stream) / rateOf(job, stream));
                if (urgent == null || candidate.seconds() < urgent.seconds()) {
                    urgent = candidate;
                }
                if (job.hostOf(stream).equals(producer.host())
                        && (local == null || candidate.seconds() < local.seconds())) {
                    local = candidate;
                }
            }
        }
        if (urgent == null) {
            return Optional.empty();
        }
        Urgency chosen = urgent;
        if (local != null) {
            double slackSeconds =
                    producer.expectedMillis(local.job().spec().taskSizeBytes()).orElse(0) / 1000;
            if (local.seconds() - urgent.seconds() <= slackSeconds) {
                chosen = local;
            }
        }
        return Optional.of(chosen.job().take(chosen.stream()));
    }

    private Optional<ComputeTask> fairShare(Producer producer, List<SchedulableJob> jobs) {
        SchedulableJob chosen = null;
        List<String> chosenStreams = List.of();
        double chosenPass = Double.MAX_VALUE;
        for (SchedulableJob job : jobs) {
            List<String> streams =
                    job.streamsWithWork().stream().filter(s -> !isPaced(job, s)).toList();
            if (streams.isEmpty()) {
                continue;
            }
            // A job behind the current pass had nothing to take for a while: it starts again at
            // the current pass rather than taking everything until it caught up.
            double pass = Math.max(passes.getOrDefault(job.spec().id(), 0.0), currentPass);
            if (pass < chosenPass) {
                chosen = job;
                chosenStreams = streams;
                chosenPass = pass;
            }
        }
        if (chosen == null) {
            return Optional.empty();
        }
        String id = chosen.spec().id();
        ComputeTask task = chosen.take(streamFor(producer, chosen, chosenStreams));
        currentPass = chosenPass;
        passes.put(id, chosenPass + (double) task.length() / chosen.spec().weight());
        // A pass at or below the current one says nothing more than the current pass does: drop
        // it, so that jobs gone do not stay.
        passes.values().removeIf(pass -> pass <= currentPass);
        return Optional.of(task);
    }

    /** A stream on the producer's host, else the one whose turn it is. */
    private String streamFor(Producer producer, SchedulableJob job, List<String> streams) {
        for (String stream : streams) {
            if (job.hostOf(stream).equals(producer.host())) {
                return stream;
            }
        }
        return streams.get(Math.floorMod(streamTurn++, streams.size()));
    }
}
