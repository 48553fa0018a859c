package dev.sluice.client.read;

import dev.sluice.client.protocol.StreamGap;
import dev.sluice.client.time.FakeClock;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * A stream whose chunks, and the daemon's reports of holes in it, arrive at scripted times of a
 * {@link FakeClock}: waiting for one advances the clock to its arrival, as the daemon's doorbell or
 * the dispatcher would wake the reader then. A report that arrives no later than the next chunk
 * comes first.
 */
final class ScriptedSource implements ChunkSource {
    /** The stream whose holes are reported: that of {@code ChunkDeliveryTest}'s deliveries. */
    static final String JOB = "job-1";

    static final String STREAM = "cyan";

    private final FakeClock clock;
    private final Deque<Scripted> pending = new ArrayDeque<>();
    private final Deque<ScriptedGap> pendingGaps = new ArrayDeque<>();
    private final Deque<StreamGap> arrivedGaps = new ArrayDeque<>();
    private Scripted current;
    final List<Long> done = new ArrayList<>();
    boolean closed;

    record Scripted(long seq, boolean eos, byte[] payload, long arrivalNanos) {}

    record ScriptedGap(StreamGap gap, long arrivalNanos) {}

    ScriptedSource(FakeClock clock) {
        this.clock = clock;
    }

    /** Adds chunks {@code 0..count-1} of {@code size} bytes, the last with the end of stream. */
    ScriptedSource chunks(int count, int size, long arrivalNanos) {
        for (int seq = 0; seq < count; seq++) {
            add(seq, seq == count - 1, size, arrivalNanos);
        }
        return this;
    }

    ScriptedSource add(long seq, boolean eos, int size, long arrivalNanos) {
        byte[] payload = new byte[size];
        for (int i = 0; i < size; i++) {
            payload[i] = (byte) (seq + i);
        }
        pending.add(new Scripted(seq, eos, payload, arrivalNanos));
        return this;
    }

    /** Adds a report of the hole {@code from..to} (in arrival order with the other reports). */
    ScriptedSource gap(long from, long to, long waitedNanos, long arrivalNanos) {
        pendingGaps.add(
                new ScriptedGap(
                        new StreamGap(1, from, to, waitedNanos, JOB, STREAM), arrivalNanos));
        return this;
    }

    @Override
    public StreamGap takeGap() {
        return arrivedGaps.poll();
    }

    /** The chunks that have arrived by now and are not taken yet. */
    @Override
    public long bytesWaiting(int readerIndex, int readerCount) {
        long bytes = 0;
        for (Scripted chunk : pending) {
            if (chunk.arrivalNanos() <= clock.nanoTime()
                    && Long.remainderUnsigned(chunk.seq(), readerCount) == readerIndex) {
                bytes += chunk.payload().length;
            }
        }
        return bytes;
    }

    @Override
    public Chunk next(long timeoutNanos) {
        if (current != null) {
            throw new AssertionError("the previous chunk is not done");
        }
        if (closed) {
            throw new AssertionError("read after close");
        }
        Scripted next = pending.peek();
        long deadline = clock.nanoTime() + timeoutNanos;
        ScriptedGap gap = pendingGaps.peek();
        if (gap != null
                && gap.arrivalNanos() <= deadline
                && (next == null || gap.arrivalNanos() <= next.arrivalNanos())) {
            clock.advanceTo(gap.arrivalNanos());
            arrivedGaps.add(pendingGaps.poll().gap());
            return null;
        }
        if (next == null || next.arrivalNanos() > deadline) {
            clock.advanceTo(deadline);
            return null;
        }
        clock.advanceTo(next.arrivalNanos());
        current = pending.poll();
        Scripted taken = current;
        return new Chunk() {
            @Override
            public long seq() {
                return taken.seq();
            }

            @Override
            public boolean isEndOfStream() {
                return taken.eos();
            }

            @Override
            public ByteBuffer payload() {
                return ByteBuffer.wrap(taken.payload()).asReadOnlyBuffer();
            }

            @Override
            public int size() {
                return taken.payload().length;
            }

            @Override
            public void done() {
                if (current != taken) {
                    throw new AssertionError("chunk " + taken.seq() + " done twice");
                }
                current = null;
                done.add(taken.seq());
            }
        };
    }

    @Override
    public void close() {
        closed = true;
    }
}
