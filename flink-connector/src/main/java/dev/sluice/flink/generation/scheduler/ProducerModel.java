package dev.sluice.flink.generation.scheduler;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * What the scheduler knows of each producer's speed (docs/generation.md, "Producers of unequal
 * speed"): the speed factor it announced, its delivered rate measured task by task, and the tasks
 * it holds in the order it computes them, from which the time each of them is expected to be done
 * follows.
 *
 * <p>A producer computes its tasks one after the other in the order they were handed to it, so the
 * task at the head of its queue started when it was handed out or when the one before it was done,
 * whichever came later. A task that takes longer than expected is assumed to need as long again as
 * it overran: the estimate of a stalled producer grows with its stall, and one that runs late by a
 * little is not given up on at once.
 *
 * <p>A producer's first task of a job also makes and preloads the job's generator, which may take
 * longer than the task itself (the RIP reads the job's image). That time is not the producer's
 * rate: each task reports how long it waited for the preload, and the first task of a job on a
 * producer is expected to take the longest preload reported for the job so far on top of its
 * computation, or is not judged at all while none was.
 *
 * <p>Logic without I/O: the scheduler's thread calls it with its clock's milliseconds.
 */
final class ProducerModel {
    /** The weight of a task's measured rate in the producer's moving average. */
    static final double RATE_WEIGHT = 0.3;

    private final Map<Integer, Producer> producers = new HashMap<>();
    // The longest preload of each live job a producer reported.
    private final Map<String, Long> longestPreloadMillis = new HashMap<>();

    /** A task in a producer's queue: its job and id, its bytes, when it was handed out. */
    private record Held(String jobId, String taskId, long bytes, long handedOutMillis) {}

    private static final class Producer {
        double speedFactor = 1.0;
        // Bytes per millisecond, 0 until a task was measured.
        double measuredRate;
        long lastDoneMillis = Long.MIN_VALUE;
        final Deque<Held> queue = new ArrayDeque<>();
        // The jobs whose generator it has made and preloaded.
        final Set<String> preloaded = new HashSet<>();
    }

    private Producer producer(int subtask) {
        return producers.computeIfAbsent(subtask, s -> new Producer());
    }

    /**
     * The speed factor {@code subtask} announced when it started: a producer that starts, or starts
     * again after a failure, has no generator yet.
     */
    void announced(int subtask, double speedFactor) {
        Producer producer = producer(subtask);
        producer.speedFactor = speedFactor;
        producer.preloaded.clear();
    }

    /**
     * {@code subtask} was handed {@code taskId} of {@code jobId}, {@code bytes}, at {@code now}.
     */
    void handedOut(int subtask, String jobId, String taskId, long bytes, long now) {
        producer(subtask).queue.addLast(new Held(jobId, taskId, bytes, now));
    }

    /**
     * {@code subtask} finished {@code taskId} of {@code jobId} at {@code now}: computed to its end
     * ({@code complete}), which measures its rate, or dropped or failed, which does not; {@code
     * preloadMillis} of its time went to making and preloading the job's generator.
     */
    void done(
            int subtask,
            String jobId,
            String taskId,
            boolean complete,
            long preloadMillis,
            long now) {
        Producer producer = producers.get(subtask);
        if (producer == null) {
            return;
        }
        // A complete task had its generator, preloaded by it or before it (its report is then 0).
        if (complete || preloadMillis > 0) {
            longestPreloadMillis.merge(jobId, preloadMillis, Math::max);
            producer.preloaded.add(jobId);
        }
        Held head = producer.queue.peekFirst();
        if (complete && head != null && head.taskId().equals(taskId)) {
            long took = Math.max(1, now - startOf(producer, head) - preloadMillis);
            double rate = (double) head.bytes() / took;
            producer.measuredRate =
                    producer.measuredRate == 0
                            ? rate
                            : RATE_WEIGHT * rate + (1 - RATE_WEIGHT) * producer.measuredRate;
        }
        producer.queue.removeIf(held -> held.taskId().equals(taskId));
        producer.lastDoneMillis = now;
    }

    /** {@code subtask} is gone (Flink gave its tasks back): it holds nothing. */
    void lost(int subtask) {
        Producer producer = producers.get(subtask);
        if (producer != null) {
            producer.queue.clear();
            producer.measuredRate = 0;
            producer.preloaded.clear();
        }
    }

    /** The job left the scheduler: its preload is forgotten. */
    void ended(String jobId) {
        longestPreloadMillis.remove(jobId);
        producers.values().forEach(producer -> producer.preloaded.remove(jobId));
    }

    /**
     * The producer's rate in bytes per millisecond: measured, or, before its first task was, the
     * measured producers' rate per unit of speed factor times its own factor; 0 when no producer
     * was measured yet.
     */
    double rate(int subtask) {
        Producer producer = producers.get(subtask);
        if (producer != null && producer.measuredRate > 0) {
            return producer.measuredRate;
        }
        double perFactor = 0;
        int measured = 0;
        for (Producer other : producers.values()) {
            if (other.measuredRate > 0) {
                perFactor += other.measuredRate / other.speedFactor;
                measured++;
            }
        }
        if (measured == 0) {
            return 0;
        }
        return perFactor / measured * (producer == null ? 1.0 : producer.speedFactor);
    }

    /** The fastest rate among {@code subtasks}, 0 if none is known. */
    double fastestRate(Iterable<Integer> subtasks) {
        double fastest = 0;
        for (int subtask : subtasks) {
            fastest = Math.max(fastest, rate(subtask));
        }
        return fastest;
    }

    /** How long {@code bytes} take on the producer, empty while its rate is unknown. */
    OptionalLong expectedMillis(int subtask, long bytes) {
        double rate = rate(subtask);
        return rate > 0 ? OptionalLong.of(Math.round(bytes / rate)) : OptionalLong.empty();
    }

    /**
     * When the producer is expected to be done with {@code taskId}, which it holds: after the rest
     * of the task at its queue's head and every task before {@code taskId}; empty while its rate is
     * unknown or it does not hold the task.
     */
    OptionalLong expectedDone(int subtask, String taskId, long now) {
        return expectedDone(subtask, taskId, false, now);
    }

    /**
     * When the producer is expected to be done with every task it holds, so free to start one more:
     * {@code now} if it holds none; empty while its rate is unknown.
     */
    OptionalLong expectedIdle(int subtask, long now) {
        return expectedDone(subtask, null, true, now);
    }

    private OptionalLong expectedDone(int subtask, String taskId, boolean all, long now) {
        Producer producer = producers.get(subtask);
        double rate = rate(subtask);
        if (rate <= 0) {
            return OptionalLong.empty();
        }
        long at = now;
        boolean head = true;
        for (Held held : producer == null ? List.<Held>of() : producer.queue) {
            long expected = Math.round(held.bytes() / rate);
            if (head) {
                at += headLeft(producer, held, expected, now);
                head = false;
            } else {
                at += expected;
            }
            if (held.taskId().equals(taskId)) {
                return OptionalLong.of(at);
            }
        }
        return all ? OptionalLong.of(at) : OptionalLong.empty();
    }

    /**
     * How long the task at a producer's head still takes, {@code expected} once computing: as long
     * again as it overran, or the rest of its time, its job's preload counted in; {@code expected}
     * from now while the preload is of unknown length.
     */
    private long headLeft(Producer producer, Held head, long expected, long now) {
        OptionalLong preload = preloadAhead(producer, head);
        if (preload.isEmpty()) {
            return expected;
        }
        long elapsed = Math.max(0, now - startOf(producer, head));
        return Math.abs(preload.getAsLong() + expected - elapsed);
    }

    /**
     * Whether the task at the producer's head has run for more than {@code factor} times its
     * expected time, its job's preload counted in: the producer is slow or stalled
     * (docs/generation.md, "Speculative duplicates"). False while its rate, or the length of the
     * preload it makes, is unknown.
     */
    boolean overran(int subtask, double factor, long now) {
        Producer producer = producers.get(subtask);
        if (producer == null || producer.queue.isEmpty()) {
            return false;
        }
        Held head = producer.queue.peekFirst();
        OptionalLong expected = expectedMillis(subtask, head.bytes());
        OptionalLong preload = preloadAhead(producer, head);
        return expected.isPresent()
                && preload.isPresent()
                && now - startOf(producer, head)
                        > factor * Math.max(1, preload.getAsLong() + expected.getAsLong());
    }

    /** What the producer's task at hand took so far and was expected to, for the log. */
    String headTiming(int subtask, long now) {
        Producer producer = producers.get(subtask);
        if (producer == null || producer.queue.isEmpty()) {
            return "producer " + subtask + " holds no task";
        }
        Held head = producer.queue.peekFirst();
        return "producer "
                + subtask
                + " on its task for "
                + (now - startOf(producer, head))
                + " ms, expected in "
                + expectedMillis(subtask, head.bytes()).orElse(-1)
                + " ms and "
                + preloadAhead(producer, head).orElse(-1)
                + " ms of preload";
    }

    /**
     * The preload the producer makes before it computes {@code head}: none when it has its job's
     * generator, else the longest one reported for the job, empty while none was.
     */
    private OptionalLong preloadAhead(Producer producer, Held head) {
        if (producer.preloaded.contains(head.jobId())) {
            return OptionalLong.of(0);
        }
        Long reported = longestPreloadMillis.get(head.jobId());
        return reported == null ? OptionalLong.empty() : OptionalLong.of(reported);
    }

    private static long startOf(Producer producer, Held head) {
        return Math.max(head.handedOutMillis(), producer.lastDoneMillis);
    }
}
