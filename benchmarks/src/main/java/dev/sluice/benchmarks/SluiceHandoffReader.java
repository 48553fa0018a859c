package dev.sluice.benchmarks;

import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.SegmentObject;
import dev.sluice.client.segment.SegmentReader;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.arrow.memory.ArrowBuf;
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

    public static void main(String[] args) throws Exception {
        String segment = args[0];
        long warmup = Long.parseLong(args[1]);
        long records = 0;
        long bytes = 0;
        long checksum = 0;
        long startNanos = 0;
        long cpuStart = 0;
        UnsafeBuffer view = new UnsafeBuffer(0, 0);
        try (BufferAllocator allocator = new RootAllocator();
                SegmentReader reader = SegmentReader.open(segment);
                ArrowBatchReader batches = new ArrowBatchReader(reader.schema(), allocator)) {
            SegmentObject object;
            while ((object = reader.take()) != null) {
                if (object.firstOffset() == warmup) {
                    startNanos = System.nanoTime();
                    cpuStart = Probe.processCpuNanos();
                    records = 0;
                    bytes = 0;
                }
                VectorSchemaRoot root = batches.load(object);
                int rows = root.getRowCount();
                ArrowBuf offsets = ((BigIntVector) root.getVector("offset")).getDataBuffer();
                for (int row = 0; row < rows; row++) {
                    checksum += offsets.getLong((long) row * BigIntVector.TYPE_WIDTH);
                }
                // The values lie back to back in one data buffer: summing it in one pass touches
                // exactly the value bytes of every row.
                VarBinaryVector values = (VarBinaryVector) root.getVector("value");
                int first = values.getStartOffset(0);
                int length = values.getEndOffset(rows - 1) - first;
                view.wrap(values.getDataBuffer().memoryAddress() + first, length);
                checksum += Probe.sum(view, 0, length);
                records += rows;
                bytes += length;
                object.release();
            }
        }
        long endNanos = System.nanoTime();
        Probe.report(
                startNanos,
                endNanos,
                Probe.processCpuNanos() - cpuStart,
                "records=" + records + " bytes=" + bytes + " checksum=" + checksum);
    }
}
