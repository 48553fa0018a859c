package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMilliTZVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

/**
 * Collects Kafka records into a batch of the RECORDS schema and writes it as one object. The
 * object's partition is the records' partition when they share one, else {@code -1}.
 */
@PublicEvolving
public final class RecordsBatchEncoder extends BatchEncoder {
    private final IntVector partition;
    private final BigIntVector offset;
    private final TimeStampMilliTZVector timestamp;
    private final VarBinaryVector key;
    private final VarBinaryVector value;
    private final ListVector headers;
    private final StructVector header;
    private final VarCharVector headerKey;
    private final VarBinaryVector headerValue;
    private int headerRows;
    private int objectPartition;
    private long firstOffset;
    private long lastOffset;

    public RecordsBatchEncoder(BufferAllocator allocator) {
        super(ObjectKind.RECORDS, allocator);
        // The list column and the struct of key and value inside it, which add() fills row by row.
        headers = column("headers", ListVector.class);
        header = (StructVector) headers.getDataVector();
        headerKey = header.getChild("key", VarCharVector.class);
        headerValue = header.getChild("value", VarBinaryVector.class);
        partition = column("partition", IntVector.class);
        offset = column("offset", BigIntVector.class);
        timestamp = column("timestamp", TimeStampMilliTZVector.class);
        key = column("key", VarBinaryVector.class);
        value = column("value", VarBinaryVector.class);
    }

    /** Adds one record; {@code key} and {@code value} may be null. */
    public void add(
            int partition,
            long offset,
            long timestampMillis,
            byte[] key,
            byte[] value,
            List<RecordHeader> headers) {
        int rows = rowCount();
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
        rowAdded();
    }

    private static void setBinary(VarBinaryVector vector, int row, byte[] bytes) {
        if (bytes == null) {
            vector.setNull(row);
        } else {
            vector.setSafe(row, bytes);
        }
    }

    @Override
    int objectPartition() {
        return objectPartition;
    }

    @Override
    long firstOffset() {
        return firstOffset;
    }

    @Override
    long lastOffset() {
        return lastOffset;
    }

    @Override
    void clearRows() {
        headerRows = 0;
    }
}
