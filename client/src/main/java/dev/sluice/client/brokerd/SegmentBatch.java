package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
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
    private final VectorSchemaRoot root;
    private boolean closed;

    SegmentBatch(SegmentSubscription<?> subscription, SegmentObject object, VectorSchemaRoot root) {
        this.subscription = subscription;
        this.object = object;
        this.root = root;
    }

    /** The object as Arrow vectors over shared memory: zero-copy, valid until {@link #close()}. */
    public VectorSchemaRoot root() {
        return root;
    }

    /** The segment's id of this object, as RELEASE counts them. */
    long objectId() {
        return object.objectId();
    }

    boolean isClosed() {
        return closed;
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
