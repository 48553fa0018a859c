package dev.sluice.flink.generation.split;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.Transport;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.TestJobs;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The task split's format: docs/generation.md, "State formats". */
class ComputeTaskSplitSerializerTest {
    private final ComputeTaskSplitSerializer serializer = new ComputeTaskSplitSerializer();

    /** One stream, 4 tasks of 2 chunks. */
    private static final JobSpec JOB =
            TestJobs.job("print-7", 1, 8 * 1024, 2 * 1024, 1024, Object.class, Map.of("k", "v"));

    private static final ComputeTask TASK = ComputeTask.of(JOB, JOB.streams().get(0), 1);

    /** The task as version 1 laid it out: what builds before the transport checkpointed. */
    private static byte[] version1(ComputeTaskSplit split) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            ComputeTaskSplitSerializer.writeTask(split, out);
        }
        return bytes.toByteArray();
    }

    @Test
    void version2IsTheTaskThenItsTransport() throws IOException {
        ComputeTaskSplit local = new ComputeTaskSplit(TASK, 1, Transport.LOCAL);
        byte[] task = version1(local);

        byte[] written = serializer.serialize(local);

        assertThat(serializer.getVersion()).isEqualTo(2);
        assertThat(written).hasSize(task.length + 1).startsWith(task);
        assertThat(written[task.length]).isEqualTo((byte) 1);
        assertThat(serializer.serialize(new ComputeTaskSplit(TASK, 1, Transport.KAFKA)))
                .endsWith((byte) 0);
    }

    @Test
    void bothTransportsRoundTrip() throws IOException {
        for (Transport transport : new Transport[] {Transport.KAFKA, Transport.LOCAL}) {
            ComputeTaskSplit split = new ComputeTaskSplit(TASK, 2, transport);

            assertThat(serializer.deserialize(2, serializer.serialize(split))).isEqualTo(split);
        }
    }

    @Test
    void version1IsReadAsAKafkaTask() throws IOException {
        ComputeTaskSplit read = serializer.deserialize(1, version1(new ComputeTaskSplit(TASK, 1)));

        assertThat(read.transport()).isEqualTo(Transport.KAFKA);
        assertThat(read.task()).isEqualTo(TASK);
        assertThat(read.emittedChunks()).isEqualTo(1);
    }

    @Test
    void unknownVersionsTransportsAndTrailingBytesAreRefused() throws IOException {
        byte[] current = serializer.serialize(new ComputeTaskSplit(TASK, 1, Transport.LOCAL));
        for (int version : new int[] {0, 3}) {
            assertThatThrownBy(() -> serializer.deserialize(version, current))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("version " + version);
        }
        byte[] badTransport = current.clone();
        badTransport[badTransport.length - 1] = 7;
        assertThatThrownBy(() -> serializer.deserialize(2, badTransport))
                .isInstanceOf(IOException.class)
                .hasMessage("corrupt task split: transport 7 (0 KAFKA or 1 LOCAL)");
        byte[] longer = Arrays.copyOf(current, current.length + 1);
        assertThatThrownBy(() -> serializer.deserialize(2, longer))
                .isInstanceOf(IOException.class)
                .hasMessage("1 bytes after the task split");
        assertThatThrownBy(() -> serializer.deserialize(1, current))
                .as("a version-2 split read as version 1 has a byte too many")
                .isInstanceOf(IOException.class)
                .hasMessage("1 bytes after the task split");
    }

    @Test
    void aSplitIsKafkaOrLocalNeverAuto() {
        assertThatThrownBy(() -> new ComputeTaskSplit(TASK, 0, Transport.AUTO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("print-7/c0/1");
        assertThat(new ComputeTaskSplit(TASK, 0).transport()).isEqualTo(Transport.KAFKA);
    }
}
