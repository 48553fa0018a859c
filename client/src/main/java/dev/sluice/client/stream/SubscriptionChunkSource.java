package dev.sluice.client.stream;

import dev.sluice.client.annotation.Internal;
import dev.sluice.client.brokerd.ChunkBatch;
import dev.sluice.client.brokerd.ChunkSubscription;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.apache.arrow.vector.VarBinaryVector;

/**
 * One stream's chunks out of a CHUNK_STREAMS subscription of its job. The daemon already put them
 * in {@code seq} order and dropped duplicates; this picks the stream's rows out of each object (an
 * object may carry chunks of the job's other streams) and closes the object, which frees its slot
 * for the daemon, as soon as its last chunk of the stream is done.
 */
@Internal
final class SubscriptionChunkSource implements ChunkSource {
    private final ChunkSubscription subscription;
    private final String stream;
    private ChunkBatch batch;
    // The batch's chunk handed out last, or -1 before the first.
    private int index = -1;
    private RowChunk current;

    SubscriptionChunkSource(ChunkSubscription subscription, String stream) {
        this.subscription = subscription;
        this.stream = stream;
    }

    @Override
    public Chunk next(long timeoutNanos) throws IOException {
        if (current != null) {
            throw new IllegalStateException("the previous chunk is not done");
        }
        long deadline = System.nanoTime() + Math.max(0, timeoutNanos);
        while (true) {
            if (batch != null) {
                int row = nextRow(index + 1);
                if (row >= 0) {
                    index = row;
                    current = new RowChunk(batch, row);
                    return current;
                }
                closeBatch();
            }
            batch = subscription.poll(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            if (batch == null) {
                return null;
            }
            index = -1;
        }
    }

    /** The first chunk of the stream at or after {@code from} in the batch, or -1. */
    private int nextRow(int from) {
        for (int i = from; i < batch.chunkCount(); i++) {
            if (batch.stream(i).equals(stream)) {
                return i;
            }
        }
        return -1;
    }

    private void done(RowChunk chunk) throws IOException {
        if (chunk != current) {
            throw new IllegalStateException("chunk " + chunk.seq() + " is already done");
        }
        current = null;
        // Free the slot now rather than on the next call: the application may take its time.
        if (nextRow(index + 1) < 0) {
            closeBatch();
        }
    }

    private void closeBatch() throws IOException {
        ChunkBatch closing = batch;
        batch = null;
        closing.close();
    }

    @Override
    public void close() throws IOException {
        current = null;
        try {
            if (batch != null) {
                closeBatch();
            }
        } finally {
            subscription.close();
        }
    }

    private final class RowChunk implements Chunk {
        private final ChunkBatch owner;
        private final int i;
        private final long seq;
        private final boolean eos;

        RowChunk(ChunkBatch owner, int i) {
            this.owner = owner;
            this.i = i;
            this.seq = owner.seq(i);
            this.eos = owner.isEndOfStream(i);
        }

        @Override
        public long seq() {
            return seq;
        }

        @Override
        public boolean isEndOfStream() {
            return eos;
        }

        @Override
        public ByteBuffer payload() {
            VarBinaryVector payloads = (VarBinaryVector) owner.root().getVector("payload");
            int row = owner.row(i);
            int start = payloads.getStartOffset(row);
            int length = payloads.getEndOffset(row) - start;
            // The slot's memory itself: a direct buffer over the mapped segment, no copy.
            return payloads.getDataBuffer().nioBuffer(start, length).asReadOnlyBuffer();
        }

        @Override
        public int size() {
            VarBinaryVector payloads = (VarBinaryVector) owner.root().getVector("payload");
            int row = owner.row(i);
            return payloads.getEndOffset(row) - payloads.getStartOffset(row);
        }

        @Override
        public void done() throws IOException {
            SubscriptionChunkSource.this.done(this);
        }
    }
}
