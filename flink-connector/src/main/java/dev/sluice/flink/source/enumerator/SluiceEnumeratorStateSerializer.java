package dev.sluice.flink.source.enumerator;

import dev.sluice.flink.source.split.SluiceSplit;
import dev.sluice.flink.source.split.SluiceSplitSerializer;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.kafka.common.TopicPartition;

/**
 * Version 1, big-endian: the assigned partitions (int count, then topic as modified UTF-8 and
 * partition as int each), the unassigned splits (int count, then each as {@link
 * SluiceSplitSerializer} writes it), and the discovered flag (boolean).
 */
@Internal
public final class SluiceEnumeratorStateSerializer
        implements SimpleVersionedSerializer<SluiceEnumeratorState> {
    public static final int VERSION = 1;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(SluiceEnumeratorState state) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(state.assigned().size());
            for (TopicPartition partition : state.assigned()) {
                out.writeUTF(partition.topic());
                out.writeInt(partition.partition());
            }
            out.writeInt(state.unassigned().size());
            for (SluiceSplit split : state.unassigned()) {
                SluiceSplitSerializer.write(split, out);
            }
            out.writeBoolean(state.discovered());
        }
        return bytes.toByteArray();
    }

    @Override
    public SluiceEnumeratorState deserialize(int version, byte[] serialized) throws IOException {
        if (version != VERSION) {
            throw new IOException(
                    "enumerator state version " + version + ": this build reads " + VERSION);
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
            int assignedCount = count(in);
            Set<TopicPartition> assigned = new HashSet<>();
            for (int i = 0; i < assignedCount; i++) {
                assigned.add(new TopicPartition(in.readUTF(), in.readInt()));
            }
            int unassignedCount = count(in);
            List<SluiceSplit> unassigned = new ArrayList<>();
            for (int i = 0; i < unassignedCount; i++) {
                unassigned.add(SluiceSplitSerializer.read(in));
            }
            boolean discovered = in.readBoolean();
            if (in.available() > 0) {
                throw new IOException(in.available() + " bytes after the enumerator state");
            }
            return new SluiceEnumeratorState(assigned, unassigned, discovered);
        }
    }

    private static int count(DataInputStream in) throws IOException {
        int count = in.readInt();
        if (count < 0 || count > in.available()) {
            throw new IOException("corrupt enumerator state: a count of " + count);
        }
        return count;
    }
}
