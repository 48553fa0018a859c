package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.RecordHeader;
import dev.sluice.client.segment.SegmentObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMilliTZVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

/**
 * One object of a RECORDS subscription: Kafka records in shared memory, read in place. Closing it
 * releases its slot and moves the subscription's positions past its records.
 */
@PublicEvolving
public final class RecordBatch extends SegmentBatch {
    private final IntVector partitions;
    private final BigIntVector offsets;
    private final TimeStampMilliTZVector timestamps;
    private final VarBinaryVector keys;
    private final VarBinaryVector values;

    RecordBatch(RecordsSubscription subscription, SegmentObject object, ArrowBatchReader loader) {
        super(subscription, object, loader);
        this.partitions = (IntVector) root().getVector("partition");
        this.offsets = (BigIntVector) root().getVector("offset");
        this.timestamps = (TimeStampMilliTZVector) root().getVector("timestamp");
        this.keys = (VarBinaryVector) root().getVector("key");
        this.values = (VarBinaryVector) root().getVector("value");
    }

    public int rowCount() {
        return root().getRowCount();
    }

    public int partition(int row) {
        return partitions.get(row);
    }

    public long offset(int row) {
        return offsets.get(row);
    }

    public long timestampMs(int row) {
        return timestamps.get(row);
    }

    /** A copy of the key, or null. */
    public byte[] key(int row) {
        return keys.getObject(row);
    }

    /** A copy of the value, or null; {@link #root()} reads it in place. */
    public byte[] value(int row) {
        return values.getObject(row);
    }

    /** Key and value bytes of a row, without copying them. */
    public int sizeInBytes(int row) {
        return (keys.isNull(row) ? 0 : keys.getValueLength(row))
                + (values.isNull(row) ? 0 : values.getValueLength(row));
    }

    public List<RecordHeader> headers(int row) {
        ListVector list = (ListVector) root().getVector("headers");
        StructVector entries = (StructVector) list.getDataVector();
        VarCharVector keys = (VarCharVector) entries.getChild("key");
        VarBinaryVector values = (VarBinaryVector) entries.getChild("value");
        List<RecordHeader> headers = new ArrayList<>();
        for (int i = list.getElementStartIndex(row); i < list.getElementEndIndex(row); i++) {
            headers.add(
                    new RecordHeader(
                            new String(keys.get(i), StandardCharsets.UTF_8), values.get(i)));
        }
        return headers;
    }
}
