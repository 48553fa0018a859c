package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.ByteArrayReadableSeekableByteChannel;
import org.apache.arrow.vector.util.ValueVectorUtility;
import org.apache.arrow.vector.validate.ValidateVectorBufferVisitor;

/**
 * Loads objects into one reused {@link VectorSchemaRoot} whose buffers point into the slot: no byte
 * of the batch is copied. The root's content is valid until the object is released or the next
 * object is loaded.
 *
 * <p>Needs {@code --add-opens=java.base/java.nio=ALL-UNNAMED}, as every zero-copy use of Arrow Java
 * does, to learn the address of the mapped memory.
 */
@PublicEvolving
public final class ArrowBatchReader implements AutoCloseable {
    private static final int CONTINUATION = 0xFFFFFFFF;
    // Stateless: one serves every load.
    private static final ValidateVectorBufferVisitor BUFFER_CHECK =
            new ValidateVectorBufferVisitor();

    private final BufferAllocator allocator;
    private final VectorSchemaRoot root;
    private final VectorLoader loader;

    public ArrowBatchReader(Schema schema, BufferAllocator allocator) {
        this.allocator = allocator;
        this.root = VectorSchemaRoot.create(schema, allocator);
        this.loader = new VectorLoader(root);
    }

    /** The root every {@link #load} fills. */
    public VectorSchemaRoot root() {
        return root;
    }

    /**
     * Points the root's vectors at the object's record batch.
     *
     * @throws SegmentFormatException if the slot does not hold a well-formed record-batch message
     */
    public VectorSchemaRoot load(SegmentObject object) throws SegmentFormatException {
        ByteBuffer message = object.message().order(ByteOrder.LITTLE_ENDIAN);
        int length = message.remaining();
        if (length < 8 || message.getInt(0) != CONTINUATION) {
            throw new SegmentFormatException(
                    "message",
                    "slot " + object.slot(),
                    "does not start with the IPC continuation marker FF FF FF FF");
        }
        long metadataLength = Integer.toUnsignedLong(message.getInt(4));
        if (metadataLength == 0 || metadataLength % 8 != 0 || 8 + metadataLength > length) {
            throw new SegmentFormatException(
                    "message",
                    "metadata length " + metadataLength,
                    "slot "
                            + object.slot()
                            + " holds "
                            + length
                            + " bytes; the metadata must be a positive multiple of 8 inside them");
        }
        int bodyStart = 8 + (int) metadataLength;
        RecordBatch batch;
        long bodyLength;
        try {
            Message header =
                    Message.getRootAsMessage(
                            message.slice(8, (int) metadataLength).order(ByteOrder.LITTLE_ENDIAN));
            if (header.headerType() != MessageHeader.RecordBatch) {
                throw new SegmentFormatException(
                        "message",
                        "header type " + header.headerType(),
                        "slot " + object.slot() + " must hold a RecordBatch message");
            }
            bodyLength = header.bodyLength();
            batch = (RecordBatch) header.header(new RecordBatch());
        } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
            throw new SegmentFormatException(
                    "message", "slot " + object.slot(), "unreadable flatbuffer metadata", e);
        }
        if (bodyLength < 0 || bodyLength > length - bodyStart) {
            throw new SegmentFormatException(
                    "message",
                    "body length " + bodyLength,
                    "slot "
                            + object.slot()
                            + " has "
                            + (length - bodyStart)
                            + " bytes after the metadata");
        }
        long address = MemoryUtil.getByteBufferAddress(message) + bodyStart;
        // The slot is mapped memory that outlives this buffer: releasing it frees nothing.
        ArrowBuf body =
                allocator.wrapForeignAllocation(
                        new ForeignAllocation(bodyLength, address) {
                            @Override
                            protected void release0() {}
                        });
        ArrowRecordBatch recordBatch;
        try {
            // Takes over this reference to the body: the batch's slices hold it from now on.
            recordBatch = MessageSerializer.deserializeRecordBatch(batch, body);
        } catch (IOException | RuntimeException e) {
            body.close();
            throw invalid(object, e);
        }
        try (recordBatch) {
            loader.load(recordBatch);
            checkBuffers(address, address + bodyLength);
        } catch (RuntimeException e) {
            throw invalid(object, e);
        }
        if (root.getRowCount() != object.recordCount()) {
            throw new SegmentFormatException(
                    "record_count",
                    object.recordCount(),
                    "slot " + object.slot() + " holds " + root.getRowCount() + " rows");
        }
        return root;
    }

    /**
     * Like {@link #load}, then also checks every offset and value against its buffers, which costs
     * a pass over the data: for untrusted input such as test vectors.
     */
    public VectorSchemaRoot loadAndValidateFully(SegmentObject object)
            throws SegmentFormatException {
        load(object);
        try {
            ValueVectorUtility.validateFull(root);
        } catch (RuntimeException e) {
            throw invalid(object, e);
        }
        return root;
    }

    /**
     * What {@link ValueVectorUtility#validate} checks, less the vectors' types, plus that the data
     * lies in the object's body. The types are the header schema's, made once with the root; only
     * the buffers change from one load to the next, and checking the types rebuilt every nested
     * field (the headers' list of structs) at every load, a third of a load's time.
     */
    private void checkBuffers(long bodyStart, long bodyEnd) {
        int rows = root.getRowCount();
        for (FieldVector vector : root.getFieldVectors()) {
            if (vector.getValueCount() != rows) {
                throw new IllegalArgumentException(
                        vector.getName()
                                + " has "
                                + vector.getValueCount()
                                + " values for "
                                + rows
                                + " rows");
            }
            vector.accept(BUFFER_CHECK, null);
            checkInBody(vector, bodyStart, bodyEnd);
        }
    }

    /**
     * Arrow Java grows a vector whose buffers are too small for its rows (setting the row count
     * reallocates them off the slot, zero-filled), so rows the object does not hold would read as
     * empty instead of failing. Validity buffers are exempt: for a column without nulls the loader
     * makes one, all set, as it should. So is a vector without values (no headers in any row, say):
     * there is nothing to read, and the loader may have made its buffers.
     */
    private static void checkInBody(FieldVector vector, long bodyStart, long bodyEnd) {
        if (vector.getValueCount() == 0) {
            return;
        }
        for (ArrowBuf buffer : vector.getFieldBuffers()) {
            long start = buffer.memoryAddress();
            if (buffer == vector.getValidityBuffer() || buffer.capacity() == 0) {
                continue;
            }
            if (start < bodyStart || start + buffer.capacity() > bodyEnd) {
                throw new IllegalArgumentException(
                        vector.getName()
                                + ": its buffers do not hold its "
                                + vector.getValueCount()
                                + " values");
            }
        }
        for (FieldVector child : vector.getChildrenFromFields()) {
            checkInBody(child, bodyStart, bodyEnd);
        }
    }

    private static SegmentFormatException invalid(SegmentObject object, Exception e) {
        return new SegmentFormatException(
                "message",
                "slot " + object.slot(),
                "not a valid record batch of the header's schema: " + e.getMessage(),
                e);
    }

    /** Parses the header's encapsulated Schema message. */
    static Schema parseSchema(ByteBuffer message) throws SegmentFormatException {
        byte[] bytes = new byte[message.remaining()];
        message.duplicate().get(bytes);
        try (ReadChannel channel =
                new ReadChannel(new ByteArrayReadableSeekableByteChannel(bytes))) {
            return MessageSerializer.deserializeSchema(channel);
        } catch (IOException | RuntimeException e) {
            throw new SegmentFormatException(
                    "schema",
                    bytes.length + " bytes",
                    "not an Arrow IPC Schema message: " + e.getMessage(),
                    e);
        }
    }

    @Override
    public void close() {
        root.close();
    }
}
