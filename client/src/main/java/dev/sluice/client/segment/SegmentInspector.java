package dev.sluice.client.segment;

import static dev.sluice.client.segment.SegmentLayout.*;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Looks at a segment without taking part in it: maps it read-only, validates the header and reads
 * every PUBLISHED slot, never attaching a lane nor releasing anything. For tools, test vectors and
 * post-mortems; a live writer may change slots while they are inspected.
 */
@PublicEvolving
public final class SegmentInspector {
    private final MappedSegment segment;
    private final Schema schema;

    private SegmentInspector(MappedSegment segment, Schema schema) {
        this.segment = segment;
        this.schema = schema;
    }

    /**
     * Maps and validates the segment at {@code path}.
     *
     * @throws SegmentFormatException naming the first field that breaks the format
     */
    public static SegmentInspector open(Path path) throws IOException {
        MappedSegment segment = MappedSegment.open(path, false);
        return new SegmentInspector(segment, ArrowBatchReader.parseSchema(segment.schemaMessage()));
    }

    public SegmentHeader header() {
        return segment.header;
    }

    public Schema schema() {
        return schema;
    }

    /** How many objects the writer has published so far ({@code objects_published}). */
    public long objectsPublished() {
        return segment.objectsPublished();
    }

    /** Whether the writer has closed the segment: no more objects will come. */
    public boolean writerClosed() {
        return segment.writerState() == WRITER_CLOSED;
    }

    /**
     * Every slot that holds a published object, in object-id order, each checked as a reader checks
     * it (state, length, checksum). Slots that are FREE or being written are skipped.
     *
     * @throws SegmentFormatException for a slot whose state no writer could have produced or whose
     *     data fails its checks
     */
    public List<SegmentObject> publishedObjects() throws SegmentFormatException {
        long laneMask = (1L << segment.header.laneCount()) - 1;
        List<SegmentObject> objects = new ArrayList<>();
        for (int slot = 0; slot < segment.header.slotCount(); slot++) {
            long state = segment.stateWord(slot);
            long holders = holders(state);
            if (holders == 0 || holders == WRITER_BIT) {
                continue;
            }
            if ((holders & ~laneMask) != 0) {
                throw new SegmentFormatException(
                        "state_word",
                        "0x" + Long.toHexString(state),
                        "slot "
                                + slot
                                + " holders name lanes beyond lane_count "
                                + segment.header.laneCount()
                                + " or mix the writer with readers");
            }
            objects.add(SegmentObject.read(segment, slot, generation(state), null));
        }
        objects.sort(Comparator.comparingLong(SegmentObject::objectId));
        return objects;
    }
}
