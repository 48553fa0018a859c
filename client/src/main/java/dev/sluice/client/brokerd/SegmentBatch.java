package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.SegmentObject;
import java.io.IOException;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One object of a subscription, read in place from shared memory. Valid until closed; closing
 * releases its slot, which is the backpressure the daemon waits on.
 */
@PublicEvolving
public abstract class SegmentBatch implements AutoCloseable {
    private final SegmentSubscription<?> subscription;
    private final SegmentObject object;
    private final ArrowBatchReader loader;
    private boolean closed;

    SegmentBatch(
            SegmentSubscription<?> subscription, SegmentObject object, ArrowBatchReader loader) {
        this.subscription = subscription;
        this.object = object;
        this.loader = loader;
    }

    /** The object as Arrow vectors over shared memory: zero-copy, valid until {@link #close()}. */
    public VectorSchemaRoot root() {
        return loader.root();
    }

    /** The loader whose vectors hold this batch; free again once it is closed. */
    ArrowBatchReader loader() {
        return loader;
    }

    /** The segment's id of this object, as RELEASE counts them. */
    long objectId() {
        return object.objectId();
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        ((SegmentSubscription) subscription).released(this);
        object.release();
    }
}
