package dev.sluice.client.segment;

import static dev.sluice.client.segment.SegmentLayout.*;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Reads the objects of one segment through one lane: every object the writer publishes while this
 * reader is attached, in publication order, each in place in shared memory.
 *
 * <p>Not thread-safe: one thread polls and releases. Objects may be held and released in any order;
 * the writer blocks once every slot is held by some reader, which is the backpressure.
 *
 * <pre>{@code
 * try (SegmentReader reader = SegmentReader.open("orders");
 *         ArrowBatchReader batches = new ArrowBatchReader(reader.schema(), allocator)) {
 *     SegmentObject object;
 *     while ((object = reader.take()) != null) {
 *         VectorSchemaRoot root = batches.load(object);
 *         ...
 *         object.release();
 *     }
 * }
 * }</pre>
 */
@PublicEvolving
public final class SegmentReader implements AutoCloseable {
    private final MappedSegment segment;
    private final int lane;
    private final long laneWord;
    private final long laneBit;

    /**
     * Package-private so tests can stop it: that is all the other side sees of a crashed reader.
     */
    final Heartbeat heartbeat;

    private final ReaderDoorbell doorbell;
    private final IdleStrategy idle = new IdleStrategy();
    private final IntConsumer waiting;
    private final BooleanSupplier ready;
    private final Schema schema;
    private long readPos;
    private boolean endOfStream;
    private boolean closed;

    private SegmentReader(MappedSegment segment, Schema schema, int lane, long laneWord) {
        this.segment = segment;
        this.schema = schema;
        this.lane = lane;
        this.laneWord = laneWord;
        this.laneBit = 1L << lane;
        this.readPos = segment.readPos(lane);
        this.heartbeat =
                Heartbeat.start(
                        () -> segment.readerHeartbeat(lane, System.nanoTime()),
                        segment.header.livenessTimeoutNanos());
        this.doorbell = ReaderDoorbell.connect(bellPath(segment.path), lane);
        this.waiting = value -> segment.readerWaiting(lane, value);
        this.ready =
                () ->
                        segment.writePosVolatile(lane) > readPos
                                || segment.writerState() == WRITER_CLOSED;
    }

    /** Opens {@code /dev/shm/NAME}, or the path when the argument contains a slash. */
    public static SegmentReader open(String nameOrPath) throws IOException {
        return open(resolve(nameOrPath));
    }

    /**
     * Maps and validates the segment, then attaches to a free lane.
     *
     * @throws SegmentFormatException if the file is not a valid segment
     * @throws SegmentException if every lane is taken
     */
    public static SegmentReader open(Path path) throws IOException {
        MappedSegment segment = MappedSegment.open(path, true);
        Schema schema = ArrowBatchReader.parseSchema(segment.schemaMessage());
        long pid = ProcessHandle.current().pid();
        for (int lane = 0; lane < segment.header.laneCount(); lane++) {
            long word = segment.laneWord(lane);
            if (laneState(word) != LANE_FREE) {
                continue;
            }
            segment.readerPid(lane, pid);
            segment.readerHeartbeat(lane, System.nanoTime());
            // An evicted reader that was still running may have moved read_pos after the
            // writer reclaimed the lane; start from what the writer considers taken.
            segment.readPos(lane, segment.writePos(lane));
            long attached = SegmentLayout.laneWord(laneEpoch(word) + 1, LANE_ATTACHED);
            if (segment.casLaneWord(lane, word, attached)) {
                return new SegmentReader(segment, schema, lane, attached);
            }
        }
        throw new SegmentException(
                path + ": all " + segment.header.laneCount() + " lanes are taken");
    }

    /** The validated header. */
    public SegmentHeader header() {
        return segment.header;
    }

    /** The Arrow schema of every object, from the header. */
    public Schema schema() {
        return schema;
    }

    /** The lane this reader is attached to (its bit in the slots' holders). */
    public int lane() {
        return lane;
    }

    /** Whether the writer closed the segment and this reader has taken every object. */
    public boolean isEndOfStream() {
        return endOfStream;
    }

    /** Waits as long as it takes for the next object; {@code null} at the end of the stream. */
    public SegmentObject take() throws IOException {
        SegmentObject object;
        do {
            object = poll(Duration.ofSeconds(1));
        } while (object == null && !endOfStream);
        return object;
    }

    /**
     * The next object, or {@code null} if none came within {@code timeout} or the stream ended
     * ({@link #isEndOfStream()} tells which).
     *
     * @throws WriterDeadException if the writer's heartbeat is stale and nothing is left to read
     * @throws ReaderEvictedException if the writer took this lane back
     * @throws SegmentFormatException if the next entry or its slot is corrupt
     */
    public SegmentObject poll(Duration timeout) throws IOException {
        ensureOpen();
        long deadline = System.nanoTime() + timeout.toNanos();
        long liveness = segment.header.livenessTimeoutNanos();
        idle.reset();
        while (true) {
            checkNotEvicted();
            if (readPos < segment.writePos(lane)) {
                return takeEntry();
            }
            if (segment.writerState() == WRITER_CLOSED) {
                // Publications happen before the CLOSED store: look at write_pos once more.
                if (readPos < segment.writePos(lane)) {
                    continue;
                }
                endOfStream = true;
                return null;
            }
            long now = System.nanoTime();
            if (now - segment.writerHeartbeat() > liveness) {
                throw new WriterDeadException(
                        segment.path
                                + ": writer heartbeat older than "
                                + liveness
                                + " ns with nothing left to read");
            }
            if (now - deadline >= 0) {
                return null;
            }
            idle.idleOrPark(waiting, ready, doorbell, Math.min(deadline - now, liveness / 4));
        }
    }

    private SegmentObject takeEntry() throws SegmentException {
        long entry = segment.ringEntry(lane, readPos);
        readPos++;
        segment.readPos(lane, readPos);
        long slotIndex = entry & LOW32;
        if (slotIndex >= segment.header.slotCount()) {
            throw new SegmentFormatException(
                    "ring",
                    "0x" + Long.toHexString(entry),
                    "lane "
                            + lane
                            + " entry names slot "
                            + slotIndex
                            + " of "
                            + segment.header.slotCount());
        }
        int slot = (int) slotIndex;
        long generation = generation(entry);
        long state = segment.stateWord(slot);
        if (generation(state) != generation
                || (holders(state) & laneBit) == 0
                || (holders(state) & WRITER_BIT) != 0) {
            checkNotEvicted();
            throw new SegmentFormatException(
                    "state_word",
                    "0x" + Long.toHexString(state),
                    "slot "
                            + slot
                            + " must be generation "
                            + generation
                            + " and held by lane "
                            + lane
                            + ", not the writer");
        }
        return SegmentObject.read(segment, slot, generation, this);
    }

    void release(SegmentObject object) throws SegmentException {
        int slot = object.slot();
        while (true) {
            long state = segment.stateWord(slot);
            if (generation(state) != object.generation() || (holders(state) & laneBit) == 0) {
                throw new ReaderEvictedException(
                        segment.path
                                + ": lane "
                                + lane
                                + " lost slot "
                                + slot
                                + " before releasing it");
            }
            long released = state & ~laneBit;
            if (segment.casStateWord(slot, state, released)) {
                if (holders(released) == 0
                        && segment.writerWaiting() == 1
                        && segment.clearWriterWaiting()
                        && doorbell != null) {
                    doorbell.ring();
                }
                return;
            }
        }
    }

    private void checkNotEvicted() throws ReaderEvictedException {
        long word = segment.laneWord(lane);
        if (word != laneWord) {
            throw new ReaderEvictedException(
                    segment.path
                            + ": lane "
                            + lane
                            + " is now epoch "
                            + laneEpoch(word)
                            + " state "
                            + laneState(word)
                            + ", this reader attached as epoch "
                            + laneEpoch(laneWord));
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("reader closed");
        }
    }

    /** Leaves the lane (CLOSED), so the writer takes back the slots this reader still holds. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        heartbeat.close();
        segment.casLaneWord(
                lane, laneWord, SegmentLayout.laneWord(laneEpoch(laneWord), LANE_CLOSED));
        // A writer parked for credits takes the slots of a CLOSED lane back as soon as it looks.
        if (segment.writerWaiting() == 1 && segment.clearWriterWaiting() && doorbell != null) {
            doorbell.ring();
        }
        if (doorbell != null) {
            doorbell.close();
        }
    }
}
