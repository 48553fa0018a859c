package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;

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
        int row = rowCount();
        this.job.setSafe(row, job.getBytes(StandardCharsets.UTF_8));
        this.stream.setSafe(row, stream.getBytes(StandardCharsets.UTF_8));
        this.seq.setSafe(row, seq);
        this.eos.setSafe(row, eos ? 1 : 0);
        this.payload.setSafe(row, payload);
        rowAdded();
    }
}
