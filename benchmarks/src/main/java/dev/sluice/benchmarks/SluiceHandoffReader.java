package dev.sluice.benchmarks;

import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.SegmentObject;
import dev.sluice.client.segment.SegmentReader;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The Java side of the Sluice handoff: reads a segment to its end through {@link SegmentReader} and
 * {@link ArrowBatchReader}, zero-copy, and touches every record: its Kafka offset (one long per
 * record) and every byte of its value.
 *
 * <p>Arguments: segment name, warm-up records. The measured window starts at the object whose first
 * offset is the warm-up count (the writer ends an object there) and ends after the last release.
 */
public final class SluiceHandoffReader {
    private SluiceHandoffReader() {}

    /** Reads objects and keeps the tally: records, value bytes, and the digest of both columns. */
    private static final class Tally {
        private final VectorSchemaRoot root;
        private final ArrowBatchReader batches;
        private final BigIntVector offsets;
        private final VarBinaryVector values;
        private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
        long records;
        long bytes;
        long checksum;

        Tally(ArrowBatchReader batches) {
            this.batches = batches;
            // The reader loads every object into this same root: its vectors stay the same.
            this.root = batches.root();
            this.offsets = (BigIntVector) root.getVector("offset");
            this.values = (VarBinaryVector) root.getVector("value");
        }

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
        long startNanos;
        long cpuStart;
        Tally tally;
        try (BufferAllocator allocator = new RootAllocator();
                SegmentReader reader = SegmentReader.open(segment);
                ArrowBatchReader batches = new ArrowBatchReader(reader.schema(), allocator)) {
            tally = new Tally(batches);
            // The warm-up ends here, outside Tally.read: a branch in the hot code taken for the
            // first time at the boundary would make the JIT drop that code mid-measurement.
            SegmentObject object;
            while ((object = reader.take()) != null && object.firstOffset() != warmup) {
                tally.read(object);
            }
            if (object == null) {
                throw new IllegalStateException("the stream ended before record " + warmup);
            }
            startNanos = System.nanoTime();
            cpuStart = Probe.processCpuNanos();
            tally.records = 0;
            tally.bytes = 0;
            do {
                tally.read(object);
            } while ((object = reader.take()) != null);
        }
        long endNanos = System.nanoTime();
        Probe.report(
                startNanos,
                endNanos,
                Probe.processCpuNanos() - cpuStart,
                "records="
                        + tally.records
                        + " bytes="
                        + tally.bytes
                        + " checksum="
                        + tally.checksum);
    }
}
