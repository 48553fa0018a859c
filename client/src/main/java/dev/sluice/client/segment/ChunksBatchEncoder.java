package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Collects stream chunks into a batch of the CHUNKS schema and writes it as one object (with
 * partition and offsets {@code -1}: chunks are addressed by job, stream and sequence).
 */
@PublicEvolving
public final class ChunksBatchEncoder implements AutoCloseable {
    private final VectorSchemaRoot root;
    private final VarCharVector job;
    private final VarCharVector stream;
    private final UInt8Vector seq;
    private final BitVector eos;
    private final VarBinaryVector payload;
    private int rows;

    public ChunksBatchEncoder(BufferAllocator allocator) {
        root = VectorSchemaRoot.create(ObjectKind.CHUNKS.schema(), allocator);
        job = (VarCharVector) root.getVector("job");
        stream = (VarCharVector) root.getVector("stream");
        seq = (UInt8Vector) root.getVector("seq");
        eos = (BitVector) root.getVector("eos");
        payload = (VarBinaryVector) root.getVector("payload");
        clear();
    }

    /** Adds one chunk; {@code seq} is unsigned. */
    public void add(String job, String stream, long seq, boolean eos, byte[] payload) {
        this.job.setSafe(rows, job.getBytes(StandardCharsets.UTF_8));
        this.stream.setSafe(rows, stream.getBytes(StandardCharsets.UTF_8));
        this.seq.setSafe(rows, seq);
        this.eos.setSafe(rows, eos ? 1 : 0);
        this.payload.setSafe(rows, payload);
        rows++;
        root.setRowCount(rows);
    }

    public int rowCount() {
        return rows;
    }

    /** The batch so far. */
    public VectorSchemaRoot root() {
        return root;
    }

    /**
     * Writes the batch as one object, then clears it.
     *
     * @return the object id
     */
    public long writeTo(SegmentWriter writer, Duration timeout)
            throws IOException, TimeoutException {
        long id = writer.write(root, -1, -1, -1, timeout);
        clear();
        return id;
    }

    /** Drops the rows, keeping the allocated buffers for the next batch. */
    public void clear() {
        root.getFieldVectors().forEach(v -> v.reset());
        rows = 0;
        root.setRowCount(0);
    }

    @Override
    public void close() {
        root.close();
    }
}
