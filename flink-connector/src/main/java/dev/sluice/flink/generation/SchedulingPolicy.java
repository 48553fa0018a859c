package dev.sluice.flink.generation;

import dev.sluice.client.job.JobSpec;
import java.io.Serializable;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import org.apache.flink.annotation.PublicEvolving;

/**
 * Which compute task a producer asking for work gets: the scheduler's policy (docs/generation.md,
 * "Scheduling policy": a customizable policy, one event loop deciding). The scheduler calls it on
 * its one thread, each time a producer asks for a task, with the running jobs that have a task that
 * may go to that producer now (docs/generation.md, "Room admission"), each seen from that producer.
 */
@PublicEvolving
public interface SchedulingPolicy extends Serializable {

    /** The task for {@code producer}, taken from one of {@code jobs}, or empty to give none. */
    Optional<ComputeTask> next(Producer producer, List<SchedulableJob> jobs);

    /**
     * A producer: a GenerationSource reader, with the bytes per millisecond the scheduler expects
     * of it (measured task by task, docs/generation.md, "Producers of unequal speed"; 0 while no
     * producer was measured yet).
     */
    record Producer(int subtask, String host, int tasksInFlight, double bytesPerMilli) {

        /**
         * How long a task of {@code bytes} is expected to take it; empty while its rate is unknown.
         */
        public OptionalDouble expectedMillis(long bytes) {
            return bytesPerMilli > 0
                    ? OptionalDouble.of(bytes / bytesPerMilli)
                    : OptionalDouble.empty();
        }
    }

    /** A running job as a policy sees it when a producer asks for work. */
    interface SchedulableJob {
        JobSpec spec();

        /**
         * The streams with a task that may go to this producer now, in the spec's order: tasks not
         * handed out yet, room in the producer's window (fewer than {@code tasksAheadPerStream} of
         * the stream's tasks handed to it not delivered yet), and a transport that lets the task go
         * there (a {@code LOCAL} stream's only to a producer on its host: docs/generation.md,
         * "Transports").
         */
        List<String> streamsWithWork();

        /**
         * The bytes of the stream's tasks handed out, to any producer, that its readers have not
         * been delivered yet: with the stream's rate, how long its readers can go on.
         */
        long bufferedBytes(String stream);

        /** The host of the stream's output location. */
        String hostOf(String stream);

        /** Hands out the next task of {@code stream}, one of {@link #streamsWithWork()}. */
        ComputeTask take(String stream);
    }
}
