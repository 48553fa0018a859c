package dev.sluice.flink.generation.scheduler;

import dev.sluice.client.job.JobSpecJson;
import dev.sluice.client.job.JobState;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import dev.sluice.flink.generation.split.ComputeTaskSplitSerializer;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Version 2, big-endian; counts are ints, strings modified UTF-8. Jobs: count, then per job the
 * spec as JSON (int length, UTF-8), the state name, the next tasks (count, stream and index each),
 * the returned tasks (count, each as {@link ComputeTaskSplitSerializer#writeTask} writes it,
 * without the transport, which is decided again when the task goes out), the ready streams (count,
 * names), the tasks handed out and those handed out on their output location's host (ints). Then
 * the ended jobs (count, ids) and the positions (count, "topic-partition" and offset each).
 *
 * <p>Version 1 is version 2 without the two task counts; it is still read, with both counts 0, so
 * that a scheduler checkpointed by an older build restores (docs/generation.md, "State formats").
 */
@Internal
public final class GenerationStateSerializer implements SimpleVersionedSerializer<GenerationState> {
    public static final int VERSION = 2;

    /** The first format, without the task counts. */
    static final int VERSION_1 = 1;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(GenerationState state) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(state.jobs().size());
            for (GenerationState.Job job : state.jobs()) {
                byte[] spec = JobSpecJson.write(job.spec()).getBytes(StandardCharsets.UTF_8);
                out.writeInt(spec.length);
                out.write(spec);
                out.writeUTF(job.state().name());
                out.writeInt(job.nextTask().size());
                for (var next : job.nextTask().entrySet()) {
                    out.writeUTF(next.getKey());
                    out.writeInt(next.getValue());
                }
                out.writeInt(job.returned().size());
                for (ComputeTaskSplit split : job.returned()) {
                    ComputeTaskSplitSerializer.writeTask(split, out);
                }
                writeStrings(job.ready(), out);
                out.writeInt(job.tasksHandedOut());
                out.writeInt(job.tasksHandedOutLocally());
            }
            writeStrings(state.finishedJobs(), out);
            out.writeInt(state.positions().size());
            for (var position : state.positions().entrySet()) {
                out.writeUTF(position.getKey());
                out.writeLong(position.getValue());
            }
        }
        return bytes.toByteArray();
    }

    @Override
    public GenerationState deserialize(int version, byte[] serialized) throws IOException {
        if (version != VERSION && version != VERSION_1) {
            throw new IOException(
                    "scheduler state version "
                            + version
                            + ": this build reads "
                            + VERSION_1
                            + " and "
                            + VERSION);
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
            int jobCount = count(in);
            List<GenerationState.Job> jobs = new ArrayList<>();
            for (int j = 0; j < jobCount; j++) {
                byte[] spec = new byte[count(in)];
                in.readFully(spec);
                JobState state = JobState.valueOf(in.readUTF());
                Map<String, Integer> next = new HashMap<>();
                for (int i = count(in); i > 0; i--) {
                    next.put(in.readUTF(), in.readInt());
                }
                List<ComputeTaskSplit> returned = new ArrayList<>();
                for (int i = count(in); i > 0; i--) {
                    returned.add(ComputeTaskSplitSerializer.readTask(in));
                }
                Set<String> ready = readStrings(in);
                // Version 1 did not keep the counts: 0, and the job completes without a locality.
                int handedOut = version == VERSION_1 ? 0 : in.readInt();
                int handedOutLocally = version == VERSION_1 ? 0 : in.readInt();
                jobs.add(
                        new GenerationState.Job(
                                JobSpecJson.parse(spec),
                                state,
                                next,
                                returned,
                                ready,
                                handedOut,
                                handedOutLocally));
            }
            Set<String> finished = readStrings(in);
            Map<String, Long> positions = new HashMap<>();
            for (int i = count(in); i > 0; i--) {
                positions.put(in.readUTF(), in.readLong());
            }
            if (in.available() > 0) {
                throw new IOException(in.available() + " bytes after the scheduler state");
            }
            return new GenerationState(jobs, finished, positions);
        } catch (RuntimeException e) {
            throw new IOException("corrupt scheduler state: " + e.getMessage(), e);
        }
    }

    private static void writeStrings(Set<String> strings, DataOutputStream out) throws IOException {
        out.writeInt(strings.size());
        for (String s : strings) {
            out.writeUTF(s);
        }
    }

    private static Set<String> readStrings(DataInputStream in) throws IOException {
        Set<String> strings = new HashSet<>();
        for (int i = count(in); i > 0; i--) {
            strings.add(in.readUTF());
        }
        return strings;
    }

    private static int count(DataInputStream in) throws IOException {
        int count = in.readInt();
        if (count < 0 || count > in.available()) {
            throw new IOException("corrupt scheduler state: a count of " + count);
        }
        return count;
    }
}
