package dev.sluice.flink.generation.split;

import dev.sluice.client.job.Transport;
import dev.sluice.flink.generation.ComputeTask;
import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceSplit;

/**
 * A compute task given to a producer, how many of its chunks were already emitted (a restored task
 * computes again from its start and skips those), and the way its chunks go: the scheduler decides
 * it when it hands the task out (docs/generation.md, "Transports"), and the producer puts it on
 * every chunk for the sink.
 *
 * @param transport {@link Transport#KAFKA} or {@link Transport#LOCAL}, never {@link Transport#AUTO}
 */
@Internal
public record ComputeTaskSplit(ComputeTask task, int emittedChunks, Transport transport)
        implements SourceSplit {

    public ComputeTaskSplit {
        if (emittedChunks < 0 || emittedChunks > task.chunkCount()) {
            throw new IllegalArgumentException(
                    task.id() + ": " + emittedChunks + " of " + task.chunkCount() + " chunks");
        }
        Objects.requireNonNull(transport, "transport");
        if (transport == Transport.AUTO) {
            throw new IllegalArgumentException(
                    task.id()
                            + ": a task goes out as KAFKA or LOCAL; AUTO is resolved at hand-out");
        }
    }

    /** A task whose chunks go through the chunk topic. */
    public ComputeTaskSplit(ComputeTask task, int emittedChunks) {
        this(task, emittedChunks, Transport.KAFKA);
    }

    @Override
    public String splitId() {
        return task.id();
    }

    public String jobId() {
        return task.job().id();
    }
}
