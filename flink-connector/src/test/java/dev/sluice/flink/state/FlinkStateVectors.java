package dev.sluice.flink.state;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.Transport;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.TestJobs;
import dev.sluice.flink.generation.scheduler.GenerationState;
import dev.sluice.flink.generation.scheduler.GenerationStateSerializer;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import dev.sluice.flink.generation.split.ComputeTaskSplitSerializer;
import dev.sluice.flink.source.enumerator.SluiceEnumeratorState;
import dev.sluice.flink.source.enumerator.SluiceEnumeratorStateSerializer;
import dev.sluice.flink.source.split.SluiceSplit;
import dev.sluice.flink.source.split.SluiceSplitSerializer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * The states pinned under {@code testdata/flink-state/} (docs/formats.md, "Flink state"). Every set
 * and map holds one entry: the records copy them into {@code Set.copyOf} and {@code Map.copyOf},
 * whose order changes from one JVM to the next, and a golden file needs one order.
 *
 * <p>{@link #main} writes the files of the versions this build writes; run it only when a format
 * gets a new version, and keep the files of the older ones, which are what older builds
 * checkpointed ({@code generation-state-v1.bin} is version 1 as the scheduler wrote it before the
 * task counts, {@code compute-task-split-v1.bin} a task split before the transport, read as a KAFKA
 * task).
 */
final class FlinkStateVectors {
    static final Path DIRECTORY = Path.of("..", "testdata", "flink-state");

    private static final SluiceSplit BOUNDED =
            new SluiceSplit(new TopicPartition("orders", 3), 17, 99, "10.0.0.7");
    // Not ASCII: modified UTF-8 is what the topic is written in.
    private static final SluiceSplit UNBOUNDED =
            new SluiceSplit(
                    new TopicPartition("ünïcode-topic", 0), 0, SluiceSplit.NO_STOPPING_OFFSET, "");

    /** One stream, 4 tasks of 2 chunks. */
    private static final JobSpec JOB =
            TestJobs.job("print-7", 1, 8 * 1024, 2 * 1024, 1024, Object.class, Map.of("k", "v"));

    private static final ComputeTaskSplit TASK =
            new ComputeTaskSplit(ComputeTask.of(JOB, JOB.streams().get(0), 1), 1);

    static final List<FlinkStateVector<?>> ALL =
            List.of(
                    new FlinkStateVector<>(
                            "sluice-split-v1.bin", new SluiceSplitSerializer(), 1, BOUNDED),
                    new FlinkStateVector<>(
                            "sluice-split-unbounded-v1.bin",
                            new SluiceSplitSerializer(),
                            1,
                            UNBOUNDED),
                    new FlinkStateVector<>(
                            "sluice-enumerator-state-v1.bin",
                            new SluiceEnumeratorStateSerializer(),
                            1,
                            new SluiceEnumeratorState(
                                    Set.of(new TopicPartition("orders", 2)),
                                    List.of(BOUNDED, UNBOUNDED),
                                    true)),
                    new FlinkStateVector<>(
                            "compute-task-split-v1.bin", new ComputeTaskSplitSerializer(), 1, TASK),
                    new FlinkStateVector<>(
                            "compute-task-split-v2.bin",
                            new ComputeTaskSplitSerializer(),
                            2,
                            new ComputeTaskSplit(TASK.task(), 1, Transport.LOCAL)),
                    new FlinkStateVector<>(
                            "generation-state-v1.bin",
                            new GenerationStateSerializer(),
                            1,
                            generationState(0, 0)),
                    new FlinkStateVector<>(
                            "generation-state-v2.bin",
                            new GenerationStateSerializer(),
                            2,
                            generationState(3, 2)));

    private FlinkStateVectors() {}

    /** A scheduler with one running job, a task given back, an ended job and a read position. */
    private static GenerationState generationState(int handedOut, int handedOutLocally) {
        return new GenerationState(
                List.of(
                        new GenerationState.Job(
                                JOB,
                                JobState.RUNNING,
                                Map.of("c0", 3),
                                List.of(TASK),
                                Set.of("c0"),
                                handedOut,
                                handedOutLocally)),
                Set.of("print-6"),
                Map.of("sluice-jobs-0", 12L));
    }

    /**
     * Writes the current versions' files into {@code args[0]}, or {@link #DIRECTORY}; the test
     * classpath is needed: {@code java -cp flink-connector/target/test-classes:...
     * dev.sluice.flink.state.FlinkStateVectors testdata/flink-state}.
     */
    public static void main(String[] args) throws IOException {
        Path directory = args.length > 0 ? Path.of(args[0]) : DIRECTORY;
        Files.createDirectories(directory);
        for (FlinkStateVector<?> vector : ALL) {
            if (vector.isCurrent()) {
                Files.write(directory.resolve(vector.file()), vector.write());
            }
        }
    }
}
