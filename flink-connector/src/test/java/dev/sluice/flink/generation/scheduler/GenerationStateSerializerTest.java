package dev.sluice.flink.generation.scheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobSpecJson;
import dev.sluice.client.job.JobState;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.TestJobs;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import dev.sluice.flink.generation.split.ComputeTaskSplitSerializer;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The scheduler's checkpoint format: docs/generation.md, "State formats". */
class GenerationStateSerializerTest {
    private final GenerationStateSerializer serializer = new GenerationStateSerializer();

    /** One stream, 4 tasks of 2 chunks: one map, set and list entry each, so the order is fixed. */
    private static final JobSpec JOB =
            TestJobs.job("print-7", 1, 8 * 1024, 2 * 1024, 1024, Object.class, Map.of("k", "v"));

    private static final ComputeTaskSplit RETURNED =
            new ComputeTaskSplit(ComputeTask.of(JOB, JOB.streams().get(0), 1), 1);

    private static GenerationState state(int handedOut, int handedOutLocally) {
        return new GenerationState(
                List.of(
                        new GenerationState.Job(
                                JOB,
                                JobState.RUNNING,
                                Map.of("c0", 3),
                                List.of(RETURNED),
                                Set.of("c0"),
                                handedOut,
                                handedOutLocally)),
                Set.of("print-6"),
                Map.of("sluice-jobs-0", 12L));
    }

    /**
     * {@link #state} as each version lays it out, written here field by field: version 1 is what
     * older builds checkpointed, and must be read as they wrote it.
     */
    private static byte[] written(int version, int handedOut, int handedOutLocally)
            throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(1);
            byte[] spec = JobSpecJson.write(JOB).getBytes(StandardCharsets.UTF_8);
            out.writeInt(spec.length);
            out.write(spec);
            out.writeUTF("RUNNING");
            out.writeInt(1);
            out.writeUTF("c0");
            out.writeInt(3);
            out.writeInt(1);
            ComputeTaskSplitSerializer.writeTask(RETURNED, out);
            out.writeInt(1);
            out.writeUTF("c0");
            if (version >= 2) {
                out.writeInt(handedOut);
                out.writeInt(handedOutLocally);
            }
            out.writeInt(1);
            out.writeUTF("print-6");
            out.writeInt(1);
            out.writeUTF("sluice-jobs-0");
            out.writeLong(12);
        }
        return bytes.toByteArray();
    }

    @Test
    void version2WritesTheTaskCountsAfterEachJobsReadyStreams() throws IOException {
        assertThat(serializer.getVersion()).isEqualTo(2);
        assertThat(serializer.serialize(state(3, 2))).isEqualTo(written(2, 3, 2));
    }

    @Test
    void version2RoundTripsWithTheTaskCounts() throws IOException {
        JobSpec other = TestJobs.job("print-8", 2, 4096, 2048, 1024, Object.class, Map.of());
        GenerationState state =
                new GenerationState(
                        List.of(
                                state(7, 5).jobs().get(0),
                                new GenerationState.Job(
                                        other,
                                        JobState.ACCEPTED,
                                        Map.of("c0", 0, "c1", 0),
                                        List.of(),
                                        Set.of("c1"),
                                        0,
                                        0)),
                        Set.of("print-5", "print-6"),
                        Map.of("sluice-jobs-0", 12L, "sluice-progress-3", 40L));

        GenerationState read = serializer.deserialize(2, serializer.serialize(state));

        assertThat(read).isEqualTo(state);
        assertThat(read.jobs())
                .extracting(
                        GenerationState.Job::tasksHandedOut,
                        GenerationState.Job::tasksHandedOutLocally)
                .containsExactly(tuple(7, 5), tuple(0, 0));
    }

    @Test
    void version1IsStillReadWithTaskCountsOfZero() throws IOException {
        assertThat(serializer.deserialize(1, written(1, 0, 0))).isEqualTo(state(0, 0));
    }

    @Test
    void unknownVersionsAndCorruptTaskCountsAreRefused() throws IOException {
        byte[] current = serializer.serialize(state(3, 2));
        for (int version : new int[] {0, 3}) {
            assertThatThrownBy(() -> serializer.deserialize(version, current))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("version " + version);
        }
        assertThatThrownBy(() -> serializer.deserialize(2, written(2, 2, 3)))
                .as("more tasks handed out locally than at all")
                .isInstanceOf(IOException.class)
                .hasMessageContaining("corrupt");
        assertThatThrownBy(() -> serializer.deserialize(2, written(2, -1, 0)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("corrupt");
    }
}
