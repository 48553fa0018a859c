package dev.sluice.flink.source.split;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.kafka.common.TopicPartition;

/**
 * Splits in checkpoints and on the wire to readers. Version 1: topic (modified UTF-8), partition
 * (int), starting offset, stopping offset (longs), leader host (modified UTF-8), big-endian.
 */
@Internal
public final class SluiceSplitSerializer implements SimpleVersionedSerializer<SluiceSplit> {
    public static final int VERSION = 1;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(SluiceSplit split) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            write(split, out);
        }
        return bytes.toByteArray();
    }

    @Override
    public SluiceSplit deserialize(int version, byte[] serialized) throws IOException {
        if (version != VERSION) {
            throw new IOException(
                    "split serializer version " + version + ": this build reads " + VERSION);
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
            return read(in);
        }
    }

    /** Also how the enumerator state writes its unassigned splits. */
    public static void write(SluiceSplit split, DataOutput out) throws IOException {
        out.writeUTF(split.partition().topic());
        out.writeInt(split.partition().partition());
        out.writeLong(split.startingOffset());
        out.writeLong(split.stoppingOffset());
        out.writeUTF(split.leaderHost());
    }

    public static SluiceSplit read(DataInput in) throws IOException {
        TopicPartition partition = new TopicPartition(in.readUTF(), in.readInt());
        long start = in.readLong();
        long stop = in.readLong();
        String leaderHost = in.readUTF();
        try {
            return new SluiceSplit(partition, start, stop, leaderHost);
        } catch (IllegalArgumentException e) {
            throw new IOException("corrupt split: " + e.getMessage(), e);
        }
    }
}
