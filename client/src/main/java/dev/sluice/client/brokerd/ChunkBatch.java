package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.SegmentObject;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;

/**
 * One object of a CHUNK_STREAMS subscription: chunks of one or more streams, each stream's in
 * {@code seq} order. Chunk {@code i} of the batch is row {@link #row(int)} of {@link #root()}: rows
 * a resubscription delivered a second time are left out.
 */
@PublicEvolving
public final class ChunkBatch extends SegmentBatch {
    private final int[] rows;

    ChunkBatch(
            ChunkSubscription subscription,
            SegmentObject object,
            ArrowBatchReader loader,
            int[] rows) {
        super(subscription, object, loader);
        this.rows = rows;
    }

    /** The chunks in this batch. */
    public int chunkCount() {
        return rows.length;
    }

    /** The row of {@link #root()} that holds chunk {@code i}. */
    public int row(int i) {
        return rows[i];
    }

    public String job(int i) {
        return text("job", i);
    }

    public String stream(int i) {
        return text("stream", i);
    }

    public long seq(int i) {
        return ((UInt8Vector) root().getVector("seq")).get(rows[i]);
    }

    /** Whether chunk {@code i} is the last of its stream. */
    public boolean isEndOfStream(int i) {
        return ((BitVector) root().getVector("eos")).get(rows[i]) == 1;
    }

    /** A copy of the payload; {@link #root()} reads it in place. */
    public byte[] payload(int i) {
        return ((VarBinaryVector) root().getVector("payload")).get(rows[i]);
    }

    private String text(String column, int i) {
        return new String(
                ((VarCharVector) root().getVector(column)).get(rows[i]), StandardCharsets.UTF_8);
    }
}
