package dev.sluice.benchmarks;

import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.SegmentObject;
import dev.sluice.client.segment.SegmentReader;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * A Java reader process's measured read of a segment, the same for every reader benchmark ({@link
 * SluiceHandoffReader}, {@link SegmentTaskReader}): it reads the segment to its end through {@link
 * SegmentReader} and {@link ArrowBatchReader}, zero-copy, doing the reader's task per object, and
 * reports through {@link Probe} the window from the object whose first offset is the warm-up count
 * (the writer ends an object there) to after the last release.
 */
final class MeasuredSegmentRead {
    private MeasuredSegmentRead() {}

    /** What a reader does with each object, and what it counts and reports. */
    abstract static class ObjectTask {
        long records;
        long bytes;
        long checksum;

        abstract void read(SegmentObject object) throws Exception;

        /** Forgets what the warm-up counted. */
        final void resetCounts() {
            records = 0;
            bytes = 0;
        }

        final String result() {
            return "records=" + records + " bytes=" + bytes + " checksum=" + checksum;
        }
    }

    static void run(String segment, long warmup, Function<ArrowBatchReader, ObjectTask> tasks)
            throws Exception {
        long startNanos;
        long cpuStart;
        ObjectTask task;
        try (BufferAllocator allocator = new RootAllocator();
                SegmentReader reader = SegmentReader.open(segment);
                ArrowBatchReader batches = new ArrowBatchReader(reader.schema(), allocator)) {
            task = tasks.apply(batches);
            // The warm-up ends here, outside the task's read: a branch in the hot code taken for
            // the first time at the boundary would make the JIT drop that code mid-measurement.
            SegmentObject object;
            while ((object = reader.take()) != null && object.firstOffset() != warmup) {
                task.read(object);
            }
            if (object == null) {
                throw new IllegalStateException("the stream ended before record " + warmup);
            }
            startNanos = System.nanoTime();
            cpuStart = Probe.processCpuNanos();
            task.resetCounts();
            do {
                task.read(object);
            } while ((object = reader.take()) != null);
        }
        long endNanos = System.nanoTime();
        Probe.report(startNanos, endNanos, Probe.processCpuNanos() - cpuStart, task.result());
    }
}
