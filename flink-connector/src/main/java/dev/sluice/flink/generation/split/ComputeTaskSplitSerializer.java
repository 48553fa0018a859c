package dev.sluice.flink.generation.split;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobSpecJson;
import dev.sluice.flink.generation.ComputeTask;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Version 1, big-endian: the job spec as JSON (int length, UTF-8 bytes: a task carries its job, so
 * a producer needs nothing else to compute it), the stream name (modified UTF-8), the task index
 * and the chunks already emitted (ints). Offset and length follow from the spec.
 */
@Internal
public final class ComputeTaskSplitSerializer
        implements SimpleVersionedSerializer<ComputeTaskSplit> {
    public static final int VERSION = 1;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(ComputeTaskSplit split) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            write(split, out);
        }
        return bytes.toByteArray();
    }

    @Override
    public ComputeTaskSplit deserialize(int version, byte[] serialized) throws IOException {
        if (version != VERSION) {
            throw new IOException(
                    "task split version " + version + ": this build reads " + VERSION);
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
            ComputeTaskSplit split = read(in);
            if (in.available() > 0) {
                throw new IOException(in.available() + " bytes after the task split");
            }
            return split;
        }
    }

    public static void write(ComputeTaskSplit split, DataOutput out) throws IOException {
        byte[] spec = JobSpecJson.write(split.task().job()).getBytes(StandardCharsets.UTF_8);
        out.writeInt(spec.length);
        out.write(spec);
        out.writeUTF(split.task().stream());
        out.writeInt(split.task().index());
        out.writeInt(split.emittedChunks());
    }

    public static ComputeTaskSplit read(DataInput in) throws IOException {
        int length = in.readInt();
        if (length < 2 || length > 64 << 20) {
            throw new IOException("corrupt task split: a job spec of " + length + " bytes");
        }
        byte[] spec = new byte[length];
        in.readFully(spec);
        String stream = in.readUTF();
        int index = in.readInt();
        int emitted = in.readInt();
        try {
            JobSpec job = JobSpecJson.parse(spec);
            var streamSpec =
                    job.stream(stream)
                            .orElseThrow(
                                    () ->
                                            new IOException(
                                                    "corrupt task split: no stream " + stream));
            if (index < 0 || index >= ComputeTask.count(job, streamSpec)) {
                throw new IOException("corrupt task split: task " + index + " of " + stream);
            }
            return new ComputeTaskSplit(ComputeTask.of(job, streamSpec, index), emitted);
        } catch (IllegalArgumentException e) {
            throw new IOException("corrupt task split: " + e.getMessage(), e);
        }
    }
}
