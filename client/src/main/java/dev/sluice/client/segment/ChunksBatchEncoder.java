package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.ipc.WriteChannel;

/**
 * Collects stream chunks into a batch of the CHUNKS schema and writes it as one object (with
 * partition and offsets {@code -1}: chunks are addressed by job, stream and sequence).
 */
@PublicEvolving
public final class ChunksBatchEncoder extends BatchEncoder {
    private final VarCharVector job;
    private final VarCharVector stream;
    private final UInt8Vector seq;
    private final BitVector eos;
    private final VarBinaryVector payload;
    // The payloads of the rows added by reference, in row order: in no vector until written.
    private final List<byte[]> referenced = new ArrayList<>();

    public ChunksBatchEncoder(BufferAllocator allocator) {
        super(ObjectKind.CHUNKS, allocator);
        job = column("job", VarCharVector.class);
        stream = column("stream", VarCharVector.class);
        seq = column("seq", UInt8Vector.class);
        eos = column("eos", BitVector.class);
        payload = column("payload", VarBinaryVector.class);
    }

    /** Adds one chunk; {@code seq} is unsigned. */
    public void add(String job, String stream, long seq, boolean eos, byte[] payload) {
        if (!referenced.isEmpty()) {
            throw new IllegalStateException(
                    "the batch's rows are added by reference: add the others with addReferenced");
        }
        int row = setColumns(job, stream, seq, eos);
        this.payload.setSafe(row, payload);
        rowAdded();
    }

    /**
     * Adds one chunk without copying its payload into the batch, which holds only its length: its
     * bytes go from {@code payload} straight into the slot when the batch is written with {@link
     * #writeTo(WritableSlot)}, one copy of the payload where {@link #add} and {@link
     * WritableSlot#write} make two (into the vector, then into the slot). The array must not change
     * until then, and {@link #root()} does not hold its bytes. A batch's rows are all added by
     * reference or none.
     */
    public void addReferenced(String job, String stream, long seq, boolean eos, byte[] payload) {
        if (rowCount() > referenced.size()) {
            throw new IllegalStateException(
                    "the batch's rows hold their payloads: add the others with add");
        }
        int row = setColumns(job, stream, seq, eos);
        this.payload.setIndexDefined(row);
        // Makes room in the data buffer too; its bytes there are never written nor read.
        this.payload.setValueLengthSafe(row, payload.length);
        referenced.add(payload);
        rowAdded();
    }

    private int setColumns(String job, String stream, long seq, boolean eos) {
        int row = rowCount();
        this.job.setSafe(row, job.getBytes(StandardCharsets.UTF_8));
        this.stream.setSafe(row, stream.getBytes(StandardCharsets.UTF_8));
        this.seq.setSafe(row, seq);
        this.eos.setSafe(row, eos ? 1 : 0);
        return row;
    }

    /**
     * {@inheritDoc} The payloads added by reference are copied from their arrays where the payload
     * column's data buffer goes.
     */
    @Override
    public int writeTo(WritableSlot slot) throws IOException {
        if (referenced.isEmpty()) {
            return super.writeTo(slot);
        }
        ArrowBuf data = payload.getDataBuffer();
        boolean[] written = {false};
        int length =
                slot.write(
                        root(),
                        out ->
                                new WriteChannel(out) {
                                    @Override
                                    public void write(ArrowBuf buffer) throws IOException {
                                        if (buffer != data || written[0]) {
                                            super.write(buffer);
                                            return;
                                        }
                                        written[0] = true;
                                        for (byte[] bytes : referenced) {
                                            write(bytes);
                                        }
                                    }
                                });
        if (!written[0]) {
            // Arrow wrote another buffer than the vector's: what went out is not the payloads.
            throw new IllegalStateException(
                    "the payload column's data buffer was not among the buffers written");
        }
        return length;
    }

    @Override
    void clearRows() {
        referenced.clear();
    }
}
