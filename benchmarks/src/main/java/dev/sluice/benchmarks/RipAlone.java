package dev.sluice.benchmarks;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.JobContext;
import dev.sluice.printing.RipGenerator;
import java.io.IOException;
import java.io.InputStream;

/**
 * The raster image processor alone on this thread (docs/printing.md), the local way's
 * compute-enabled anchor (benchmarks/README.md, Transport): no Flink, no Kafka, no daemon; the
 * job's generator, preloaded as a producer preloads it, computes every task of every stream in
 * turn, and each task's bytes are read in chunks of the stream's chunk size, as a producer reads
 * them to send.
 */
final class RipAlone {
    private RipAlone() {}

    /** Computes all of {@code job} (compute enabled); its preload is in the time, as a job's is. */
    static TimedBytes measure(JobSpec job) throws IOException {
        double cpuBefore = MachineCpu.busySeconds();
        long start = System.nanoTime();
        RipGenerator rip = new RipGenerator();
        rip.preload(new JobContext(job, 0));
        long bytes = 0;
        for (StreamSpec stream : job.streams()) {
            byte[] chunk = new byte[stream.chunkSizeBytes()];
            for (int index = 0; index < ComputeTask.count(job, stream); index++) {
                try (InputStream task = rip.compute(ComputeTask.of(job, stream, index))) {
                    for (int read; (read = task.readNBytes(chunk, 0, chunk.length)) > 0; ) {
                        bytes += read;
                    }
                }
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        return new TimedBytes(bytes, seconds, MachineCpu.busySeconds() - cpuBefore);
    }
}
