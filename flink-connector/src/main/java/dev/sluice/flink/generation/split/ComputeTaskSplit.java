package dev.sluice.flink.generation.split;

import dev.sluice.flink.generation.ComputeTask;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceSplit;

/**
 * A compute task given to a producer, and how many of its chunks were already emitted: a restored
 * task computes again from its start and skips those.
 */
@Internal
public record ComputeTaskSplit(ComputeTask task, int emittedChunks) implements SourceSplit {

    public ComputeTaskSplit {
        if (emittedChunks < 0 || emittedChunks > task.chunkCount()) {
            throw new IllegalArgumentException(
                    task.id() + ": " + emittedChunks + " of " + task.chunkCount() + " chunks");
        }
    }

    @Override
    public String splitId() {
        return task.id();
    }

    public String jobId() {
        return task.job().id();
    }
}
