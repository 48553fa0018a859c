package dev.sluice.flink.generation.scheduler;

import dev.sluice.client.job.JobCommand;
import dev.sluice.client.job.JobStatus;
import dev.sluice.client.job.MalformedCommand;
import dev.sluice.client.progress.DeliveryProgress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.flink.annotation.Internal;

/**
 * The scheduler's low-latency path to the world (docs/generation.md, "The scheduler"): job commands
 * in, delivery progress in, job statuses out, and the chunk topics' leadership kept on their
 * preferred brokers. {@link #poll} runs on a worker thread, {@link #publish} on the scheduler's.
 */
@Internal
public interface ControlPlane extends AutoCloseable {

    /**
     * The ids of jobs that have a status already: their submissions were handled before this
     * scheduler started. Called once, before the first poll.
     */
    Set<String> knownJobs();

    /**
     * Which of {@code topics} the cluster does not have; none when that cannot be told (the cluster
     * does not answer in time): a job is then not refused for it.
     */
    Set<String> missingTopics(Set<String> topics);

    /**
     * The largest record each of {@code topics} takes, its {@code max.message.bytes}, for those the
     * cluster tells in time: a topic left out does not refuse a job.
     */
    Map<String, Integer> maxMessageBytes(Set<String> topics);

    /** Starts reading at {@code positions} ("topic-partition" → offset) where it has them. */
    void seek(Map<String, Long> positions);

    /**
     * What came since the last poll, and the read positions after it: returns as soon as something
     * came, or empty after {@code timeout}.
     */
    Batch poll(Duration timeout);

    /**
     * From now on, every {@code interval}, gives the leadership of the partitions of the chunk
     * topics {@code chunkTopics} names then back to their preferred brokers where another broker
     * leads while the preferred one is in sync (docs/generation.md, "Chunk-topic leadership"). On a
     * thread of the control plane's own, until {@link #close}: the Admin calls take as long as the
     * cluster answers, up to seconds while a broker is lost, and neither {@link #poll} nor the
     * scheduler waits for them. {@code chunkTopics} is read on that thread.
     */
    void restorePreferredLeaders(Supplier<Set<String>> chunkTopics, Duration interval);

    /** Sends a job status without waiting for it to be written: {@link #flush} does. */
    void publish(JobStatus status);

    /**
     * Waits until every status published is written, so that a checkpoint never holds a job state
     * whose status could still be lost; throws if one could not be.
     */
    void flush();

    /**
     * Publishes, on the readers' behalf, the end of each of {@code streams} (an end-of-stream
     * progress record per reader) for a job that ended without completing: what the sink holds back
     * for them is released, and its writers go on with the other jobs.
     */
    void release(List<DeliveryProgress> ends);

    @Override
    void close();

    record Batch(
            List<JobCommand> commands,
            List<MalformedCommand> malformed,
            List<DeliveryProgress> progress,
            Map<String, Long> positions) {}
}
