package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.protocol.StreamGap;
import dev.sluice.client.protocol.StreamStart;
import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.SegmentObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A CHUNK_STREAMS subscription: the daemon puts each stream's chunks in {@code seq} order, drops
 * duplicates and marks the end of each stream; this side hands them out as {@link ChunkBatch}es.
 *
 * <p><b>Resuming.</b> The subscription keeps each stream's next {@code seq}. When the daemon went
 * away it subscribes again, from its consumer group's committed offsets ({@link #commitProcessed()}
 * moves them) or, without a group, from where it first started, and names those streams and seqs in
 * SUBSCRIBE: the daemon starts each of them there, and drops what comes before as duplicates. So
 * every stream arrives once, in order, across daemon restarts. A <i>new</i> reader joining a group
 * that committed mid-stream has no seqs to give and would wait for chunks committed long ago:
 * CHUNK_STREAMS groups are for one reader that resumes.
 *
 * <p><b>Gaps.</b> When a stream waits for a missing {@code seq} longer than the daemon's {@code
 * sluice.gap.timeout.ms}, the daemon says so once per hole (STREAM_GAP, docs/formats.md): {@link
 * #nextGap()} gives these reports. The stream goes on waiting for the missing chunks; what to do
 * about it is the reader's call.
 *
 * <p>Not thread-safe: one thread polls and closes batches, one batch at a time.
 */
@PublicEvolving
public final class ChunkSubscription extends SegmentSubscription<ChunkBatch> {
    // (job, stream) → the next seq to hand out.
    private final Map<List<String>, Long> nextSeq = new HashMap<>();

    ChunkSubscription(BrokerdClient client, SubscriptionRequest request) throws IOException {
        super(client, request);
        start();
    }

    /**
     * The oldest hole the daemon reported in one of this subscription's streams and not taken yet,
     * null if none: {@code seq}s {@code missingFrom} to {@code missingTo} have not come within its
     * gap timeout. Each hole is reported once; its report may come before or after the chunks below
     * it are polled, and a chunk that fills it may be polled before the report is taken.
     */
    public StreamGap nextGap() {
        return nextStreamGap();
    }

    @Override
    ChunkBatch wrap(SegmentObject object, ArrowBatchReader loader) {
        VectorSchemaRoot root = loader.root();
        VarCharVector jobs = (VarCharVector) root.getVector("job");
        VarCharVector streams = (VarCharVector) root.getVector("stream");
        UInt8Vector seqs = (UInt8Vector) root.getVector("seq");
        int[] rows = new int[root.getRowCount()];
        int count = 0;
        for (int row = 0; row < rows.length; row++) {
            List<String> key =
                    List.of(
                            new String(jobs.get(row), StandardCharsets.UTF_8),
                            new String(streams.get(row), StandardCharsets.UTF_8));
            long seq = seqs.get(row);
            if (seq >= nextSeq.getOrDefault(key, 0L)) {
                nextSeq.put(key, seq + 1);
                rows[count++] = row;
            }
        }
        return count == 0 ? null : new ChunkBatch(this, object, loader, Arrays.copyOf(rows, count));
    }

    @Override
    Map<Integer, Long> resumePositions() {
        return Map.of();
    }

    @Override
    List<StreamStart> resumeStreams() {
        List<StreamStart> starts = new ArrayList<>();
        nextSeq.forEach((key, seq) -> starts.add(new StreamStart(key.get(0), key.get(1), seq)));
        return starts;
    }

    @Override
    void closed(ChunkBatch batch) {}
}
