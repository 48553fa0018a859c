package dev.sluice.benchmarks;

import dev.sluice.flink.generation.ChunkGenerator;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.JobContext;
import dev.sluice.printing.RipGenerator;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The printing demo's raster processor with one of the faults figure's faults on one producer
 * (benchmarks/README.md, "Faults"). Parameters besides the processor's: {@value #FAULT}, {@code
 * slow} or {@code kill}; {@value #PRODUCER}, the subtask index of the faulty producer. {@code slow}
 * computes {@value #SLOW_FACTOR} times slower for the whole job: after each piece it read, the
 * producer waits three times as long as the piece took. {@code kill} fails the producer's Flink
 * task, once per job, when it starts its first task past the middle of its stream: Flink restores
 * the producer from its checkpoint, as it does one whose TaskManager was lost.
 */
public final class FaultyRipGenerator implements ChunkGenerator {
    static final String FAULT = "fault";
    static final String PRODUCER = "faultProducer";
    static final int SLOW_FACTOR = 4;

    private static final Set<String> KILLED = ConcurrentHashMap.newKeySet();

    private final RipGenerator rip = new RipGenerator();
    private String fault = "";
    private String jobId;

    @Override
    public void preload(JobContext job) throws IOException {
        rip.preload(job);
        Map<String, String> parameters = job.parameters();
        jobId = job.jobId();
        if (Integer.toString(job.producer()).equals(parameters.get(PRODUCER))) {
            fault = parameters.getOrDefault(FAULT, "");
        }
    }

    @Override
    public InputStream compute(ComputeTask task) {
        InputStream bytes = rip.compute(task);
        if (fault.equals("kill")
                && task.index() >= ComputeTask.count(task.job(), task.streamSpec()) / 2
                && KILLED.add(jobId)) {
            throw new ProducerKilled(task.id());
        }
        return fault.equals("slow") ? new Slowed(bytes) : bytes;
    }

    @Override
    public void close() throws Exception {
        rip.close();
    }

    /** Not an Exception, which fails the task alone: an Error fails the producer's Flink task. */
    static final class ProducerKilled extends Error {
        ProducerKilled(String task) {
            super("the benchmark killed the producer at " + task);
        }
    }

    /** The bytes of a task, each piece taking {@link #SLOW_FACTOR} times as long to come. */
    private static final class Slowed extends FilterInputStream {
        Slowed(InputStream bytes) {
            super(bytes);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            long start = System.nanoTime();
            int n = super.read(b, off, len);
            try {
                TimeUnit.NANOSECONDS.sleep((SLOW_FACTOR - 1) * (System.nanoTime() - start));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("slowed producer interrupted");
            }
            return n;
        }
    }
}
