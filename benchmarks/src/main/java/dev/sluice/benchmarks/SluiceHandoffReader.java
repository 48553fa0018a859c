package dev.sluice.benchmarks;

import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.SegmentObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The Java side of the Sluice handoff: reads a segment to its end ({@link MeasuredSegmentRead},
 * zero-copy) and touches every record: its Kafka offset (one long per record) and every byte of its
 * value.
 *
 * <p>Arguments: segment name, warm-up records.
 */
public final class SluiceHandoffReader {
    private SluiceHandoffReader() {}

    /** Reads objects and keeps the tally: records, value bytes, and the digest of both columns. */
    private static final class Tally extends MeasuredSegmentRead.ObjectTask {
        private final VectorSchemaRoot root;
        private final ArrowBatchReader batches;
        private final BigIntVector offsets;
        private final VarBinaryVector values;
        private final UnsafeBuffer view = new UnsafeBuffer(0, 0);

        Tally(ArrowBatchReader batches) {
            this.batches = batches;
            // The reader loads every object into this same root: its vectors stay the same.
            this.root = batches.root();
            this.offsets = (BigIntVector) root.getVector("offset");
            this.values = (VarBinaryVector) root.getVector("value");
        }

        @Override
        void read(SegmentObject object) throws Exception {
            batches.load(object);
            int rows = root.getRowCount();
            // The offsets are little-endian longs back to back: their sum is Probe.sum's.
            view.wrap(offsets.getDataBuffer().memoryAddress(), rows * BigIntVector.TYPE_WIDTH);
            checksum += Probe.sum(view, 0, rows * BigIntVector.TYPE_WIDTH);
            // The values lie back to back in one data buffer too: summing it in one pass touches
            // exactly the value bytes of every row.
            int first = values.getStartOffset(0);
            int length = values.getEndOffset(rows - 1) - first;
            view.wrap(values.getDataBuffer().memoryAddress() + first, length);
            checksum += Probe.sum(view, 0, length);
            records += rows;
            bytes += length;
            object.release();
        }
    }

    public static void main(String[] args) throws Exception {
        String segment = args[0];
        long warmup = Long.parseLong(args[1]);
        MeasuredSegmentRead.run(segment, warmup, batches -> new Tally(batches));
    }
}
