package dev.sluice.flink.generation.scheduler;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.job.Transport;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.StreamDeliveryState;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.SchedulingPolicy;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.apache.flink.annotation.Internal;

/**
 * A job as the scheduler keeps it: its state, the next task of each stream (tasks are made when
 * handed out), the tasks given back by a lost producer (handed out first), how far its readers got,
 * and the tasks each producer holds that its stream's readers have not been delivered yet: a
 * producer gets a new task of a stream only while it holds fewer than {@code tasksAheadPerStream}
 * of them (docs/generation.md, "Room admission").
 *
 * <p>Each stream has a transport, its job's combined with its output location's
 * (docs/generation.md, "Transports"): the tasks of a {@code LOCAL} stream go only to producers on
 * the stream's host, and each task's way is decided when it goes out. When a reader's daemon
 * subscription was renewed, the chunks that reached the daemon only through shared memory may be
 * lost, so the tasks of a stream that may go the local way that were handed out and are not
 * delivered go out again (docs/generation.md, "Recovery").
 */
@Internal
public final class ScheduledJob {
    final JobSpec spec;
    JobState state;
    long sinceMillis;
    final Map<String, Integer> nextTask = new HashMap<>();
    final Deque<ComputeTaskSplit> returned = new ArrayDeque<>();
    final Set<String> ready = new HashSet<>();
    // Per stream and reader, when it was last heard of.
    final Map<String, Map<Integer, Long>> heard = new HashMap<>();
    // Per stream, how far its readers got.
    private final Map<String, StreamDeliveryState> delivery = new HashMap<>();
    // Per stream, its tasks handed out and not delivered yet, by task index.
    private final Map<String, NavigableMap<Integer, HeldTask>> undelivered = new HashMap<>();
    // Per stream, when its delivered seq last grew: from there its readers go on at its rate.
    private final Map<String, Long> advancedMillis = new HashMap<>();
    // Tasks of which a duplicate went out: the bytes their losing copies emitted are wasted.
    private final Set<String> duplicated = new HashSet<>();
    private final int tasksAheadPerStream;
    private final UnaryOperator<String> hosts;
    private final Function<String, Transport> locationTransports;
    // Tasks handed out, and those that went to a producer on the host of their stream's output
    // location: a job's locality, reported in its COMPLETED status. The checkpoint keeps them, so
    // that a restored scheduler goes on counting (docs/generation.md, "Failover").
    int tasksHandedOut;
    int tasksHandedOutLocally;
    // Speculative duplicates (docs/generation.md, "Speculative duplicates"): handed out, those
    // whose copy was done first, and the bytes the losing copies emitted.
    int duplicatesIssued;
    int duplicatesWon;
    long bytesWasted;

    /**
     * A task handed out whose last chunk is not delivered: the producers it was handed to (each
     * holds it in its window until it is delivered), those still computing it, the first to be done
     * with it, and whether a duplicate of it waits to go out.
     */
    static final class HeldTask {
        final ComputeTask task;
        final Set<Integer> holders = new LinkedHashSet<>();
        final Set<Integer> computing = new LinkedHashSet<>();
        int original = -1;
        int winner = -1;
        boolean duplicatePending;

        HeldTask(ComputeTask task) {
            this.task = task;
        }

        boolean done() {
            return winner >= 0;
        }
    }

    ScheduledJob(
            JobSpec spec,
            JobState state,
            long sinceMillis,
            int tasksAheadPerStream,
            UnaryOperator<String> hosts,
            Function<String, Transport> locationTransports) {
        this.spec = spec;
        this.state = state;
        this.sinceMillis = sinceMillis;
        this.tasksAheadPerStream = tasksAheadPerStream;
        this.hosts = hosts;
        this.locationTransports = locationTransports;
        spec.streams().forEach(stream -> nextTask.put(stream.name(), 0));
    }

    /**
     * The job as a policy sees it when {@code producer}, on {@code producerHost}, asks for work; a
     * paced stream only if {@code pacedFits} takes it (docs/generation.md, "Producers of unequal
     * speed").
     */
    SchedulingPolicy.SchedulableJob forProducer(
            int producer, String producerHost, Predicate<String> pacedFits) {
        return new ProducerView(producer, producerHost, pacedFits);
    }

    /**
     * The stream's transport: its job's combined with its output location's, {@code KAFKA} winning,
     * then {@code LOCAL} (docs/generation.md, "Transports").
     */
    Transport transportOf(String stream) {
        String outputLocation = spec.stream(stream).orElseThrow().outputLocation();
        return Transport.combine(spec.transport(), locationTransports.apply(outputLocation));
    }

    /** Whether a task of {@code stream} may go to a producer on {@code producerHost}. */
    boolean mayGoTo(String stream, String producerHost) {
        return transportOf(stream) != Transport.LOCAL || hostOf(stream).equals(producerHost);
    }

    /**
     * How a task of {@code stream} handed to a producer on {@code producerHost} sends its chunks:
     * an {@code AUTO} stream's the local way when the producer is on the stream's host.
     */
    Transport transportFor(String stream, String producerHost) {
        Transport transport = transportOf(stream);
        if (transport != Transport.AUTO) {
            return transport;
        }
        return hostOf(stream).equals(producerHost) ? Transport.LOCAL : Transport.KAFKA;
    }

    /**
     * The first task given back that may go to a producer on {@code producerHost} that holds the
     * tasks {@code held}, taken out of {@code returned}; null if none. A {@code LOCAL} stream's
     * stays for a producer on its host; a task put back while its producer still computes it stays
     * for another producer or until that one finishes it, since a Flink source reader holds each
     * split id once. A task delivered meanwhile (its first producer's chunks, or those the daemon
     * fetched again from Kafka, reached the readers) is done and leaves {@code returned}; so does a
     * duplicate whose task a copy was done with. A duplicate goes only to a producer that {@code
     * mayTakeDuplicate}.
     */
    ComputeTaskSplit takeReturned(String producerHost, Set<String> held, boolean mayTakeDuplicate) {
        for (var it = returned.iterator(); it.hasNext(); ) {
            ComputeTaskSplit back = it.next();
            HeldTask copies = heldTask(back.task());
            boolean duplicate = copies != null && copies.duplicatePending;
            if (back.task().lastSeq() <= deliveredSeq(back.task().stream())
                    || (duplicate && copies.done())) {
                it.remove();
                if (duplicate) {
                    copies.duplicatePending = false;
                }
            } else if (mayGoTo(back.task().stream(), producerHost)
                    && !held.contains(back.splitId())
                    && (!duplicate || mayTakeDuplicate)) {
                it.remove();
                return back;
            }
        }
        return null;
    }

    private HeldTask heldTask(ComputeTask task) {
        return held(task.stream()).get(task.index());
    }

    private NavigableMap<Integer, HeldTask> held(String stream) {
        return undelivered.computeIfAbsent(stream, s -> new TreeMap<>());
    }

    /**
     * The stream's tasks handed out and not delivered, in task order: what speculation looks at.
     */
    Iterable<HeldTask> heldTasks(String stream) {
        return held(stream).values();
    }

    /**
     * Puts a duplicate of {@code held}'s task first in {@code returned}, for a producer that holds
     * no copy of it (docs/generation.md, "Speculative duplicates").
     */
    void duplicate(HeldTask held) {
        held.duplicatePending = true;
        duplicated.add(held.task.id());
        returned.addFirst(new ComputeTaskSplit(held.task, 0));
    }

    /** The duplicates issued and those waiting to go out: what speculation's cap counts. */
    int duplicatesCounted() {
        int pending = 0;
        for (NavigableMap<Integer, HeldTask> stream : undelivered.values()) {
            for (HeldTask held : stream.values()) {
                pending += held.duplicatePending ? 1 : 0;
            }
        }
        return duplicatesIssued + pending;
    }

    /** The tasks handed out other than duplicates, counted again when handed out again. */
    int originalsHandedOut() {
        return tasksHandedOut - duplicatesIssued;
    }

    /**
     * The tasks {@code producer} holds of which another copy was done or is being computed: what a
     * producer restored from its checkpoint need not compute again (docs/generation.md,
     * "Speculative duplicates").
     */
    List<String> copiesElsewhere(int producer) {
        List<String> elsewhere = new ArrayList<>();
        for (NavigableMap<Integer, HeldTask> stream : undelivered.values()) {
            for (HeldTask held : stream.values()) {
                boolean another =
                        held.done() || held.computing.stream().anyMatch(p -> p != producer);
                if (held.holders.contains(producer) && held.winner != producer && another) {
                    elsewhere.add(held.task.id());
                }
            }
        }
        return elsewhere;
    }

    /** When the stream's delivered seq last grew, or empty before its first chunk was delivered. */
    Optional<Long> advancedMillis(String stream) {
        return Optional.ofNullable(advancedMillis.get(stream));
    }

    /**
     * {@code producer} reported {@code done} for one of its tasks. A complete copy first of its
     * task wins; the bytes of a copy that ends after that, or is dropped, are wasted when the task
     * was duplicated. A copy dropped though none was done (its job goes on) puts the task back to
     * go out again. Returns the producers still computing a copy that lost, to be told to drop it.
     */
    Set<Integer> taskDone(int producer, JobEvents.TaskDone done) {
        // A task's id is job/stream/index, and names have no '/' (docs/formats.md, "Job spec").
        String[] parts = done.taskId().split("/");
        HeldTask held =
                parts.length == 3 && spec.stream(parts[1]).isPresent()
                        ? held(parts[1]).get(Integer.parseInt(parts[2]))
                        : null;
        boolean wasted = held == null || held.done() || done.dropped();
        if (wasted && duplicated.contains(done.taskId())) {
            bytesWasted += done.bytesEmitted();
        }
        if (held == null) {
            return Set.of();
        }
        held.computing.remove(producer);
        if (done.isComplete() && !held.done()) {
            held.winner = producer;
            if (duplicated.contains(done.taskId()) && producer != held.original) {
                duplicatesWon++;
            }
            return Set.copyOf(held.computing);
        }
        if (done.dropped()) {
            held.holders.remove(producer);
            if (!held.done() && held.computing.isEmpty() && !held.duplicatePending) {
                held(held.task.stream()).remove(held.task.index());
                returned.addFirst(new ComputeTaskSplit(held.task, 0));
            }
        }
        return Set.of();
    }

    /**
     * A reader of {@code stream} renewed its daemon subscription: the tasks of the stream made and
     * not delivered (the last chunk's seq above the stream's delivered seq), but for those given
     * back already, go back into {@code returned}, in task order, to go out again first; unless the
     * stream's transport is {@code KAFKA}, whose chunks the daemon fetches again from the log.
     * Tasks of an {@code AUTO} stream that went through Kafka are among them, since which way each
     * task went is not kept: a duplicate costs time, its readers drop it by seq
     * (docs/generation.md, "Recovery"). Returns the ids of the tasks put back.
     */
    List<String> requeueUndelivered(String stream) {
        if (spec.stream(stream).isEmpty() || transportOf(stream) == Transport.KAFKA) {
            return List.of();
        }
        StreamSpec streamSpec = spec.stream(stream).orElseThrow();
        Set<String> waiting = new HashSet<>();
        returned.forEach(back -> waiting.add(back.splitId()));
        long delivered = deliveredSeq(stream);
        List<String> requeued = new ArrayList<>();
        for (int index = 0; index < nextTask.get(stream); index++) {
            ComputeTask task = ComputeTask.of(spec, streamSpec, index);
            if (task.lastSeq() > delivered && !waiting.contains(task.id())) {
                returned.addLast(new ComputeTaskSplit(task, 0));
                requeued.add(task.id());
            }
        }
        // They are no producer's any more: each holds the window of the producer it goes to next.
        held(stream).values().removeIf(held -> requeued.contains(held.task.id()));
        return requeued;
    }

    private boolean hasTasksLeft(StreamSpec stream) {
        return nextTask.get(stream.name()) < ComputeTask.count(spec, stream);
    }

    /** Whether {@code producer} holds fewer than tasksAheadPerStream undelivered tasks of it. */
    private boolean hasRoom(String stream, int producer) {
        long held =
                held(stream).values().stream()
                        .filter(task -> task.holders.contains(producer))
                        .count();
        return held < tasksAheadPerStream;
    }

    /**
     * The bytes of the stream's tasks handed out, to any producer, and not delivered yet; a task
     * handed out twice (a duplicate) counts once.
     */
    long bufferedBytes(String stream) {
        return held(stream).values().stream().mapToLong(held -> held.task.length()).sum();
    }

    /**
     * The bytes per millisecond its paced streams with tasks left to make are read at: what the
     * producers must keep generating for them.
     */
    double pacedReadRate() {
        return spec.streams().stream()
                .filter(stream -> stream.rateBytesPerSecond().isPresent() && hasTasksLeft(stream))
                .mapToDouble(stream -> stream.rateBytesPerSecond().getAsLong() / 1000.0)
                .sum();
    }

    /** Whether a task is left to hand out: one given back, or one not made yet. */
    boolean hasWork() {
        return !returned.isEmpty() || spec.streams().stream().anyMatch(this::hasTasksLeft);
    }

    /**
     * Counts {@code task} handed out to {@code producer} on {@code producerHost}: for the job's
     * locality, and in the producer's window of the stream until its readers are delivered it.
     */
    void handedOut(ComputeTask task, int producer, String producerHost) {
        tasksHandedOut++;
        if (hostOf(task.stream()).equals(producerHost)) {
            tasksHandedOutLocally++;
        }
        if (task.lastSeq() <= deliveredSeq(task.stream())) {
            return;
        }
        HeldTask copies = heldTask(task);
        if (copies == null) {
            copies = new HeldTask(task);
            copies.original = producer;
            held(task.stream()).put(task.index(), copies);
        } else if (copies.duplicatePending) {
            copies.duplicatePending = false;
            duplicatesIssued++;
        }
        copies.holders.add(producer);
        copies.computing.add(producer);
    }

    /** A lost producer gave {@code task} back: it no longer holds it. */
    void givenBack(ComputeTask task, int producer) {
        HeldTask copies = heldTask(task);
        if (copies != null) {
            copies.holders.remove(producer);
            copies.computing.remove(producer);
            if (copies.holders.isEmpty()) {
                held(task.stream()).remove(task.index());
            }
        }
    }

    /** The stream's delivered seq: the smallest of its readers', -1 before any. */
    long deliveredSeq(String stream) {
        StreamDeliveryState state = delivery.get(stream);
        return state == null ? -1 : state.deliveredSeq();
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

    /**
     * The COMPLETED status's reason: the job's locality, then, when it had any, its duplicates ("2
     * duplicates issued, 1 won, 524288 bytes wasted"); null when there is neither.
     */
    String completion() {
        String locality = locality();
        if (duplicatesIssued == 0 && bytesWasted == 0) {
            return locality;
        }
        String duplicates =
                duplicatesIssued
                        + " duplicates issued, "
                        + duplicatesWon
                        + " won, "
                        + bytesWasted
                        + " bytes wasted";
        return locality == null ? duplicates : locality + "; " + duplicates;
    }

    String hostOf(String stream) {
        return hosts.apply(spec.stream(stream).orElseThrow().outputLocation());
    }

    /** Makes the next task of {@code stream}. */
    private ComputeTask take(String stream) {
        StreamSpec streamSpec = spec.stream(stream).orElseThrow();
        int index = nextTask.merge(stream, 1, Integer::sum) - 1;
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
        StreamDeliveryState state =
                delivery.computeIfAbsent(stream, s -> new StreamDeliveryState());
        if (state.update(progress)) {
            advancedMillis.put(stream, now);
            held(stream).values().removeIf(held -> held.task.lastSeq() <= state.deliveredSeq());
        }
        return spec.streams().stream()
                .allMatch(s -> delivery.containsKey(s.name()) && delivery.get(s.name()).allEnded());
    }

    /**
     * A reader not yet at its stream's end and silent for {@code timeoutMillis} (readers send their
     * progress every second even when it does not change): "c0 reader 0 at node-0", or null.
     */
    String silentReader(long now, long timeoutMillis) {
        for (var stream : heard.entrySet()) {
            for (var reader : stream.getValue().entrySet()) {
                boolean done = delivery.get(stream.getKey()).hasEnded(reader.getKey());
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
            long lastSeq = last.lastSeq();
            StreamDeliveryState state = delivery.get(stream.name());
            int count = state == null ? 1 : Math.max(1, state.readerCount());
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

    /**
     * The job for one producer: the streams with a task that may go to it now, and those streams'
     * tasks (SchedulingPolicy.SchedulableJob).
     */
    private final class ProducerView implements SchedulingPolicy.SchedulableJob {
        private final int producer;
        private final String producerHost;
        private final Predicate<String> pacedFits;

        ProducerView(int producer, String producerHost, Predicate<String> pacedFits) {
            this.producer = producer;
            this.producerHost = producerHost;
            this.pacedFits = pacedFits;
        }

        @Override
        public JobSpec spec() {
            return spec;
        }

        @Override
        public List<String> streamsWithWork() {
            List<String> streams = new ArrayList<>();
            for (StreamSpec stream : spec.streams()) {
                if (hasTasksLeft(stream)
                        && hasRoom(stream.name(), producer)
                        && mayGoTo(stream.name(), producerHost)
                        && (stream.rateBytesPerSecond().isEmpty()
                                || pacedFits.test(stream.name()))) {
                    streams.add(stream.name());
                }
            }
            return streams;
        }

        @Override
        public long bufferedBytes(String stream) {
            return ScheduledJob.this.bufferedBytes(stream);
        }

        @Override
        public String hostOf(String stream) {
            return ScheduledJob.this.hostOf(stream);
        }

        @Override
        public ComputeTask take(String stream) {
            if (!streamsWithWork().contains(stream)) {
                throw new IllegalStateException(
                        stream
                                + " of "
                                + spec.id()
                                + " has no task that may go to producer "
                                + producer
                                + " now: none left, "
                                + tasksAheadPerStream
                                + " of its tasks there are not delivered yet, the stream's"
                                + " transport is LOCAL and the producer is not on its host,"
                                + " or the stream is paced and the producer too slow for it");
            }
            return ScheduledJob.this.take(stream);
        }
    }
}
