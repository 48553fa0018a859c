package dev.sluice.flink.generation;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link PatternGenerator}'s bytes, computed at a set speed by producers that can be slow, stall or
 * hang, for the tests of constant speed through stragglers (docs/generation.md, "Speculative
 * duplicates"). Parameters: {@code chunkMillis}, how long each chunk computes; {@code slowProducer}
 * and {@code slowFactor}, a producer (subtask index) that computes that many times slower; {@code
 * stallTask} and {@code stallMillis}, a task index at which the first producer to compute it stops
 * that long, mid-task, once per job; {@code hangTask}, one at which the first producer to compute
 * it stops until {@link #releaseHung()}.
 *
 * <p>It counts the bytes each producer computed, per job: producers of a MiniCluster share the
 * test's JVM.
 */
public final class StragglerGenerator implements ChunkGenerator {
    private static final Map<String, Map<Integer, AtomicLong>> COMPUTED = new ConcurrentHashMap<>();
    private static final Set<String> STOPPED = ConcurrentHashMap.newKeySet();
    private static volatile CountDownLatch hung = new CountDownLatch(1);

    private final PatternGenerator pattern = new PatternGenerator();
    private String job;
    private long chunkMillis;
    private String stallTask;
    private long stallMillis;
    private boolean stallThenFail;
    private String hangTask;
    private int producer;

    /** The bytes each producer computed for {@code job}, by subtask index. */
    public static Map<Integer, AtomicLong> computed(String job) {
        return COMPUTED.computeIfAbsent(job, j -> new ConcurrentHashMap<>());
    }

    /** Lets every producer stopped at a {@code hangTask} go on, and arms the next hang. */
    public static void releaseHung() {
        hung.countDown();
        hung = new CountDownLatch(1);
    }

    @Override
    public void preload(JobContext context) throws InterruptedException {
        pattern.preload(context);
        Map<String, String> parameters = context.parameters();
        job = context.jobId();
        chunkMillis = Long.parseLong(parameters.getOrDefault("chunkMillis", "0"));
        if (Integer.toString(context.producer()).equals(parameters.get("slowProducer"))) {
            chunkMillis *= Long.parseLong(parameters.getOrDefault("slowFactor", "4"));
        }
        stallTask = parameters.getOrDefault("stallTask", "");
        stallMillis = Long.parseLong(parameters.getOrDefault("stallMillis", "0"));
        stallThenFail = Boolean.parseBoolean(parameters.getOrDefault("stallThenFail", "false"));
        hangTask = parameters.getOrDefault("hangTask", "");
        producer = context.producer();
        computed(job).computeIfAbsent(producer, p -> new AtomicLong());
    }

    @Override
    public InputStream compute(ComputeTask task) throws Exception {
        InputStream bytes = pattern.compute(task);
        String index = Integer.toString(task.index());
        boolean stalls = index.equals(stallTask) && STOPPED.add(job + "/stall");
        boolean hangs = index.equals(hangTask) && STOPPED.add(job + "/hang");
        CountDownLatch release = hung;
        AtomicLong counted = computed(job).get(producer);
        return new InputStream() {
            private int chunk;

            @Override
            public int read() throws IOException {
                return bytes.read();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                try {
                    TimeUnit.MILLISECONDS.sleep(chunkMillis);
                    // At the second chunk: mid-task, the first went out.
                    if (chunk == 1 && stalls) {
                        TimeUnit.MILLISECONDS.sleep(stallMillis);
                        if (stallThenFail) {
                            throw new ProducerLost(task.id());
                        }
                    }
                    if (chunk == 1 && hangs) {
                        release.await();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("computing " + task.id());
                }
                chunk++;
                int n = bytes.read(b, off, len);
                if (n > 0) {
                    counted.addAndGet(n);
                }
                return n;
            }
        };
    }

    /** Not an Exception, which would fail the task alone: it fails the producer's Flink task. */
    static final class ProducerLost extends Error {
        ProducerLost(String task) {
            super("the producer computing " + task + " is lost");
        }
    }
}
