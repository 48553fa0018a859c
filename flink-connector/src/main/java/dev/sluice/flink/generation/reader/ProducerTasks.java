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
 * the scheduler dropped, and the failures of tasks not yet reported.
 */
final class ProducerTasks {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerTasks.class);

    private final Map<String, ChunkGenerator> generators = new ConcurrentHashMap<>();
    private final Set<String> dropped = ConcurrentHashMap.newKeySet();
    private final Map<String, String> failures = new ConcurrentHashMap<>();

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
            made.preload(new JobContext(job));
            generator = made;
            generators.put(job.id(), generator);
        }
        return generator;
    }

    boolean isDropped(String jobId) {
        return dropped.contains(jobId);
    }

    void drop(String jobId) {
        dropped.add(jobId);
        ChunkGenerator generator = generators.remove(jobId);
        if (generator != null) {
            close(jobId, generator);
        }
    }

    void failed(String taskId, String failure) {
        failures.put(taskId, failure);
    }

    /** The task's failure, "" if it had none. */
    String takeFailure(String taskId) {
        String failure = failures.remove(taskId);
        return failure == null ? "" : failure;
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
