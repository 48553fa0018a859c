package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.segment.SegmentObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A CHUNK_STREAMS subscription: the daemon puts each stream's chunks in {@code seq} order, drops
 * duplicates and marks the end of each stream; this side hands them out as {@link ChunkBatch}es.
 *
 * <p><b>Resuming.</b> Chunk rows carry no Kafka offsets, so after the daemon went away the
 * subscription asks for its partitions from where it first asked, and drops every chunk whose
 * {@code seq} it already handed out: each stream still arrives once, in order, at the cost of
 * reading again. (Resuming from a consumer group's committed offsets would need each stream's next
 * {@code seq} in SUBSCRIBE, since the daemon's ordering starts a stream at seq 0; protocol version
 * 1 has no such field, so a CHUNK_STREAMS subscription should not use a group that has committed.)
 *
 * <p>Not thread-safe: one thread polls and closes batches, one batch at a time.
 */
@PublicEvolving
public final class ChunkSubscription extends SegmentSubscription<ChunkBatch> {
    // job + '\0' + stream → the next seq to hand out.
    private final Map<String, Long> nextSeq = new HashMap<>();

    ChunkSubscription(BrokerdClient client, SubscriptionRequest request) throws IOException {
        super(client, request);
        start();
    }

    @Override
    ChunkBatch wrap(SegmentObject object, VectorSchemaRoot root) {
        VarCharVector jobs = (VarCharVector) root.getVector("job");
        VarCharVector streams = (VarCharVector) root.getVector("stream");
        UInt8Vector seqs = (UInt8Vector) root.getVector("seq");
        int[] rows = new int[root.getRowCount()];
        int count = 0;
        for (int row = 0; row < rows.length; row++) {
            String key =
                    new String(jobs.get(row), StandardCharsets.UTF_8)
                            + '\0'
                            + new String(streams.get(row), StandardCharsets.UTF_8);
            long seq = seqs.get(row);
            if (seq >= nextSeq.getOrDefault(key, 0L)) {
                nextSeq.put(key, seq + 1);
                rows[count++] = row;
            }
        }
        return count == 0 ? null : new ChunkBatch(this, object, root, Arrays.copyOf(rows, count));
    }

    @Override
    Map<Integer, Long> resumePositions() {
        return Map.of();
    }

    @Override
    void closed(ChunkBatch batch) {}
}
