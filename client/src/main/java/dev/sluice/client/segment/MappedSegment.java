package dev.sluice.client.segment;

import static dev.sluice.client.segment.SegmentLayout.*;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A segment file mapped into this process, with typed access to its fields. The control part
 * (header, lanes, descriptors) is one mapping; the slot data is mapped in windows of whole slots
 * because one Java mapping holds at most 2 GiB.
 *
 * <p>Concurrently used fields go through {@link VarHandle}s over the mapping, so each access has
 * the memory order the spec's cycle asks for; the {@code *Volatile} pairs are the sequentially
 * consistent store-then-load of the waiter protocol.
 */
final class MappedSegment {
    private static final VarHandle LONGS =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INTS =
            MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    /** Slot-data windows stay well under 2 GiB so a window never needs a second mapping. */
    private static final long WINDOW_BYTES = 1L << 30;

    final Path path;
    final SegmentHeader header;
    final ByteBuffer control;
    private final ByteBuffer[] windows;
    private final int slotsPerWindow;
    private final int ringMask;

    private MappedSegment(
            Path path,
            SegmentHeader header,
            ByteBuffer control,
            ByteBuffer[] windows,
            int slotsPerWindow) {
        this.path = path;
        this.header = header;
        this.control = control;
        this.windows = windows;
        this.slotsPerWindow = slotsPerWindow;
        this.ringMask = header.ringCapacity() - 1;
    }

    /** Maps an existing segment and validates its header before trusting any offset. */
    static MappedSegment open(Path path, boolean writable) throws IOException {
        StandardOpenOption[] options =
                writable
                        ? new StandardOpenOption[] {
                            StandardOpenOption.READ, StandardOpenOption.WRITE
                        }
                        : new StandardOpenOption[] {StandardOpenOption.READ};
        try (FileChannel channel = FileChannel.open(path, options)) {
            long fileSize = channel.size();
            if (fileSize < MIN_FILE_SIZE) {
                throw new SegmentFormatException(
                        "file_size", fileSize, "a segment is at least 4096 bytes");
            }
            FileChannel.MapMode mode =
                    writable ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.READ_ONLY;
            SegmentHeader header =
                    validate(channel.map(FileChannel.MapMode.READ_ONLY, 0, PAGE), fileSize);
            return map(path, channel, mode, header);
        }
    }

    /** Maps a freshly created file of exactly {@code header.segmentSize()} bytes for writing. */
    static MappedSegment create(Path path, FileChannel channel, SegmentHeader header)
            throws IOException {
        return map(path, channel, FileChannel.MapMode.READ_WRITE, header);
    }

    private static MappedSegment map(
            Path path, FileChannel channel, FileChannel.MapMode mode, SegmentHeader header)
            throws IOException {
        MappedByteBuffer control = channel.map(mode, 0, header.slotDataOffset());
        int slotsPerWindow =
                (int) Math.max(1, Math.min(header.slotCount(), WINDOW_BYTES / header.slotSize()));
        int windowCount = (header.slotCount() + slotsPerWindow - 1) / slotsPerWindow;
        ByteBuffer[] windows = new ByteBuffer[windowCount];
        for (int w = 0; w < windowCount; w++) {
            int slots = Math.min(slotsPerWindow, header.slotCount() - w * slotsPerWindow);
            long start = header.slotDataOffset() + (long) w * slotsPerWindow * header.slotSize();
            windows[w] = channel.map(mode, start, slots * header.slotSize());
        }
        return new MappedSegment(
                path, header, control.order(ByteOrder.LITTLE_ENDIAN), windows, slotsPerWindow);
    }

    /** The whole of slot {@code slot}'s data, position 0, limit {@code slot_size}. */
    ByteBuffer slotData(int slot) {
        int inWindow = slot % slotsPerWindow;
        int start = (int) (inWindow * header.slotSize());
        return windows[slot / slotsPerWindow]
                .slice(start, (int) header.slotSize())
                .order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The Arrow schema message stored in the header. */
    ByteBuffer schemaMessage() {
        return control.slice(H_SCHEMA, header.schemaLength());
    }

    // Header fields written after creation.

    long writerHeartbeat() {
        return (long) LONGS.getAcquire(control, H_WRITER_HEARTBEAT_NS);
    }

    void writerHeartbeat(long nanos) {
        LONGS.setRelease(control, H_WRITER_HEARTBEAT_NS, nanos);
    }

    int writerState() {
        return (int) INTS.getAcquire(control, H_WRITER_STATE);
    }

    void writerState(int state) {
        INTS.setVolatile(control, H_WRITER_STATE, state);
    }

    long objectsPublished() {
        return (long) LONGS.getAcquire(control, H_OBJECTS_PUBLISHED);
    }

    void objectsPublished(long count) {
        LONGS.setRelease(control, H_OBJECTS_PUBLISHED, count);
    }

    int writerWaiting() {
        return (int) INTS.getVolatile(control, H_WRITER_WAITING);
    }

    void writerWaiting(int value) {
        INTS.setVolatile(control, H_WRITER_WAITING, value);
    }

    boolean clearWriterWaiting() {
        return INTS.compareAndSet(control, H_WRITER_WAITING, 1, 0);
    }

    void writerPid(long pid) {
        control.putLong(H_WRITER_PID, pid);
    }

    // Lane fields.

    private int lane(int lane) {
        return (int) (header.laneTableOffset() + lane * header.laneSize());
    }

    long laneWord(int lane) {
        return (long) LONGS.getVolatile(control, lane(lane) + L_LANE_WORD);
    }

    boolean casLaneWord(int lane, long expected, long value) {
        return LONGS.compareAndSet(control, lane(lane) + L_LANE_WORD, expected, value);
    }

    void laneWord(int lane, long value) {
        LONGS.setRelease(control, lane(lane) + L_LANE_WORD, value);
    }

    void readerPid(int lane, long pid) {
        control.putLong(lane(lane) + L_READER_PID, pid);
    }

    long writePos(int lane) {
        return (long) LONGS.getAcquire(control, lane(lane) + L_WRITE_POS);
    }

    /** Sequentially consistent: the writer loads {@code reader_waiting} right after it. */
    void writePos(int lane, long pos) {
        LONGS.setVolatile(control, lane(lane) + L_WRITE_POS, pos);
    }

    /** Sequentially consistent: the reader stores {@code reader_waiting} right before it. */
    long writePosVolatile(int lane) {
        return (long) LONGS.getVolatile(control, lane(lane) + L_WRITE_POS);
    }

    long readPos(int lane) {
        return (long) LONGS.getAcquire(control, lane(lane) + L_READ_POS);
    }

    void readPos(int lane, long pos) {
        LONGS.setRelease(control, lane(lane) + L_READ_POS, pos);
    }

    long readerHeartbeat(int lane) {
        return (long) LONGS.getAcquire(control, lane(lane) + L_READER_HEARTBEAT_NS);
    }

    void readerHeartbeat(int lane, long nanos) {
        LONGS.setRelease(control, lane(lane) + L_READER_HEARTBEAT_NS, nanos);
    }

    int readerWaiting(int lane) {
        return (int) INTS.getVolatile(control, lane(lane) + L_READER_WAITING);
    }

    void readerWaiting(int lane, int value) {
        INTS.setVolatile(control, lane(lane) + L_READER_WAITING, value);
    }

    boolean clearReaderWaiting(int lane) {
        return INTS.compareAndSet(control, lane(lane) + L_READER_WAITING, 1, 0);
    }

    long ringEntry(int lane, long pos) {
        return control.getLong(lane(lane) + L_RING + (int) (pos & ringMask) * 8);
    }

    void ringEntry(int lane, long pos, long entry) {
        control.putLong(lane(lane) + L_RING + (int) (pos & ringMask) * 8, entry);
    }

    // Slot descriptor fields.

    int descriptor(int slot) {
        return (int) (header.descriptorTableOffset() + (long) slot * DESCRIPTOR_SIZE);
    }

    long stateWord(int slot) {
        return (long) LONGS.getAcquire(control, descriptor(slot) + D_STATE_WORD);
    }

    void stateWordRelease(int slot, long value) {
        LONGS.setRelease(control, descriptor(slot) + D_STATE_WORD, value);
    }

    boolean casStateWord(int slot, long expected, long value) {
        return LONGS.compareAndSet(control, descriptor(slot) + D_STATE_WORD, expected, value);
    }
}
