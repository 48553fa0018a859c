package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * What the two encoders share, as {@code native/include/sluice/batch_builder.h}'s {@code
 * BatchEncoder} does for their C++ twins: a batch of one kind's schema that grows a row at a time,
 * is written as one object and then starts again, empty, on the buffers it already has. A subclass
 * sets the columns of row {@link #rowCount()} and calls {@link #rowAdded()}; one whose rows carry
 * Kafka positions says which through {@link #objectPartition()} and the two offsets.
 */
@PublicEvolving
public abstract sealed class BatchEncoder implements AutoCloseable
        permits RecordsBatchEncoder, ChunksBatchEncoder {
    private final VectorSchemaRoot root;
    private int rows;

    BatchEncoder(ObjectKind kind, BufferAllocator allocator) {
        root = VectorSchemaRoot.create(kind.schema(), allocator);
        resetColumns();
    }

    /** Column {@code name} of the kind's schema, as the vector type the schema gives it. */
    final <V extends FieldVector> V column(String name, Class<V> type) {
        return type.cast(root.getVector(name));
    }

    /** Counts the row whose columns the subclass has just set at index {@link #rowCount()}. */
    final void rowAdded() {
        rows++;
        root.setRowCount(rows);
    }

    /** The object's partition for a non-empty batch: {@code -1} unless the subclass knows one. */
    int objectPartition() {
        return -1;
    }

    /**
     * The object's first offset for a non-empty batch: {@code -1} unless the subclass knows one.
     */
    long firstOffset() {
        return -1;
    }

    /** The object's last offset for a non-empty batch: {@code -1} unless the subclass knows one. */
    long lastOffset() {
        return -1;
    }

    /** Forgets what the subclass keeps beside the columns; called by {@link #clear()}. */
    void clearRows() {}

    public final int rowCount() {
        return rows;
    }

    /** The batch so far. */
    public final VectorSchemaRoot root() {
        return root;
    }

    /**
     * Writes the batch as one object, then clears it. An empty batch has partition and offsets
     * {@code -1}.
     *
     * @return the object id
     */
    public final long writeTo(SegmentWriter writer, Duration timeout)
            throws IOException, TimeoutException {
        long id =
                rows == 0
                        ? writer.write(this::writeTo, 0, -1, -1, -1, timeout)
                        : writer.write(
                                this::writeTo,
                                rows,
                                objectPartition(),
                                firstOffset(),
                                lastOffset(),
                                timeout);
        clear();
        return id;
    }

    /**
     * Serializes the batch into a slot the caller claimed, as one encapsulated IPC record-batch
     * message ({@link WritableSlot#write}), without clearing it.
     *
     * @return the message's length, to pass to {@link SegmentWriter#publish}
     * @throws SegmentException if the message does not fit in the slot
     */
    public int writeTo(WritableSlot slot) throws IOException {
        return slot.write(root);
    }

    /** Drops the rows, keeping the allocated buffers for the next batch. */
    public final void clear() {
        resetColumns();
        clearRows();
    }

    private void resetColumns() {
        root.getFieldVectors().forEach(FieldVector::reset);
        rows = 0;
        root.setRowCount(0);
    }

    @Override
    public final void close() {
        root.close();
    }
}
