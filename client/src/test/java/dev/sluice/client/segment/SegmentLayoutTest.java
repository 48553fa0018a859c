package dev.sluice.client.segment;

import static dev.sluice.client.segment.SegmentLayout.*;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The constants against the tables of {@code docs/formats.md}, and the derived sizes. */
class SegmentLayoutTest {
    private static final Path SPEC = Path.of("..", "docs", "formats.md");
    private static final Pattern ROW = Pattern.compile("^\\| (\\d+) \\| [^|]+ \\| `(\\w+)` \\|");

    /** Offsets of the {@code `field`} rows of the table under {@code heading}. */
    private static Map<String, Integer> table(String heading) throws Exception {
        List<String> lines = Files.readAllLines(SPEC);
        int start = lines.indexOf(heading);
        assertThat(start).as("%s in %s", heading, SPEC).isNotNegative();
        Map<String, Integer> offsets = new LinkedHashMap<>();
        for (int i = start + 1; i < lines.size() && !lines.get(i).startsWith("#"); i++) {
            Matcher m = ROW.matcher(lines.get(i));
            if (m.find()) {
                offsets.put(m.group(2), Integer.parseInt(m.group(1)));
            }
        }
        return offsets;
    }

    @Test
    void headerOffsetsMatchTheSpec() throws Exception {
        Map<String, Integer> expected = new LinkedHashMap<>();
        expected.put("magic", H_MAGIC);
        expected.put("version", H_VERSION);
        expected.put("flags", H_FLAGS);
        expected.put("slot_count", H_SLOT_COUNT);
        expected.put("lane_count", H_LANE_COUNT);
        expected.put("slot_size", H_SLOT_SIZE);
        expected.put("segment_size", H_SEGMENT_SIZE);
        expected.put("lane_table_offset", H_LANE_TABLE_OFFSET);
        expected.put("lane_size", H_LANE_SIZE);
        expected.put("ring_capacity", H_RING_CAPACITY);
        expected.put("schema_length", H_SCHEMA_LENGTH);
        expected.put("descriptor_table_offset", H_DESCRIPTOR_TABLE_OFFSET);
        expected.put("slot_data_offset", H_SLOT_DATA_OFFSET);
        expected.put("liveness_timeout_ns", H_LIVENESS_TIMEOUT_NS);
        expected.put("object_kind", H_OBJECT_KIND);
        expected.put("header_size", H_HEADER_SIZE);
        expected.put("writer_pid", H_WRITER_PID);
        expected.put("writer_heartbeat_ns", H_WRITER_HEARTBEAT_NS);
        expected.put("writer_state", H_WRITER_STATE);
        expected.put("objects_published", H_OBJECTS_PUBLISHED);
        expected.put("writer_waiting", H_WRITER_WAITING);
        expected.put("schema", H_SCHEMA);
        assertThat(table("### Header")).containsExactlyEntriesOf(expected);
    }

    @Test
    void laneOffsetsMatchTheSpec() throws Exception {
        assertThat(table("### Lane table"))
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of(
                                "lane_word", L_LANE_WORD,
                                "reader_pid", L_READER_PID,
                                "write_pos", L_WRITE_POS,
                                "read_pos", L_READ_POS,
                                "reader_heartbeat_ns", L_READER_HEARTBEAT_NS,
                                "reader_waiting", L_READER_WAITING,
                                "ring", L_RING));
    }

    @Test
    void descriptorOffsetsMatchTheSpec() throws Exception {
        assertThat(table("### Slot descriptor (64 bytes, 64-aligned)"))
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of(
                                "state_word", D_STATE_WORD,
                                "flags", D_FLAGS,
                                "length", D_LENGTH,
                                "object_id", D_OBJECT_ID,
                                "record_count", D_RECORD_COUNT,
                                "partition", D_PARTITION,
                                "first_offset", D_FIRST_OFFSET,
                                "last_offset", D_LAST_OFFSET,
                                "checksum", D_CHECKSUM));
        assertThat(DESCRIPTOR_SIZE).isEqualTo(64);
    }

    @Test
    void magicIsSluicesg() {
        assertThat(hex(MAGIC)).isEqualTo("534C554943455347");
    }

    @Test
    void ringCapacityIsTheSmallestPowerOfTwoAtLeastSlotCount() {
        assertThat(ringCapacity(1)).isEqualTo(1);
        assertThat(ringCapacity(2)).isEqualTo(2);
        assertThat(ringCapacity(3)).isEqualTo(4);
        assertThat(ringCapacity(64)).isEqualTo(64);
        assertThat(ringCapacity(65)).isEqualTo(128);
        assertThat(ringCapacity(65536)).isEqualTo(65536);
    }

    @Test
    void laneSizeIsAlignedRing() {
        assertThat(laneSize(1)).isEqualTo(256);
        assertThat(laneSize(4)).isEqualTo(256);
        assertThat(laneSize(8)).isEqualTo(256);
        assertThat(laneSize(9)).isEqualTo(320);
        assertThat(laneSize(65536)).isEqualTo(192 + 8 * 65536);
    }

    @Test
    void plannedGeometryFollowsTheFileLayout() throws Exception {
        SegmentHeader h = plan(true, 10, 3, 1024, 300, 1_000_000_000L, ObjectKind.CHUNKS);
        assertThat(h.headerSize()).isEqualTo(4096);
        assertThat(h.ringCapacity()).isEqualTo(16);
        assertThat(h.laneSize()).isEqualTo(320);
        assertThat(h.laneTableOffset()).isEqualTo(4096);
        assertThat(h.descriptorTableOffset()).isEqualTo(4096 + 3 * 320);
        assertThat(h.slotDataOffset()).isEqualTo(8192);
        assertThat(h.segmentSize()).isEqualTo(8192 + 10 * 1024);
        assertThat(plan(false, 1, 1, 256, 4000, 1, ObjectKind.RECORDS).headerSize())
                .as("a schema past the first page grows the header")
                .isEqualTo(8192);

        ByteBuffer header = ByteBuffer.allocate(4096);
        write(header, h);
        assertThat(validate(header, h.segmentSize())).isEqualTo(h);
    }
}
