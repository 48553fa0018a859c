package dev.sluice.client.segment;

import dev.sluice.client.Limits;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Every offset, size and constant of the segment format, named as in {@code docs/formats.md}
 * section "Segment", plus the derived sizes and the header validation. Offsets are relative to the
 * region named by the prefix: {@code H_} header, {@code L_} lane, {@code D_} slot descriptor.
 */
final class SegmentLayout {
    private SegmentLayout() {}

    static final String SHM_DIR = "/dev/shm";
    static final byte[] MAGIC = "SLUICESG".getBytes(StandardCharsets.US_ASCII);
    static final int VERSION = 1;
    static final int PAGE = 4096;
    static final int MIN_FILE_SIZE = PAGE;
    static final int MAX_LANES = 31;
    static final int MIN_SLOT_SIZE = 256;

    /** Header {@code flags} bit 0: every slot carries a CRC32C. */
    static final int FLAG_CHECKSUMS = 1;

    // Header.
    static final int H_MAGIC = 0;
    static final int H_VERSION = 8;
    static final int H_FLAGS = 12;
    static final int H_SLOT_COUNT = 16;
    static final int H_LANE_COUNT = 20;
    static final int H_SLOT_SIZE = 24;
    static final int H_SEGMENT_SIZE = 32;
    static final int H_LANE_TABLE_OFFSET = 40;
    static final int H_LANE_SIZE = 48;
    static final int H_RING_CAPACITY = 56;
    static final int H_SCHEMA_LENGTH = 60;
    static final int H_DESCRIPTOR_TABLE_OFFSET = 64;
    static final int H_SLOT_DATA_OFFSET = 72;
    static final int H_LIVENESS_TIMEOUT_NS = 80;
    static final int H_OBJECT_KIND = 88;
    static final int H_HEADER_SIZE = 92;
    static final int H_WRITER_PID = 128;
    static final int H_WRITER_HEARTBEAT_NS = 136;
    static final int H_WRITER_STATE = 144;
    static final int H_OBJECTS_PUBLISHED = 152;
    static final int H_WRITER_WAITING = 192;
    static final int H_SCHEMA = 256;

    static final int WRITER_ACTIVE = 1;
    static final int WRITER_CLOSED = 2;

    // Lane.
    static final int L_LANE_WORD = 0;
    static final int L_READER_PID = 8;
    static final int L_WRITE_POS = 64;
    static final int L_READ_POS = 128;
    static final int L_READER_HEARTBEAT_NS = 136;
    static final int L_READER_WAITING = 144;
    static final int L_RING = 192;

    static final int LANE_FREE = 0;
    static final int LANE_ATTACHED = 1;
    static final int LANE_CLOSED = 2;
    static final int LANE_RECLAIMING = 3;

    // Slot descriptor.
    static final int DESCRIPTOR_SIZE = 64;
    static final int D_STATE_WORD = 0;
    static final int D_FLAGS = 8;
    static final int D_LENGTH = 12;
    static final int D_OBJECT_ID = 16;
    static final int D_RECORD_COUNT = 24;
    static final int D_PARTITION = 28;
    static final int D_FIRST_OFFSET = 32;
    static final int D_LAST_OFFSET = 40;
    static final int D_CHECKSUM = 48;

    /** Descriptor {@code flags} bit 0: {@code checksum} holds the CRC32C of the slot data. */
    static final int SLOT_HAS_CHECKSUM = 1;

    /** {@code holders} bit 31: the writer holds the slot (WRITING). */
    static final long WRITER_BIT = 1L << 31;

    static final long LOW32 = 0xFFFF_FFFFL;

    /**
     * Java maps at most 2 GiB per buffer; a slot must fit one, so this (a multiple of 64) is the
     * largest slot size the Java side handles.
     */
    static final long MAX_JAVA_SLOT_SIZE = Integer.MAX_VALUE & ~63L;

    static int ringCapacity(int slotCount) {
        return slotCount <= 1 ? 1 : Integer.highestOneBit(slotCount - 1) << 1;
    }

    static long laneSize(int ringCapacity) {
        return align(L_RING + 8L * ringCapacity, 64);
    }

    static long align(long value, long alignment) {
        return (value + alignment - 1) / alignment * alignment;
    }

    /** The header size a writer uses for a schema message of this length. */
    static int headerSizeFor(int schemaLength) {
        return (int) Math.max(PAGE, align(H_SCHEMA + (long) schemaLength, PAGE));
    }

    static long laneWord(long epoch, int state) {
        return epoch << 32 | state;
    }

    static int laneState(long laneWord) {
        return (int) (laneWord & LOW32);
    }

    static long laneEpoch(long laneWord) {
        return laneWord >>> 32;
    }

    static long generation(long stateOrEntry) {
        return stateOrEntry >>> 32;
    }

    static long holders(long stateWord) {
        return stateWord & LOW32;
    }

    static long stateWord(long generation, long holders) {
        return (generation & LOW32) << 32 | holders;
    }

    /**
     * Reads and checks every immutable header field against the spec's "Validation" list, before
     * any offset is trusted. {@code header} holds at least the first 4096 bytes of the file.
     */
    static SegmentHeader validate(ByteBuffer header, long fileSize) throws SegmentFormatException {
        if (fileSize < MIN_FILE_SIZE) {
            throw new SegmentFormatException(
                    "file_size", fileSize, "a segment is at least 4096 bytes");
        }
        ByteBuffer b = header.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        byte[] magic = new byte[MAGIC.length];
        b.get(H_MAGIC, magic);
        if (!Arrays.equals(magic, MAGIC)) {
            throw new SegmentFormatException(
                    "magic", hex(magic), "expected 534C554943455347 (SLUICESG)");
        }
        int version = b.getInt(H_VERSION);
        if (version != VERSION) {
            throw new SegmentFormatException(
                    "version", Integer.toUnsignedString(version), "expected 1");
        }
        int flags = b.getInt(H_FLAGS);
        if ((flags & ~FLAG_CHECKSUMS) != 0) {
            throw new SegmentFormatException(
                    "flags",
                    "0x" + Integer.toHexString(flags),
                    "only bit 0 (CHECKSUMS) is defined");
        }
        long slotCount = Integer.toUnsignedLong(b.getInt(H_SLOT_COUNT));
        if (!Limits.isSlotCount(slotCount)) {
            throw new SegmentFormatException("slot_count", slotCount, "must be 1 to 65536");
        }
        long laneCount = Integer.toUnsignedLong(b.getInt(H_LANE_COUNT));
        if (laneCount < 1 || laneCount > MAX_LANES) {
            throw new SegmentFormatException("lane_count", laneCount, "must be 1 to 31");
        }
        long slotSize = b.getLong(H_SLOT_SIZE);
        if (slotSize < MIN_SLOT_SIZE || slotSize % 64 != 0) {
            throw new SegmentFormatException(
                    "slot_size",
                    Long.toUnsignedString(slotSize),
                    "must be a multiple of 64 and at least 256");
        }
        if (slotSize > MAX_JAVA_SLOT_SIZE) {
            throw new SegmentFormatException(
                    "slot_size", slotSize, "larger than the 2 GiB a Java mapping can hold");
        }
        long headerSize = Integer.toUnsignedLong(b.getInt(H_HEADER_SIZE));
        if (headerSize < PAGE || headerSize % PAGE != 0 || headerSize > fileSize) {
            throw new SegmentFormatException(
                    "header_size",
                    headerSize,
                    "must be a multiple of 4096, at least 4096, inside the file of "
                            + fileSize
                            + " bytes");
        }
        int ringCapacity = ringCapacity((int) slotCount);
        long ringCapacityField = Integer.toUnsignedLong(b.getInt(H_RING_CAPACITY));
        if (ringCapacityField != ringCapacity) {
            throw new SegmentFormatException(
                    "ring_capacity",
                    ringCapacityField,
                    "expected " + ringCapacity + " for slot_count " + slotCount);
        }
        long laneSize = laneSize(ringCapacity);
        expect(b, H_LANE_SIZE, "lane_size", laneSize);
        long laneTableOffset = headerSize;
        expect(b, H_LANE_TABLE_OFFSET, "lane_table_offset", laneTableOffset);
        long descriptorTableOffset = laneTableOffset + laneCount * laneSize;
        expect(b, H_DESCRIPTOR_TABLE_OFFSET, "descriptor_table_offset", descriptorTableOffset);
        long slotDataOffset = align(descriptorTableOffset + slotCount * DESCRIPTOR_SIZE, PAGE);
        expect(b, H_SLOT_DATA_OFFSET, "slot_data_offset", slotDataOffset);
        // slot_count <= 2^16 and slot_size < 2^31, so this cannot overflow.
        long segmentSize = slotDataOffset + slotCount * slotSize;
        expect(b, H_SEGMENT_SIZE, "segment_size", segmentSize);
        if (segmentSize != fileSize) {
            throw new SegmentFormatException(
                    "segment_size", segmentSize, "the file has " + fileSize + " bytes");
        }
        long schemaLength = Integer.toUnsignedLong(b.getInt(H_SCHEMA_LENGTH));
        if (schemaLength == 0 || schemaLength > headerSize - H_SCHEMA) {
            throw new SegmentFormatException(
                    "schema_length",
                    schemaLength,
                    "must be 1 to header_size - 256 = " + (headerSize - H_SCHEMA));
        }
        long liveness = b.getLong(H_LIVENESS_TIMEOUT_NS);
        if (liveness <= 0) {
            throw new SegmentFormatException("liveness_timeout_ns", liveness, "must be positive");
        }
        int kindCode = b.getInt(H_OBJECT_KIND);
        ObjectKind kind = ObjectKind.fromCode(kindCode);
        if (kind == null) {
            throw new SegmentFormatException(
                    "object_kind", kindCode, "expected 1 (RECORDS) or 2 (CHUNKS)");
        }
        return new SegmentHeader(
                (flags & FLAG_CHECKSUMS) != 0,
                (int) slotCount,
                (int) laneCount,
                slotSize,
                segmentSize,
                laneTableOffset,
                laneSize,
                ringCapacity,
                (int) schemaLength,
                descriptorTableOffset,
                slotDataOffset,
                liveness,
                kind,
                (int) headerSize);
    }

    private static void expect(ByteBuffer b, int offset, String field, long expected)
            throws SegmentFormatException {
        long actual = b.getLong(offset);
        if (actual != expected) {
            throw new SegmentFormatException(
                    field, Long.toUnsignedString(actual), "the layout puts it at " + expected);
        }
    }

    /** Writes the immutable header fields; the counterpart of {@link #validate}. */
    static void write(ByteBuffer header, SegmentHeader h) {
        ByteBuffer b = header.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        b.put(H_MAGIC, MAGIC);
        b.putInt(H_VERSION, VERSION);
        b.putInt(H_FLAGS, h.checksums() ? FLAG_CHECKSUMS : 0);
        b.putInt(H_SLOT_COUNT, h.slotCount());
        b.putInt(H_LANE_COUNT, h.laneCount());
        b.putLong(H_SLOT_SIZE, h.slotSize());
        b.putLong(H_SEGMENT_SIZE, h.segmentSize());
        b.putLong(H_LANE_TABLE_OFFSET, h.laneTableOffset());
        b.putLong(H_LANE_SIZE, h.laneSize());
        b.putInt(H_RING_CAPACITY, h.ringCapacity());
        b.putInt(H_SCHEMA_LENGTH, h.schemaLength());
        b.putLong(H_DESCRIPTOR_TABLE_OFFSET, h.descriptorTableOffset());
        b.putLong(H_SLOT_DATA_OFFSET, h.slotDataOffset());
        b.putLong(H_LIVENESS_TIMEOUT_NS, h.livenessTimeoutNanos());
        b.putInt(H_OBJECT_KIND, h.objectKind().code());
        b.putInt(H_HEADER_SIZE, h.headerSize());
    }

    /** The geometry a writer lays out for these parameters. */
    static SegmentHeader plan(
            boolean checksums,
            int slotCount,
            int laneCount,
            long slotSize,
            int schemaLength,
            long livenessTimeoutNanos,
            ObjectKind kind) {
        int ringCapacity = ringCapacity(slotCount);
        long laneSize = laneSize(ringCapacity);
        int headerSize = headerSizeFor(schemaLength);
        long descriptorTableOffset = headerSize + (long) laneCount * laneSize;
        long slotDataOffset =
                align(descriptorTableOffset + (long) slotCount * DESCRIPTOR_SIZE, PAGE);
        return new SegmentHeader(
                checksums,
                slotCount,
                laneCount,
                slotSize,
                slotDataOffset + slotCount * slotSize,
                headerSize,
                laneSize,
                ringCapacity,
                schemaLength,
                descriptorTableOffset,
                slotDataOffset,
                livenessTimeoutNanos,
                kind,
                headerSize);
    }

    /** {@code NAME} means {@code /dev/shm/NAME}; anything with a slash is a path. */
    static Path resolve(String nameOrPath) {
        return nameOrPath.indexOf('/') >= 0 ? Path.of(nameOrPath) : Path.of(SHM_DIR, nameOrPath);
    }

    /** Where the doorbell socket of the segment at {@code segment} listens. */
    static Path bellPath(Path segment) {
        return segment.resolveSibling(segment.getFileName() + ".bell");
    }

    static String hex(byte[] bytes) {
        StringBuilder s = new StringBuilder();
        for (byte x : bytes) {
            s.append(String.format("%02X", x));
        }
        return s.toString();
    }
}
