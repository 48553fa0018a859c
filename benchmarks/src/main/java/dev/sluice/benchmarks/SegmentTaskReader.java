package dev.sluice.benchmarks;

import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.SegmentObject;
import dev.sluice.client.segment.SegmentReader;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The Java side of the Python reader benchmark (benchmarks/README.md, "Python reader"): reads a
 * segment to its end through {@link SegmentReader} and {@link ArrowBatchReader}, zero-copy, doing
 * the task the Python reader does per object: {@code sum} adds up every value byte (8-byte words
 * over the value buffer, where the values lie back to back), {@code count} adds up the rows.
 *
 * <p>Arguments: segment name, warm-up records, task. The measured window starts at the object whose
 * first offset is the warm-up count and ends after the last release, as {@link
 * SluiceHandoffReader}'s.
 */
public final class SegmentTaskReader {
    private SegmentTaskReader() {}

    /** Loads objects and does the task: records, value bytes summed, and the sum. */
    private static final class Task {
        private final ArrowBatchReader batches;
        private final VectorSchemaRoot root;
        private final VarBinaryVector values;
        private final boolean sum;
        private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
        long records;
        long bytes;
        long checksum;

        Task(ArrowBatchReader batches, boolean sum) {
            this.batches = batches;
            this.root = batches.root();
            this.values = (VarBinaryVector) root.getVector("value");
            this.sum = sum;
        }

        void read(SegmentObject object) throws Exception {
            batches.load(object);
            int rows = root.getRowCount();
            if (sum) {
                int first = values.getStartOffset(0);
                int length = values.getEndOffset(rows - 1) - first;
                view.wrap(values.getDataBuffer().memoryAddress() + first, length);
                checksum += Probe.sum(view, 0, length);
                bytes += length;
            }
            records += rows;
            object.release();
        }
    }

    public static void main(String[] args) throws Exception {
        String segment = args[0];
        long warmup = Long.parseLong(args[1]);
        boolean sum =
                switch (args[2]) {
                    case "sum" -> true;
                    case "count" -> false;
                    default -> throw new IllegalArgumentException("task: sum or count");
                };
        long startNanos;
        long cpuStart;
        Task task;
        try (BufferAllocator allocator = new RootAllocator();
                SegmentReader reader = SegmentReader.open(segment);
                ArrowBatchReader batches = new ArrowBatchReader(reader.schema(), allocator)) {
            task = new Task(batches, sum);
            // The warm-up ends here, outside Task.read, as in SluiceHandoffReader: for the JIT.
            SegmentObject object;
            while ((object = reader.take()) != null && object.firstOffset() != warmup) {
                task.read(object);
            }
            if (object == null) {
                throw new IllegalStateException("the stream ended before record " + warmup);
            }
            startNanos = System.nanoTime();
            cpuStart = Probe.processCpuNanos();
            task.records = 0;
            task.bytes = 0;
            do {
                task.read(object);
            } while ((object = reader.take()) != null);
        }
        long endNanos = System.nanoTime();
        Probe.report(
                startNanos,
                endNanos,
                Probe.processCpuNanos() - cpuStart,
                "records=" + task.records + " bytes=" + task.bytes + " checksum=" + task.checksum);
    }
}
