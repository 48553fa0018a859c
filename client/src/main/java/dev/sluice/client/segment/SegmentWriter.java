package dev.sluice.client.segment;

import static dev.sluice.client.segment.SegmentLayout.*;

import dev.sluice.client.Limits;
import dev.sluice.client.annotation.PublicEvolving;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;
import java.util.zip.CRC32C;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Creates a segment and publishes objects into it: the one writer of the format. Every object goes
 * to every reader attached when it is published; a slot becomes free again once all of them
 * released it. No free slot means the writer waits: readers hold the credits.
 *
 * <p>Not thread-safe: one thread claims, publishes and closes. Lanes of readers that left or whose
 * heartbeat went stale are taken back by this thread whenever it claims or publishes.
 *
 * <pre>{@code
 * try (SegmentWriter writer = SegmentWriter.builder("orders").objectKind(ObjectKind.RECORDS).create();
 *         RecordsBatchEncoder batch = new RecordsBatchEncoder(allocator)) {
 *     batch.add(0, 42L, timestamp, key, value, List.of());
 *     batch.writeTo(writer, Duration.ofSeconds(5));
 * }
 * }</pre>
 */
@PublicEvolving
public final class SegmentWriter implements AutoCloseable {
    private final MappedSegment segment;
    private final Schema schema;

    /**
     * Package-private so tests can stop it: that is all the other side sees of a crashed writer.
     */
    final Heartbeat heartbeat;

    private final WriterDoorbell doorbell;
    private final IdleStrategy idle = new IdleStrategy();
    private final IntConsumer waiting;
    private final BooleanSupplier slotFree;
    private final long[] writePos;

    /** Per lane, the lane word last seen ATTACHED: a new one is a new reader. */
    private final long[] attachedWord;

    private final CRC32C crc = new CRC32C();
    private int cursor;
    private long nextObjectId;
    private long lastLivenessScan;
    private boolean closed;

    private SegmentWriter(MappedSegment segment, Schema schema, WriterDoorbell doorbell) {
        this.segment = segment;
        this.schema = schema;
        this.doorbell = doorbell;
        this.writePos = new long[segment.header.laneCount()];
        this.attachedWord = new long[segment.header.laneCount()];
        this.waiting = segment::writerWaiting;
        this.slotFree = this::hasFreeSlot;
        this.lastLivenessScan = System.nanoTime();
        this.heartbeat =
                Heartbeat.start(
                        () -> segment.writerHeartbeat(System.nanoTime()),
                        segment.header.livenessTimeoutNanos());
    }

    /** A writer for {@code /dev/shm/NAME}, or for the path when the argument has a slash. */
    public static Builder builder(String nameOrPath) {
        return new Builder(resolve(nameOrPath));
    }

    public static Builder builder(Path path) {
        return new Builder(path);
    }

    /** The segment's parameters; every one has a default except the object kind. */
    @PublicEvolving
    public static final class Builder {
        private final Path path;
        private ObjectKind objectKind;
        private int slotCount = 64;
        private long slotSize = 1 << 20;
        private int laneCount = 4;
        private boolean checksums = true;
        private Duration livenessTimeout = Duration.ofSeconds(5);
        private boolean doorbell = true;
        private boolean replaceExisting;

        private Builder(Path path) {
            this.path = path;
        }

        public Builder objectKind(ObjectKind kind) {
            this.objectKind = kind;
            return this;
        }

        /** 1 to 65536 slots: the objects readers can hold at once (default 64). */
        public Builder slotCount(int count) {
            this.slotCount = count;
            return this;
        }

        /** Bytes per slot, a multiple of 64, at least 256 (default 1 MiB). */
        public Builder slotSize(long bytes) {
            this.slotSize = bytes;
            return this;
        }

        /** 1 to 31: how many readers can be attached at once (default 4). */
        public Builder laneCount(int count) {
            this.laneCount = count;
            return this;
        }

        /** Whether every slot carries a CRC32C that readers check (default true). */
        public Builder checksums(boolean enabled) {
            this.checksums = enabled;
            return this;
        }

        /** How old a heartbeat may get before its side counts as dead (default 5 s). */
        public Builder livenessTimeout(Duration timeout) {
            this.livenessTimeout = timeout;
            return this;
        }

        /** Whether to listen on the doorbell socket (default true). */
        public Builder doorbell(boolean enabled) {
            this.doorbell = enabled;
            return this;
        }

        /** Whether to replace a file already at the path (default false: fail instead). */
        public Builder replaceExisting(boolean replace) {
            this.replaceExisting = replace;
            return this;
        }

        /**
         * Creates the file under a temporary name, mode 0600, initialises all of it and moves it
         * into place, so no reader ever sees it half written.
         */
        public SegmentWriter create() throws IOException {
            Objects.requireNonNull(objectKind, "objectKind");
            if (!Limits.isSlotCount(slotCount)) {
                throw new IllegalArgumentException("slot count must be 1 to 65536: " + slotCount);
            }
            if (laneCount < 1 || laneCount > MAX_LANES) {
                throw new IllegalArgumentException("lane count must be 1 to 31: " + laneCount);
            }
            if (slotSize < MIN_SLOT_SIZE || slotSize % 64 != 0 || slotSize > MAX_JAVA_SLOT_SIZE) {
                throw new IllegalArgumentException(
                        "slot size must be a multiple of 64, 256 to 2 GiB: " + slotSize);
            }
            if (livenessTimeout.isNegative() || livenessTimeout.isZero()) {
                throw new IllegalArgumentException(
                        "liveness timeout must be positive: " + livenessTimeout);
            }
            if (!replaceExisting && Files.exists(path)) {
                throw new FileAlreadyExistsException(path.toString());
            }
            Schema schema = objectKind.schema();
            byte[] schemaMessage = schemaMessage(schema);
            SegmentHeader header =
                    plan(
                            checksums,
                            slotCount,
                            laneCount,
                            slotSize,
                            schemaMessage.length,
                            livenessTimeout.toNanos(),
                            objectKind);
            Temporary temporary = createTemporary(path);
            Path tmp = temporary.path();
            WriterDoorbell bell = null;
            try (FileChannel channel = temporary.channel()) {
                // Writing the last byte sets the exact size; tmpfs keeps the rest unallocated.
                channel.write(ByteBuffer.allocate(1), header.segmentSize() - 1);
                MappedSegment segment = MappedSegment.create(path, channel, header);
                SegmentLayout.write(segment.control, header);
                segment.control.put(H_SCHEMA, schemaMessage);
                segment.writerPid(ProcessHandle.current().pid());
                segment.writerHeartbeat(System.nanoTime());
                segment.writerState(WRITER_ACTIVE);
                if (doorbell) {
                    bell = WriterDoorbell.listen(bellPath(path), laneCount);
                }
                if (replaceExisting) {
                    Files.move(
                            tmp,
                            path,
                            StandardCopyOption.ATOMIC_MOVE,
                            StandardCopyOption.REPLACE_EXISTING);
                } else {
                    // A hard link fails atomically if the name is taken, where a rename would
                    // replace.
                    Files.createLink(path, tmp);
                    Files.delete(tmp);
                }
                return new SegmentWriter(segment, schema, bell);
            } catch (IOException | RuntimeException e) {
                Files.deleteIfExists(tmp);
                if (bell != null) {
                    bell.close();
                }
                throw e;
            }
        }
    }

    private record Temporary(Path path, FileChannel channel) {}

    /**
     * Creates a file, mode 0600, under a random temporary name beside {@code path}; a name taken
     * already, by chance or on purpose, gives way to another (spec "File layout").
     */
    private static Temporary createTemporary(Path path) throws IOException {
        for (int attempt = 1; ; attempt++) {
            Path tmp = TemporaryName.beside(path);
            try {
                return new Temporary(
                        tmp,
                        FileChannel.open(
                                tmp,
                                EnumSet.of(
                                        StandardOpenOption.CREATE_NEW,
                                        StandardOpenOption.READ,
                                        StandardOpenOption.WRITE),
                                PosixFilePermissions.asFileAttribute(
                                        PosixFilePermissions.fromString("rw-------"))));
            } catch (FileAlreadyExistsException e) {
                if (attempt == TemporaryName.ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    private static byte[] schemaMessage(Schema schema) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        MessageSerializer.serialize(new WriteChannel(Channels.newChannel(out)), schema);
        return out.toByteArray();
    }

    public Path path() {
        return segment.path;
    }

    public SegmentHeader header() {
        return segment.header;
    }

    /** The Arrow schema every published batch must have. */
    public Schema schema() {
        return schema;
    }

    /** How many readers are attached now, after taking back the lanes of readers gone. */
    public int attachedReaders() throws IOException {
        reclaimLanes(true);
        int attached = 0;
        for (int lane = 0; lane < writePos.length; lane++) {
            if (laneState(segment.laneWord(lane)) == LANE_ATTACHED) {
                attached++;
            }
        }
        return attached;
    }

    /** Waits until at least {@code count} readers are attached; false if the timeout passed. */
    public boolean awaitReaders(int count, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        idle.reset();
        while (attachedReaders() < count) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            // A reader connects to the doorbell right after attaching, which wakes this wait.
            idle.idleOrPark(value -> {}, () -> false, doorbell, Math.min(left, 10_000_000L));
        }
        return true;
    }

    /**
     * Takes a free slot (a credit), waiting up to {@code timeout} for readers to release one.
     *
     * @return the slot, or {@code null} if none became free in time
     */
    public WritableSlot claim(Duration timeout) throws IOException {
        ensureOpen();
        long deadline = System.nanoTime() + timeout.toNanos();
        long liveness = segment.header.livenessTimeoutNanos();
        idle.reset();
        while (true) {
            WritableSlot slot = tryClaim();
            if (slot != null) {
                return slot;
            }
            if (reclaimLanes(true)) {
                continue;
            }
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                return null;
            }
            idle.idleOrPark(waiting, slotFree, doorbell, Math.min(deadline - now, liveness / 4));
        }
    }

    private WritableSlot tryClaim() {
        int count = segment.header.slotCount();
        for (int k = 0; k < count; k++) {
            int slot = (cursor + k) % count;
            long state = segment.stateWord(slot);
            if (holders(state) == 0) {
                long generation = (generation(state) + 1) & LOW32;
                segment.stateWordRelease(slot, stateWord(generation, WRITER_BIT));
                cursor = (slot + 1) % count;
                return new WritableSlot(this, slot, generation, segment.slotData(slot));
            }
        }
        return null;
    }

    private boolean hasFreeSlot() {
        for (int slot = 0; slot < segment.header.slotCount(); slot++) {
            if (holders(segment.stateWord(slot)) == 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Publishes the first {@code length} bytes of the slot (an encapsulated IPC record-batch
     * message) to every attached reader.
     *
     * @return the object id
     */
    public long publish(
            WritableSlot slot,
            int length,
            int recordCount,
            int partition,
            long firstOffset,
            long lastOffset)
            throws IOException {
        ensureOpen();
        checkHeld(slot);
        if (length < 0 || length > segment.header.slotSize()) {
            throw new IllegalArgumentException(
                    "length "
                            + length
                            + " outside the slot of "
                            + segment.header.slotSize()
                            + " bytes");
        }
        slot.done = true;
        int index = slot.index();
        int d = segment.descriptor(index);
        ByteBuffer control = segment.control;
        int checksum = 0;
        if (segment.header.checksums()) {
            crc.reset();
            crc.update(slot.buffer().limit(length));
            checksum = (int) crc.getValue();
        }
        long objectId = nextObjectId++;
        control.putInt(d + D_FLAGS, segment.header.checksums() ? SLOT_HAS_CHECKSUM : 0);
        control.putInt(d + D_LENGTH, length);
        control.putLong(d + D_OBJECT_ID, objectId);
        control.putInt(d + D_RECORD_COUNT, recordCount);
        control.putInt(d + D_PARTITION, partition);
        control.putLong(d + D_FIRST_OFFSET, firstOffset);
        control.putLong(d + D_LAST_OFFSET, lastOffset);
        control.putInt(d + D_CHECKSUM, checksum);

        long lanes = 0;
        boolean someClosed = false;
        boolean newlyAttached = false;
        for (int lane = 0; lane < writePos.length; lane++) {
            long word = segment.laneWord(lane);
            int state = laneState(word);
            if (state == LANE_ATTACHED) {
                lanes |= 1L << lane;
                newlyAttached |= word != attachedWord[lane];
                attachedWord[lane] = word;
            } else if (state == LANE_CLOSED) {
                someClosed = true;
            }
        }
        segment.stateWordRelease(index, stateWord(slot.generation(), lanes));
        long entry = stateWord(slot.generation(), index);
        for (int lane = 0; lane < writePos.length; lane++) {
            if ((lanes & 1L << lane) != 0) {
                segment.ringEntry(lane, writePos[lane], entry);
                segment.writePos(lane, ++writePos[lane]);
            }
        }
        segment.objectsPublished(nextObjectId);
        for (int lane = 0; lane < writePos.length; lane++) {
            if ((lanes & 1L << lane) != 0
                    && segment.readerWaiting(lane) == 1
                    && segment.clearReaderWaiting(lane)
                    && doorbell != null) {
                doorbell.ring(lane);
            }
        }
        if (newlyAttached && doorbell != null) {
            // Keeps the accept queue short even when neither side ever parks.
            doorbell.acceptPending();
        }
        long now = System.nanoTime();
        boolean scanLiveness = now - lastLivenessScan > segment.header.livenessTimeoutNanos() / 4;
        if (someClosed || scanLiveness) {
            reclaimLanes(scanLiveness);
        }
        return objectId;
    }

    /** Gives a claimed slot back unpublished. */
    public void abandon(WritableSlot slot) {
        checkHeld(slot);
        slot.done = true;
        segment.stateWordRelease(slot.index(), stateWord(slot.generation(), 0));
    }

    /**
     * Claims a slot, serializes the root's rows into it and publishes them.
     *
     * @return the object id
     * @throws TimeoutException if no slot became free within {@code timeout}
     * @throws SegmentException if the batch does not fit in a slot
     */
    public long write(
            VectorSchemaRoot root,
            int partition,
            long firstOffset,
            long lastOffset,
            Duration timeout)
            throws IOException, TimeoutException {
        return write(
                slot -> slot.write(root),
                root.getRowCount(),
                partition,
                firstOffset,
                lastOffset,
                timeout);
    }

    /** Fills a claimed slot with one object. */
    interface SlotFill {
        /**
         * @return the object's length
         */
        int fill(WritableSlot slot) throws IOException;
    }

    /**
     * As {@link #write(VectorSchemaRoot, int, long, long, Duration)}, the slot filled by {@code
     * fill}.
     */
    long write(
            SlotFill fill,
            int recordCount,
            int partition,
            long firstOffset,
            long lastOffset,
            Duration timeout)
            throws IOException, TimeoutException {
        WritableSlot slot = claim(timeout);
        if (slot == null) {
            throw new TimeoutException(
                    "no slot freed within "
                            + timeout
                            + ": readers hold all "
                            + segment.header.slotCount());
        }
        int length;
        try {
            length = fill.fill(slot);
        } catch (IOException | RuntimeException e) {
            abandon(slot);
            throw e;
        }
        return publish(slot, length, recordCount, partition, firstOffset, lastOffset);
    }

    private void checkHeld(WritableSlot slot) {
        if (slot.writer() != this || slot.done) {
            throw new IllegalStateException("slot " + slot.index() + " is not held by this writer");
        }
    }

    /**
     * Takes back CLOSED lanes and, with {@code includeStale}, ATTACHED lanes whose reader heartbeat
     * is older than the liveness timeout.
     *
     * @return whether a slot became free
     */
    private boolean reclaimLanes(boolean includeStale) throws IOException {
        long now = System.nanoTime();
        if (includeStale) {
            lastLivenessScan = now;
        }
        boolean freed = false;
        for (int lane = 0; lane < writePos.length; lane++) {
            long word = segment.laneWord(lane);
            int state = laneState(word);
            boolean stale =
                    state == LANE_ATTACHED
                            && now - segment.readerHeartbeat(lane)
                                    > segment.header.livenessTimeoutNanos();
            if (state == LANE_CLOSED || (includeStale && stale)) {
                freed |= reclaim(lane, word);
            }
        }
        return freed;
    }

    private boolean reclaim(int lane, long word) throws IOException {
        long epoch = laneEpoch(word);
        if (!segment.casLaneWord(lane, word, laneWord(epoch, LANE_RECLAIMING))) {
            return false;
        }
        long bit = 1L << lane;
        boolean freed = false;
        for (int slot = 0; slot < segment.header.slotCount(); slot++) {
            while (true) {
                long state = segment.stateWord(slot);
                if ((holders(state) & bit) == 0 || (holders(state) & WRITER_BIT) != 0) {
                    break;
                }
                if (segment.casStateWord(slot, state, state & ~bit)) {
                    freed |= holders(state & ~bit) == 0;
                    break;
                }
            }
        }
        segment.readPos(lane, writePos[lane]);
        segment.readerWaiting(lane, 0);
        if (doorbell != null) {
            doorbell.drop(lane);
        }
        segment.laneWord(lane, laneWord(epoch, LANE_FREE));
        return freed;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("writer closed");
        }
    }

    /**
     * Marks the segment CLOSED (readers finish what is in their rings, then see the end), wakes
     * parked readers and unlinks the file and its doorbell. Readers keep their mappings.
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        segment.writerState(WRITER_CLOSED);
        for (int lane = 0; lane < writePos.length; lane++) {
            if (segment.readerWaiting(lane) == 1
                    && segment.clearReaderWaiting(lane)
                    && doorbell != null) {
                doorbell.ring(lane);
            }
        }
        heartbeat.close();
        Files.deleteIfExists(segment.path);
        if (doorbell != null) {
            doorbell.close();
        }
    }
}
