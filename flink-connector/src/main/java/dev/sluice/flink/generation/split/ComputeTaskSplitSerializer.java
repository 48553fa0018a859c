package dev.sluice.flink.generation.split;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobSpecJson;
import dev.sluice.client.job.Transport;
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
 * Version 2, big-endian: the task as version 1 wrote it, then the transport (a byte: 0 KAFKA, 1
 * LOCAL). The task: the job spec as JSON (int length, UTF-8 bytes: a task carries its job, so a
 * producer needs nothing else to compute it), the stream name (modified UTF-8), the task index and
 * the chunks already emitted (ints). Offset and length follow from the spec.
 *
 * <p>Version 1, the task alone, is still read, as a KAFKA task: every chunk went through Kafka
 * before the transport existed (docs/generation.md, "State formats").
 */
@Internal
public final class ComputeTaskSplitSerializer
        implements SimpleVersionedSerializer<ComputeTaskSplit> {
    public static final int VERSION = 2;

    /** The first format: the task without its transport. */
    static final int VERSION_1 = 1;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(ComputeTaskSplit split) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writeTask(split, out);
            out.writeByte(transportCode(split.transport()));
        }
        return bytes.toByteArray();
    }

    @Override
    public ComputeTaskSplit deserialize(int version, byte[] serialized) throws IOException {
        if (version != VERSION && version != VERSION_1) {
            throw new IOException(
                    "task split version "
                            + version
                            + ": this build reads "
                            + VERSION_1
                            + " and "
                            + VERSION);
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
            ComputeTaskSplit task = readTask(in);
            ComputeTaskSplit split =
                    version == VERSION_1
                            ? task
                            : new ComputeTaskSplit(
                                    task.task(), task.emittedChunks(), transport(in.readByte()));
            if (in.available() > 0) {
                throw new IOException(in.available() + " bytes after the task split");
            }
            return split;
        }
    }

    private static int transportCode(Transport transport) {
        return transport == Transport.LOCAL ? 1 : 0;
    }

    private static Transport transport(byte code) throws IOException {
        return switch (code) {
            case 0 -> Transport.KAFKA;
            case 1 -> Transport.LOCAL;
            default ->
                    throw new IOException(
                            "corrupt task split: transport " + code + " (0 KAFKA or 1 LOCAL)");
        };
    }

    /**
     * The task in the version-1 layout, without its transport: what the scheduler's checkpoint
     * keeps of a task given back, whose transport is decided again when it goes out (it may go to
     * another producer).
     */
    public static void writeTask(ComputeTaskSplit split, DataOutput out) throws IOException {
        byte[] spec = JobSpecJson.write(split.task().job()).getBytes(StandardCharsets.UTF_8);
        out.writeInt(spec.length);
        out.write(spec);
        out.writeUTF(split.task().stream());
        out.writeInt(split.task().index());
        out.writeInt(split.emittedChunks());
    }

    /** A task {@link #writeTask} wrote, as a KAFKA split. */
    public static ComputeTaskSplit readTask(DataInput in) throws IOException {
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
