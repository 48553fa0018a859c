package dev.sluice.flink.generation.scheduler;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.stream.DeliveryProgress;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.SchedulingPolicy;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.apache.flink.annotation.Internal;

/**
 * A job as the scheduler keeps it: its state, the next task of each stream (tasks are made when
 * handed out), the tasks given back by a lost producer (handed out first), and what its readers
 * reported.
 */
@Internal
public final class ScheduledJob implements SchedulingPolicy.SchedulableJob {
    final JobSpec spec;
    JobState state;
    long sinceMillis;
    final Map<String, Integer> nextTask = new HashMap<>();
    final Deque<ComputeTaskSplit> returned = new ArrayDeque<>();
    final Set<String> ready = new HashSet<>();
    // Per stream and reader, when it was last heard of.
    final Map<String, Map<Integer, Long>> heard = new HashMap<>();
    // Per stream, how many readers share it, and those that reached its end.
    final Map<String, Integer> readers = new HashMap<>();
    final Map<String, Set<Integer>> ended = new HashMap<>();
    private final UnaryOperator<String> hosts;
    // Tasks handed out, and those that went to a producer on the host of their stream's output
    // location: a job's locality, reported in its COMPLETED status. The checkpoint keeps them, so
    // that a restored scheduler goes on counting (docs/generation.md, "Failover").
    int tasksHandedOut;
    int tasksHandedOutLocally;

    ScheduledJob(JobSpec spec, JobState state, long sinceMillis, UnaryOperator<String> hosts) {
        this.spec = spec;
        this.state = state;
        this.sinceMillis = sinceMillis;
        this.hosts = hosts;
        spec.streams().forEach(stream -> nextTask.put(stream.name(), 0));
    }

    @Override
    public JobSpec spec() {
        return spec;
    }

    @Override
    public List<String> streamsWithWork() {
        List<String> streams = new ArrayList<>();
        for (StreamSpec stream : spec.streams()) {
            if (nextTask.get(stream.name()) < ComputeTask.count(spec, stream)) {
                streams.add(stream.name());
            }
        }
        return streams;
    }

    boolean hasWork() {
        return !returned.isEmpty() || !streamsWithWork().isEmpty();
    }

    /** Counts a task of {@code stream} handed out to a producer on {@code producerHost}. */
    void handedOut(String stream, String producerHost) {
        tasksHandedOut++;
        if (hostOf(stream).equals(producerHost)) {
            tasksHandedOutLocally++;
        }
    }

    /**
     * How many of its tasks went to producers on their streams' hosts, or null when that is not
     * known: no task counted at all, or fewer counted than made (every task made is counted as it
     * is handed out, so the job was restored from a version-1 state, which did not keep the counts:
     * docs/generation.md, "State formats"). "0 of 0", or "3 of 3" for a job of 8 tasks, would be
     * false.
     */
    String locality() {
        int made = nextTask.values().stream().mapToInt(Integer::intValue).sum();
        if (tasksHandedOut == 0 || tasksHandedOut < made) {
            return null;
        }
        return tasksHandedOutLocally
                + " of "
                + tasksHandedOut
                + " tasks computed on their output location's host";
    }

    @Override
    public String hostOf(String stream) {
        return hosts.apply(spec.stream(stream).orElseThrow().outputLocation());
    }

    @Override
    public ComputeTask take(String stream) {
        StreamSpec streamSpec = spec.stream(stream).orElseThrow();
        int index = nextTask.merge(stream, 1, Integer::sum) - 1;
        if (index >= ComputeTask.count(spec, streamSpec)) {
            throw new IllegalStateException(stream + " of " + spec.id() + " has no task left");
        }
        return ComputeTask.of(spec, streamSpec, index);
    }

    /**
     * A reader's progress at {@code now}; true when every reader of every stream reached its end.
     */
    boolean progress(DeliveryProgress progress, long now) {
        String stream = progress.stream();
        if (spec.stream(stream).isEmpty()) {
            return false;
        }
        ready.add(stream);
        heard.computeIfAbsent(stream, s -> new HashMap<>()).put(progress.readerIndex(), now);
        readers.put(stream, progress.readerCount());
        if (progress.endOfStream()) {
            ended.computeIfAbsent(stream, s -> new HashSet<>()).add(progress.readerIndex());
        }
        return spec.streams().stream()
                .allMatch(
                        s ->
                                ended.getOrDefault(s.name(), Set.of()).size()
                                        >= readers.getOrDefault(s.name(), Integer.MAX_VALUE));
    }

    /**
     * A reader not yet at its stream's end and silent for {@code timeoutMillis} (readers send their
     * progress every second even when it does not change): "c0 reader 0 at node-0", or null.
     */
    String silentReader(long now, long timeoutMillis) {
        for (var stream : heard.entrySet()) {
            for (var reader : stream.getValue().entrySet()) {
                boolean done =
                        ended.getOrDefault(stream.getKey(), Set.of()).contains(reader.getKey());
                if (!done && now - reader.getValue() > timeoutMillis) {
                    return stream.getKey()
                            + " reader "
                            + reader.getKey()
                            + " at "
                            + spec.stream(stream.getKey()).orElseThrow().outputLocation();
                }
            }
        }
        return null;
    }

    /**
     * An end-of-stream progress record for every reader of every stream: the stream's last seq and
     * all its bytes delivered, as if its readers had read it (what releasing a job publishes).
     */
    List<DeliveryProgress> ends() {
        List<DeliveryProgress> ends = new ArrayList<>();
        for (StreamSpec stream : spec.streams()) {
            ComputeTask last = ComputeTask.of(spec, stream, ComputeTask.count(spec, stream) - 1);
            long lastSeq = last.firstSeq() + last.chunkCount() - 1;
            int count = readers.getOrDefault(stream.name(), 1);
            for (int reader = 0; reader < count; reader++) {
                ends.add(
                        new DeliveryProgress(
                                spec.id(),
                                stream.name(),
                                reader,
                                count,
                                lastSeq,
                                reader == 0 ? stream.sizeBytes() : 0,
                                true));
            }
        }
        return ends;
    }

    boolean allStreamsReady() {
        return spec.streams().stream().allMatch(s -> ready.contains(s.name()));
    }
}
