package dev.sluice.flink.generation.scheduler;

import dev.sluice.client.job.BufferModel;
import dev.sluice.flink.generation.ComputeTask;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Collectors;

/**
 * When a paced stream's task gets a duplicate, and which producers a paced task may go to
 * (docs/generation.md, "Producers of unequal speed" and "Speculative duplicates"), from the
 * producers' speeds ({@link ProducerModel}) and how far each stream's readers got.
 *
 * <ul>
 *   <li>A producer whose task at hand has run for more than {@link BufferModel#SLOW_FACTOR} times
 *       its expected time is <i>slow</i>: every paced task it computes gets a duplicate, without
 *       waiting for Flink to declare it lost, and it gets no paced task until it is done with that
 *       one.
 *   <li>A paced stream's task gets a duplicate when the producers computing it are expected to be
 *       done later than its readers need its first byte (less {@link BufferModel#GUARD_MILLIS}),
 *       another producer is expected to be done with a duplicate sooner by more than the guard
 *       (after the tasks it holds: a duplicate goes behind them), and the readers need the task
 *       before that producer could compute it once more: while there is more time than that, the
 *       first copy may still come in time, and a duplicate costs a task of compute. Only while the
 *       producers have spare capacity: while the producers that are not slow generate more than the
 *       running jobs' paced streams read. Beyond that every producer is busy, a duplicate delays
 *       the tasks after it by as much as it saves, and duplicates of late tasks make more tasks
 *       late.
 *   <li>A producer takes a paced stream's task when the stream's undelivered tasks last its readers
 *       longer than the task takes it, or when no other producer is expected to be done with the
 *       task sooner by more than the guard, after the tasks that one holds.
 * </ul>
 *
 * <p>A job is issued at most {@link #CAP_MIN} duplicates plus {@link #CAP} of the other tasks it
 * handed out: whatever misjudges a producer as slow or a task as late (a producer blocked on a
 * stalled delivery path looks slow, and the rates measured are of compute, not of delivery),
 * speculation spends at most about a tenth of the job; at least 2, so that a producer stalled early
 * has both tasks it computes duplicated.
 *
 * <p>Logic without I/O: the scheduler's thread calls it with its clock's milliseconds.
 */
final class Speculation {
    // The bounds the readers' start delay is made for (docs/generation.md, "Buffer model").
    private static final double SLOW_FACTOR = BufferModel.SLOW_FACTOR;
    private static final long GUARD_MILLIS = BufferModel.GUARD_MILLIS;

    /** The share of a job's tasks that may be duplicated, past {@link #CAP_MIN}. */
    static final double CAP = 0.1;

    /** The duplicates a job may be issued whatever its size: a producer's two tasks in flight. */
    static final int CAP_MIN = 2;

    private final ProducerModel producers;

    Speculation(ProducerModel producers) {
        this.producers = producers;
    }

    /** Whether {@code producer} is slow now: its task at hand overran. */
    boolean isSlow(int producer, long now) {
        return producers.overran(producer, SLOW_FACTOR, now);
    }

    /**
     * Whether {@code producer} may take a duplicate: it is not slow, and not twice as slow as the
     * fastest of {@code live}.
     */
    boolean mayTakeDuplicate(int producer, Iterable<Integer> live, long now) {
        return !isSlow(producer, now) && !muchSlower(producer, live);
    }

    private boolean muchSlower(int producer, Iterable<Integer> live) {
        double rate = producers.rate(producer);
        return rate > 0 && rate * 2 < producers.fastestRate(live);
    }

    /**
     * Whether {@code producer} may take the next task ({@code taskBytes}) of a paced stream whose
     * undelivered tasks last its readers {@code bufferedMillis}: it is not slow, and the task is in
     * time from it or would not be sooner from another of {@code live}.
     */
    boolean mayTakePaced(
            int producer, long taskBytes, double bufferedMillis, Iterable<Integer> live, long now) {
        if (isSlow(producer, now)) {
            return false;
        }
        OptionalLong own = producers.expectedMillis(producer, taskBytes);
        if (own.isEmpty() || own.getAsLong() <= bufferedMillis) {
            return true;
        }
        // Late from this producer: it waits for another only if that one, after the tasks it
        // holds, is expected to be done with it sooner by more than the guard.
        long ownDone = now + own.getAsLong();
        for (int other : live) {
            OptionalLong idle = producers.expectedIdle(other, now);
            OptionalLong millis = producers.expectedMillis(other, taskBytes);
            if (other != producer
                    && !isSlow(other, now)
                    && idle.isPresent()
                    && millis.isPresent()
                    && idle.getAsLong() + millis.getAsLong() + GUARD_MILLIS < ownDone) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether the producers of {@code live} that are not slow generate more, at their measured
     * rates, than {@code readBytesPerMilli}, what the running jobs' paced streams read.
     */
    boolean hasSpareCapacity(double readBytesPerMilli, Iterable<Integer> live, long now) {
        double capacity = 0;
        for (int producer : live) {
            if (!isSlow(producer, now)) {
                capacity += producers.rate(producer);
            }
        }
        return capacity > readBytesPerMilli;
    }

    /** A task to duplicate, and why: its producers are slow, or it is late for its readers. */
    record Late(ScheduledJob.HeldTask held, String why) {}

    /**
     * The tasks of a paced stream of {@code job} to duplicate now: {@code stream} read at {@code
     * rateBytesPerSecond}; {@code hosts}, the live producers and their hosts; late tasks only with
     * {@code spareCapacity} ({@link #hasSpareCapacity}).
     */
    List<Late> toDuplicate(
            ScheduledJob job,
            String stream,
            long rateBytesPerSecond,
            Map<Integer, String> hosts,
            boolean spareCapacity,
            long now) {
        List<Late> late = new ArrayList<>();
        double bytesPerMilli = rateBytesPerSecond / 1000.0;
        int chunk = job.spec.stream(stream).orElseThrow().chunkSizeBytes();
        int cap = CAP_MIN + (int) (CAP * job.originalsHandedOut());
        int counted = job.duplicatesCounted();
        for (ScheduledJob.HeldTask held : job.heldTasks(stream)) {
            if (counted + late.size() >= cap) {
                break;
            }
            if (held.done() || held.duplicatePending || held.computing.isEmpty()) {
                continue;
            }
            ComputeTask task = held.task;
            List<Integer> others = new ArrayList<>();
            for (var producer : hosts.entrySet()) {
                if (!held.holders.contains(producer.getKey())
                        && job.mayGoTo(stream, producer.getValue())
                        && mayTakeDuplicate(producer.getKey(), hosts.keySet(), now)) {
                    others.add(producer.getKey());
                }
            }
            if (others.isEmpty()) {
                continue;
            }
            if (held.computing.stream().allMatch(p -> isSlow(p, now))) {
                late.add(
                        new Late(
                                held,
                                "its producers are slow: "
                                        + held.computing.stream()
                                                .map(p -> producers.headTiming(p, now))
                                                .collect(Collectors.joining("; "))));
            } else if (spareCapacity) {
                String why = lateForItsReaders(job, held, others, bytesPerMilli, chunk, now);
                if (why != null) {
                    late.add(new Late(held, why));
                }
            }
        }
        return late;
    }

    /** Why the task is late for its readers, or null if it is not. */
    private String lateForItsReaders(
            ScheduledJob job,
            ScheduledJob.HeldTask held,
            List<Integer> others,
            double bytesPerMilli,
            int chunk,
            long now) {
        var advanced = job.advancedMillis(held.task.stream());
        if (advanced.isEmpty()) {
            // Its readers started on nothing yet: they cannot starve, only wait longer to start.
            return null;
        }
        long chunksAhead = held.task.firstSeq() - job.deliveredSeq(held.task.stream()) - 1;
        double neededAt = advanced.get() + Math.max(0, chunksAhead) * chunk / bytesPerMilli;
        OptionalLong holdersDone = earliest(held, now);
        Duplicate duplicate = soonest(others, held.task.length(), now);
        if (holdersDone.isEmpty() || duplicate == null) {
            return null;
        }
        boolean late =
                holdersDone.getAsLong() > neededAt - GUARD_MILLIS
                        && duplicate.doneAt() + GUARD_MILLIS < holdersDone.getAsLong()
                        && neededAt < duplicate.doneAt() + duplicate.millis() + GUARD_MILLIS;
        return late
                ? String.format(
                        "its readers need it in %d ms, its producers are done in %d ms, a"
                                + " duplicate in %d ms",
                        Math.round(neededAt - now),
                        holdersDone.getAsLong() - now,
                        duplicate.doneAt() - now)
                : null;
    }

    private OptionalLong earliest(ScheduledJob.HeldTask held, long now) {
        OptionalLong earliest = OptionalLong.empty();
        for (int producer : held.computing) {
            OptionalLong done = producers.expectedDone(producer, held.task.id(), now);
            if (done.isEmpty()) {
                return OptionalLong.empty();
            }
            if (earliest.isEmpty() || done.getAsLong() < earliest.getAsLong()) {
                earliest = done;
            }
        }
        return earliest;
    }

    /** A duplicate on some producer: when it is expected to be done, and what it takes there. */
    private record Duplicate(long doneAt, long millis) {}

    /**
     * The soonest duplicate of a task of {@code bytes} among {@code others}: after the tasks each
     * holds, then the duplicate; null while none of their rates is known.
     */
    private Duplicate soonest(List<Integer> others, long bytes, long now) {
        Duplicate soonest = null;
        for (int producer : others) {
            OptionalLong idle = producers.expectedIdle(producer, now);
            OptionalLong millis = producers.expectedMillis(producer, bytes);
            if (idle.isPresent() && millis.isPresent()) {
                long doneAt = idle.getAsLong() + millis.getAsLong();
                if (soonest == null || doneAt < soonest.doneAt()) {
                    soonest = new Duplicate(doneAt, millis.getAsLong());
                }
            }
        }
        return soonest;
    }
}
