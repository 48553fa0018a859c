package dev.sluice.flink.sink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.flink.generation.Chunk;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.junit.jupiter.api.Test;

/** The partitioning rules of docs/sluice-sink.md, "Partitioning". */
class ChunkPartitioningTest {
    private static Chunk chunk(long seq, boolean eos, byte[] payload) {
        return new Chunk("job-1", "cyan", "printer-1", seq, eos, payload);
    }

    @Test
    void spreadPutsConsecutiveChunksOnConsecutivePartitionsFromTheStreamsHome() {
        int partitions = 3;
        int home =
                BuiltInPartitioner.partitionForKey(
                        "job-1/cyan".getBytes(StandardCharsets.UTF_8), partitions);
        List<Integer> seen = new ArrayList<>();
        for (long seq = 0; seq < 6; seq++) {
            seen.add(
                    ChunkPartitioning.SPREAD.partition(chunk(seq, false, new byte[1]), partitions));
        }
        assertThat(seen)
                .containsExactly(
                        home, (home + 1) % 3, (home + 2) % 3, home, (home + 1) % 3, (home + 2) % 3);
        // Large seqs stay in range.
        assertThat(ChunkPartitioning.SPREAD.partition(chunk(Long.MAX_VALUE, false, new byte[1]), 7))
                .isBetween(0, 6);
    }

    @Test
    void onePerStreamKeepsAStreamOnItsHomePartition() {
        int home =
                BuiltInPartitioner.partitionForKey(
                        "job-1/cyan".getBytes(StandardCharsets.UTF_8), 5);
        for (long seq = 0; seq < 10; seq++) {
            assertThat(
                            ChunkPartitioning.ONE_PER_STREAM.partition(
                                    chunk(seq, false, new byte[1]), 5))
                    .isEqualTo(home);
        }
    }
}
