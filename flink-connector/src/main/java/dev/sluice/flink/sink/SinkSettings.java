package dev.sluice.flink.sink;

import dev.sluice.client.write.InFlightAccounting;
import java.io.Serializable;
import java.time.Duration;
import java.util.Properties;
import org.apache.flink.annotation.Internal;

/**
 * What a {@link SluiceSink} was built with, checked by {@link SluiceSinkBuilder#build()}.
 *
 * @param producer the producer's properties, serializers and {@code acks} included
 * @param consumer the progress consumer's properties (connection and security), group-less
 * @param progressTopic where stream readers publish their delivery progress
 * @param jobsTopic where a writer sends the {@code FAIL} command of a job whose chunks cannot be
 *     written (docs/sluice-sink.md, "A job that cannot be written")
 * @param fixedCapPerStream the in-flight cap of a stream over all writers; 0: by the formula
 * @param maxTaskSizeBytes the largest task size of the jobs, for the formula
 * @param maxCapPerStream the formula's upper bound
 * @param partitioning which partition a chunk goes to
 * @param progressPartitionRefresh how often the progress consumer looks for new partitions
 * @param local how the writers reach their host's daemon for {@code LOCAL} chunks; null: they send
 *     those through Kafka
 */
@Internal
public record SinkSettings(
        Properties producer,
        Properties consumer,
        String progressTopic,
        String jobsTopic,
        long fixedCapPerStream,
        long maxTaskSizeBytes,
        long maxCapPerStream,
        ChunkPartitioning partitioning,
        Duration progressPartitionRefresh,
        LocalTransportSettings local)
        implements Serializable {

    /**
     * The in-flight cap of a stream over the sink's {@code producers} writers: the fixed cap if one
     * was set, else {@code maxTaskSizeBytes × producers × 4} bounded by {@code maxCapPerStream}
     * ({@link InFlightAccounting#capPerStream}).
     */
    public long capPerStream(int producers) {
        if (fixedCapPerStream > 0) {
            return fixedCapPerStream;
        }
        return InFlightAccounting.capPerStream(maxTaskSizeBytes, producers, maxCapPerStream);
    }

    /** What one of {@code producers} writers may hold of a stream: its equal part of the cap. */
    public long sharePerStream(int producers) {
        return Math.max(1, capPerStream(producers) / producers);
    }
}
