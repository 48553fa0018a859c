package dev.sluice.benchmarks;

import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.SegmentObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The Java side of the Python reader benchmark (benchmarks/README.md, "Python reader"): reads a
 * segment to its end ({@link MeasuredSegmentRead}, zero-copy), doing the task the Python reader
 * does per object: {@code sum} adds up every value byte (8-byte words over the value buffer, where
 * the values lie back to back), {@code count} adds up the rows.
 *
 * <p>Arguments: segment name, warm-up records, task.
 */
public final class SegmentTaskReader {
    private SegmentTaskReader() {}

    /** Loads objects and does the task: records, value bytes summed, and the sum. */
    private static final class Task extends MeasuredSegmentRead.ObjectTask {
        private final ArrowBatchReader batches;
        private final VectorSchemaRoot root;
        private final VarBinaryVector values;
        private final boolean sum;
        private final UnsafeBuffer view = new UnsafeBuffer(0, 0);

        Task(ArrowBatchReader batches, boolean sum) {
            this.batches = batches;
            this.root = batches.root();
            this.values = (VarBinaryVector) root.getVector("value");
            this.sum = sum;
        }

        @Override
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
        MeasuredSegmentRead.run(segment, warmup, batches -> new Task(batches, sum));
    }
}
