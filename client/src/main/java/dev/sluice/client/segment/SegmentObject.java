package dev.sluice.client.segment;

import static dev.sluice.client.segment.SegmentLayout.*;

import dev.sluice.client.annotation.PublicEvolving;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * One published object, seen in place in the segment: the descriptor's fields and the Arrow IPC
 * record-batch message in the slot, without a copy.
 *
 * <p>The message is valid until {@link #release()}; after that the writer may reuse the slot, so
 * neither the buffer nor vectors loaded from it may be touched. Closing releases.
 */
@PublicEvolving
public final class SegmentObject implements AutoCloseable {
    private final SegmentReader owner;
    private final int slot;
    private final long generation;
    private final long objectId;
    private final int recordCount;
    private final int partition;
    private final long firstOffset;
    private final long lastOffset;
    private final ByteBuffer message;
    private boolean released;

    private SegmentObject(
            SegmentReader owner,
            int slot,
            long generation,
            ByteBuffer descriptor,
            ByteBuffer message) {
        this.owner = owner;
        this.slot = slot;
        this.generation = generation;
        this.objectId = descriptor.getLong(D_OBJECT_ID);
        this.recordCount = descriptor.getInt(D_RECORD_COUNT);
        this.partition = descriptor.getInt(D_PARTITION);
        this.firstOffset = descriptor.getLong(D_FIRST_OFFSET);
        this.lastOffset = descriptor.getLong(D_LAST_OFFSET);
        this.message = message;
    }

    /**
     * Reads slot {@code slot}'s descriptor and checks its data as the spec's cycle asks: the length
     * fits the slot and, with {@code HAS_CHECKSUM}, the CRC32C matches. The caller has already
     * checked the state word, so the descriptor is stable while it holds the slot.
     */
    static SegmentObject read(MappedSegment segment, int slot, long generation, SegmentReader owner)
            throws SegmentFormatException {
        ByteBuffer descriptor =
                segment.control
                        .slice(segment.descriptor(slot), DESCRIPTOR_SIZE)
                        .order(segment.control.order());
        long length = Integer.toUnsignedLong(descriptor.getInt(D_LENGTH));
        if (length > segment.header.slotSize()) {
            throw new SegmentFormatException(
                    "length",
                    length,
                    "slot "
                            + slot
                            + " holds at most slot_size = "
                            + segment.header.slotSize()
                            + " bytes");
        }
        int flags = descriptor.getInt(D_FLAGS);
        if ((flags & ~SLOT_HAS_CHECKSUM) != 0) {
            throw new SegmentFormatException(
                    "flags",
                    "0x" + Integer.toHexString(flags),
                    "slot " + slot + ": only bit 0 (HAS_CHECKSUM) is defined");
        }
        ByteBuffer message =
                segment.slotData(slot)
                        .limit((int) length)
                        .asReadOnlyBuffer()
                        .order(segment.control.order());
        if ((flags & SLOT_HAS_CHECKSUM) != 0) {
            CRC32C crc = new CRC32C();
            crc.update(message.duplicate());
            int expected = descriptor.getInt(D_CHECKSUM);
            if ((int) crc.getValue() != expected) {
                throw new SegmentFormatException(
                        "checksum",
                        "0x" + Integer.toHexString(expected),
                        "slot "
                                + slot
                                + ": the data's CRC32C is 0x"
                                + Long.toHexString(crc.getValue()));
            }
        }
        return new SegmentObject(owner, slot, generation, descriptor, message);
    }

    /** Unique within the segment, increasing in publication order. */
    public long objectId() {
        return objectId;
    }

    /** Rows of the record batch. */
    public int recordCount() {
        return recordCount;
    }

    /** The Kafka partition, or {@code -1} when the object spans partitions or none applies. */
    public int partition() {
        return partition;
    }

    /**
     * The first Kafka offset of {@link #partition()} in the object, or {@code -1} when the object
     * spans partitions (then each row's partition and offset say where it came from) or none
     * applies.
     */
    public long firstOffset() {
        return firstOffset;
    }

    /** The last Kafka offset of {@link #partition()} in the object, or {@code -1} as above. */
    public long lastOffset() {
        return lastOffset;
    }

    /** The slot the object lives in. */
    public int slot() {
        return slot;
    }

    /**
     * The encapsulated Arrow IPC record-batch message, read-only, over the shared memory itself.
     */
    public ByteBuffer message() {
        return message.duplicate();
    }

    long generation() {
        return generation;
    }

    /**
     * Gives the slot back. Idempotent; objects from {@link SegmentInspector} have nothing to
     * release.
     *
     * @throws ReaderEvictedException if the writer took the lane back meanwhile: whatever was read
     *     from this object may have been overwritten and must not be trusted
     */
    public void release() throws SegmentException {
        if (released) {
            return;
        }
        released = true;
        if (owner != null) {
            owner.release(this);
        }
    }

    @Override
    public void close() throws SegmentException {
        release();
    }
}
