package dev.sluice.flink.generation;

import java.io.InputStream;

/**
 * A generator whose bytes are a function of their place in the stream, so readers can check every
 * byte: byte {@code k} of stream {@code s} is {@link #byteAt(String, long)}. Parameter {@code
 * failAt}: a task index that throws instead, to test failures; {@code short}: a task index that
 * gives one byte too few; {@code computeMillis}: how long each task computes before its first byte,
 * standing for a generator that costs its producer time; {@code preloadMillis}: how long the
 * preload takes, standing for one that reads its inputs first.
 */
public final class PatternGenerator implements ChunkGenerator {
    private String failAt = "";
    private String shortTask = "";
    private long computeMillis;

    @Override
    public void preload(JobContext job) throws InterruptedException {
        Thread.sleep(Long.parseLong(job.parameters().getOrDefault("preloadMillis", "0")));
        failAt = job.parameters().getOrDefault("failAt", "");
        shortTask = job.parameters().getOrDefault("short", "");
        computeMillis = Long.parseLong(job.parameters().getOrDefault("computeMillis", "0"));
    }

    public static byte byteAt(String stream, long k) {
        return (byte) (k * 31 + stream.hashCode());
    }

    @Override
    public InputStream compute(ComputeTask task) throws InterruptedException {
        Thread.sleep(computeMillis);
        if (Integer.toString(task.index()).equals(failAt)) {
            throw new IllegalStateException("no ink for task " + task.index());
        }
        long length =
                Integer.toString(task.index()).equals(shortTask)
                        ? task.length() - 1
                        : task.length();
        return new InputStream() {
            private long next;

            @Override
            public int read() {
                return next < length ? byteAt(task.stream(), task.offset() + next++) & 0xff : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (next >= length) {
                    return -1;
                }
                int n = (int) Math.min(len, length - next);
                for (int i = 0; i < n; i++) {
                    b[off + i] = byteAt(task.stream(), task.offset() + next++);
                }
                return n;
            }
        };
    }
}
