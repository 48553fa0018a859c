package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMilliTZVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

/**
 * Collects Kafka records into a batch of the RECORDS schema and writes it as one object. The
 * object's partition is the records' partition when they share one, else {@code -1}.
 */
@PublicEvolving
public final class RecordsBatchEncoder implements AutoCloseable {
    private final VectorSchemaRoot root;
    private final IntVector partition;
    private final BigIntVector offset;
    private final TimeStampMilliTZVector timestamp;
    private final VarBinaryVector key;
    private final VarBinaryVector value;
    private final ListVector headers;
    private final StructVector header;
    private final VarCharVector headerKey;
    private final VarBinaryVector headerValue;
    private int rows;
    private int headerRows;
    private int objectPartition;
    private long firstOffset;
    private long lastOffset;

    public RecordsBatchEncoder(BufferAllocator allocator) {
        root = VectorSchemaRoot.create(ObjectKind.RECORDS.schema(), allocator);
        partition = (IntVector) root.getVector("partition");
        offset = (BigIntVector) root.getVector("offset");
        timestamp = (TimeStampMilliTZVector) root.getVector("timestamp");
        key = (VarBinaryVector) root.getVector("key");
        value = (VarBinaryVector) root.getVector("value");
        headers = (ListVector) root.getVector("headers");
        header = (StructVector) headers.getDataVector();
        headerKey = header.getChild("key", VarCharVector.class);
        headerValue = header.getChild("value", VarBinaryVector.class);
        clear();
    }

    /** Adds one record; {@code key} and {@code value} may be null. */
    public void add(
            int partition,
            long offset,
            long timestampMillis,
            byte[] key,
            byte[] value,
            List<RecordHeader> headers) {
        if (rows == 0) {
            objectPartition = partition;
            firstOffset = offset;
        } else if (objectPartition != partition) {
            objectPartition = -1;
        }
        lastOffset = offset;
        this.partition.setSafe(rows, partition);
        this.offset.setSafe(rows, offset);
        timestamp.setSafe(rows, timestampMillis);
        setBinary(this.key, rows, key);
        setBinary(this.value, rows, value);
        this.headers.startNewValue(rows);
        for (RecordHeader h : headers) {
            header.setIndexDefined(headerRows);
            headerKey.setSafe(headerRows, h.key().getBytes(StandardCharsets.UTF_8));
            headerValue.setSafe(headerRows, h.value());
            headerRows++;
        }
        this.headers.endValue(rows, headers.size());
        rows++;
        root.setRowCount(rows);
    }

    private static void setBinary(VarBinaryVector vector, int row, byte[] bytes) {
        if (bytes == null) {
            vector.setNull(row);
        } else {
            vector.setSafe(row, bytes);
        }
    }

    public int rowCount() {
        return rows;
    }

    /** The batch so far. */
    public VectorSchemaRoot root() {
        return root;
    }

    /**
     * Writes the batch as one object, then clears it.
     *
     * @return the object id
     */
    public long writeTo(SegmentWriter writer, Duration timeout)
            throws IOException, TimeoutException {
        long id =
                writer.write(
                        root,
                        rows == 0 ? -1 : objectPartition,
                        rows == 0 ? -1 : firstOffset,
                        rows == 0 ? -1 : lastOffset,
                        timeout);
        clear();
        return id;
    }

    /** Drops the rows, keeping the allocated buffers for the next batch. */
    public void clear() {
        root.getFieldVectors().forEach(v -> v.reset());
        rows = 0;
        headerRows = 0;
        root.setRowCount(0);
    }

    @Override
    public void close() {
        root.close();
    }
}
