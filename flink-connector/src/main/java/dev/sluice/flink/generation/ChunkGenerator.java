package dev.sluice.flink.generation;

import java.io.InputStream;
import org.apache.flink.annotation.PublicEvolving;

/**
 * The user code of a generation job: computes the bytes of a job's streams, one compute task at a
 * time. A producer (a GenerationSource reader) makes one instance per job it works on, from the
 * class named in the job's {@code generator} (public, with a public no-argument constructor), and
 * calls {@link #preload} once before its first task of that job (docs/generation.md, "A
 * generator").
 *
 * <p>The framework reads a task's stream to its end and cuts it into chunks of the stream's chunk
 * size, numbered so that the stream arrives in order however many producers compute it. A task is
 * computed again from its start after a failure, and the chunks already delivered are skipped, so a
 * task's bytes must depend only on the task: the same task, the same bytes.
 */
@PublicEvolving
public interface ChunkGenerator extends AutoCloseable {

    /** Fetches what every task of the job needs (its {@code inputs}); once per producer and job. */
    default void preload(JobContext job) throws Exception {}

    /**
     * The bytes of {@code task}: exactly {@link ComputeTask#length()} of them, in order. The stream
     * is read as chunks are sent, so a generator may compute lazily.
     */
    InputStream compute(ComputeTask task) throws Exception;

    @Override
    default void close() throws Exception {}
}
