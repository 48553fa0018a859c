package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.function.Function;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * A slot the writer holds (WRITING): fill it, then {@link SegmentWriter#publish publish} it or
 * {@link SegmentWriter#abandon abandon} it.
 */
@PublicEvolving
public final class WritableSlot {
    private final SegmentWriter writer;
    private final int index;
    private final long generation;
    private final ByteBuffer data;
    boolean done;

    WritableSlot(SegmentWriter writer, int index, long generation, ByteBuffer data) {
        this.writer = writer;
        this.index = index;
        this.generation = generation;
        this.data = data;
    }

    /** The slot's index in the segment. */
    public int index() {
        return index;
    }

    /** The slot's memory, {@code slot_size} bytes, position 0, in shared memory. */
    public ByteBuffer buffer() {
        return data.duplicate().order(data.order());
    }

    /**
     * Serializes the root's current rows into the slot as an encapsulated IPC record-batch message:
     * the one copy from the vectors into shared memory.
     *
     * @return the message's length, to pass to {@link SegmentWriter#publish}
     * @throws SegmentException if the message does not fit in the slot
     */
    public int write(VectorSchemaRoot root) throws IOException {
        return write(root, WriteChannel::new);
    }

    /**
     * As {@link #write(VectorSchemaRoot)}, through the channel {@code channel} makes of the slot.
     */
    int write(VectorSchemaRoot root, Function<WritableByteChannel, WriteChannel> channel)
            throws IOException {
        ByteBuffer target = buffer().clear();
        try (ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
            MessageSerializer.serialize(channel.apply(new SlotChannel(target)), batch);
        }
        return target.position();
    }

    SegmentWriter writer() {
        return writer;
    }

    long generation() {
        return generation;
    }

    /** Writes into the slot, failing instead of overflowing it. */
    private static final class SlotChannel implements WritableByteChannel {
        private final ByteBuffer target;

        SlotChannel(ByteBuffer target) {
            this.target = target;
        }

        @Override
        public int write(ByteBuffer src) throws SegmentException {
            int n = src.remaining();
            if (n > target.remaining()) {
                throw new SegmentException(
                        "record batch does not fit in slot_size = " + target.capacity() + " bytes");
            }
            target.put(src);
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {}
    }
}
