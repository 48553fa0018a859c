package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.protocol.StreamStart;
import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.SegmentObject;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A RECORDS subscription: the records of its partitions, in per-partition offset order, as {@link
 * RecordBatch}es read in place from the daemon's segment.
 *
 * <p><b>Resuming.</b> The subscription keeps, per partition, the offset after the last record of
 * every batch closed so far. When the daemon goes away (SIGTERM, SIGKILL, a lost connection) it
 * first hands out what is still published in the old segment, which stays mapped, then connects
 * again, with backoff, and subscribes with those offsets as explicit starts. So a reader sees every
 * record once, across any number of daemon restarts, as long as it closes each batch it processed.
 * While the daemon is away, {@link #poll} waits for it up to the client's reconnect timeout. An
 * error that would come again (an unknown topic, a record larger than a slot) ends the subscription
 * instead, with a {@link BrokerdException}.
 *
 * <p>Not thread-safe: one thread polls and closes batches, one batch at a time (the batch's vectors
 * are reused by the next one).
 */
@PublicEvolving
public final class RecordsSubscription extends SegmentSubscription<RecordBatch> {
    private final Map<Integer, Long> positions = new HashMap<>();

    RecordsSubscription(BrokerdClient client, SubscriptionRequest request) throws IOException {
        super(client, request);
        start();
    }

    /** Per partition, the offset after the last record of the batches closed so far. */
    public Map<Integer, Long> positions() {
        return Map.copyOf(positions);
    }

    @Override
    RecordBatch wrap(SegmentObject object, ArrowBatchReader loader) {
        return new RecordBatch(this, object, loader);
    }

    @Override
    Map<Integer, Long> resumePositions() {
        return positions;
    }

    @Override
    List<StreamStart> resumeStreams() {
        return List.of();
    }

    @Override
    void closed(RecordBatch batch) {
        // A partition's records come in runs, in offset order: one map update per run, not per row.
        // With several batches open they may close out of order: a position only moves forward.
        int rows = batch.rowCount();
        for (int row = 0; row < rows; row++) {
            int partition = batch.partition(row);
            if (row + 1 == rows || batch.partition(row + 1) != partition) {
                positions.merge(partition, batch.offset(row) + 1, Math::max);
            }
        }
    }
}
