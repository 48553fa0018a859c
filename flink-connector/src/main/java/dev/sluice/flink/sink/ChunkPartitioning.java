package dev.sluice.flink.sink;

import dev.sluice.client.write.ChunkRecords;
import dev.sluice.flink.generation.Chunk;
import org.apache.flink.annotation.PublicEvolving;

/**
 * Which partition of its chunk topic a chunk goes to. The daemon on the output node reads every
 * partition of the topic and puts each stream back in {@code seq} order, so the choice is about
 * spreading load, never about order.
 *
 * <p>Both rules start from the stream's <i>home partition</i>, {@code h = toPositive(murmur2(UTF-8
 * of "job/stream")) % partitions} (the hash Kafka's default partitioner gives a key), so that the
 * streams of a topic start on different partitions ({@link ChunkRecords#homePartition}, which the
 * plain {@code StreamWriter} spreads from too).
 */
@PublicEvolving
public enum ChunkPartitioning {
    /**
     * Chunk {@code seq} goes to partition {@code (h + seq) % partitions}: consecutive chunks of a
     * stream on consecutive partitions, round robin. A stream is fetched from every partition at
     * once, and the writers of a stream load every partition evenly. The default.
     */
    SPREAD,

    /**
     * Every chunk of a stream goes to its home partition {@code h}: a stream arrives in the order
     * its writers wrote it, at the throughput of one partition. For topics read by something else
     * than the daemon that wants one stream per partition.
     */
    ONE_PER_STREAM;

    /** The partition of {@code chunk} among {@code partitions} (at least 1). */
    public int partition(Chunk chunk, int partitions) {
        return this == ONE_PER_STREAM
                ? ChunkRecords.homePartition(chunk.job(), chunk.stream(), partitions)
                : ChunkRecords.spreadPartition(
                        chunk.job(), chunk.stream(), chunk.seq(), partitions);
    }
}
