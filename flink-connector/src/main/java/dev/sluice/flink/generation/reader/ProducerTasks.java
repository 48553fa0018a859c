package dev.sluice.flink.generation.reader;

import dev.sluice.client.job.JobSpec;
import dev.sluice.flink.generation.ChunkGenerator;
import dev.sluice.flink.generation.JobContext;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a producer keeps across its tasks, shared by the task thread and the fetcher: one generator
 * per job, made and preloaded at the job's first task (docs/generation.md, "A generator"), the jobs
 * and tasks the scheduler dropped, and how the tasks not yet reported ended.
 */
final class ProducerTasks {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerTasks.class);

    /**
     * How a task ended: its failure ("" if none), the bytes it emitted, whether it was dropped, how
     * long it waited for its job's generator to be made and preloaded.
     */
    record Outcome(String failure, long bytesEmitted, boolean dropped, long preloadMillis) {}

    private final int producer;
    private final Map<String, ChunkGenerator> generators = new ConcurrentHashMap<>();
    private final Set<String> dropped = ConcurrentHashMap.newKeySet();
    private final Set<String> droppedTasks = ConcurrentHashMap.newKeySet();
    private final Map<String, Outcome> outcomes = new ConcurrentHashMap<>();

    /** The tasks of producer {@code producer}, its subtask index. */
    ProducerTasks(int producer) {
        this.producer = producer;
    }

    ChunkGenerator generator(JobSpec job) throws Exception {
        ChunkGenerator generator = generators.get(job.id());
        if (generator == null) {
            String className = job.generator().className();
            ClassLoader loader = Thread.currentThread().getContextClassLoader();
            Object instance =
                    Class.forName(className, true, loader).getDeclaredConstructor().newInstance();
            if (!(instance instanceof ChunkGenerator made)) {
                throw new IllegalArgumentException(className + " is not a ChunkGenerator");
            }
            made.preload(new JobContext(job, producer));
            generator = made;
            generators.put(job.id(), generator);
        }
        return generator;
    }

    /** Whether the task's job, or the task itself, was dropped by the scheduler. */
    boolean isDropped(String jobId, String taskId) {
        return dropped.contains(jobId) || droppedTasks.contains(taskId);
    }

    /** Another copy of the task won (docs/generation.md, "Speculative duplicates"). */
    void dropTask(String taskId) {
        droppedTasks.add(taskId);
    }

    void drop(String jobId) {
        dropped.add(jobId);
        ChunkGenerator generator = generators.remove(jobId);
        if (generator != null) {
            close(jobId, generator);
        }
    }

    /** The task was handed out again: a drop of it that came before no longer holds. */
    void undrop(String taskId) {
        droppedTasks.remove(taskId);
    }

    void ended(String taskId, Outcome outcome) {
        outcomes.put(taskId, outcome);
        droppedTasks.remove(taskId);
    }

    /** How the task ended; a task that ended unreported counts as dropped. */
    Outcome takeOutcome(String taskId) {
        Outcome outcome = outcomes.remove(taskId);
        return outcome == null ? new Outcome("", 0, true, 0) : outcome;
    }

    void close() {
        generators.forEach(ProducerTasks::close);
        generators.clear();
    }

    private static void close(String jobId, ChunkGenerator generator) {
        try {
            generator.close();
        } catch (Exception e) {
            LOG.warn("closing the generator of job {}", jobId, e);
        }
    }
}
