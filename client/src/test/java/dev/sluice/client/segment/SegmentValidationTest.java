package dev.sluice.client.segment;

import static dev.sluice.client.segment.SegmentLayout.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.function.Consumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Broken segments are refused with an error naming the field, never a crash or a read out of
 * bounds. Each case damages a copy of a valid segment that holds two published objects.
 */
class SegmentValidationTest {
    @TempDir Path dir;
    private final BufferAllocator allocator = new RootAllocator();
    private Path valid;
    private SegmentHeader header;

    @BeforeEach
    void writeValidSegment() throws Exception {
        Path live = dir.resolve("live");
        valid = dir.resolve("valid");
        try (SegmentWriter writer =
                        SegmentWriter.builder(live)
                                .objectKind(ObjectKind.RECORDS)
                                .slotCount(3)
                                .slotSize(4096)
                                .laneCount(2)
                                .create();
                SegmentReader reader = SegmentReader.open(live)) {
            // The reader attached, so the objects stay PUBLISHED in the copy.
            TestContent.write(writer, allocator, 10, 30, 5);
            assertThat(reader.header()).isEqualTo(writer.header());
            Files.copy(live, valid);
            header = writer.header();
        }
    }

    @AfterEach
    void closeAllocator() {
        allocator.close();
    }

    private Path damaged(Consumer<ByteBuffer> damage) throws Exception {
        Path copy = Files.createTempFile(dir, "damaged", "");
        Files.copy(valid, copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel channel =
                FileChannel.open(copy, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MappedByteBuffer map = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size());
            damage.accept(map.order(ByteOrder.LITTLE_ENDIAN));
        }
        return copy;
    }

    private static void assertRefused(Path path, String field) {
        assertThatThrownBy(() -> SegmentInspector.open(path).publishedObjects())
                .isInstanceOf(SegmentFormatException.class)
                .satisfies(e -> assertThat(((SegmentFormatException) e).field()).isEqualTo(field))
                .hasMessageStartingWith(field + " = ");
    }

    /** Inspects and decodes every published object, as the vector test does. */
    private long decodeAll(Path path) throws Exception {
        SegmentInspector inspector = SegmentInspector.open(path);
        long rows = 0;
        try (ArrowBatchReader batches = new ArrowBatchReader(inspector.schema(), allocator)) {
            for (SegmentObject object : inspector.publishedObjects()) {
                rows += batches.loadAndValidateFully(object).getRowCount();
            }
        }
        return rows;
    }

    @Test
    void theUndamagedCopyIsValid() throws Exception {
        assertThat(decodeAll(valid)).isEqualTo(10);
        SegmentInspector inspector = SegmentInspector.open(valid);
        assertThat(inspector.objectsPublished()).isEqualTo(2);
        assertThat(inspector.writerClosed()).as("copied while the writer was active").isFalse();
    }

    @Test
    void wrongMagic() throws Exception {
        assertRefused(damaged(b -> b.put(H_MAGIC, (byte) 'X')), "magic");
    }

    @Test
    void wrongVersion() throws Exception {
        assertRefused(damaged(b -> b.putInt(H_VERSION, 2)), "version");
    }

    @Test
    void unknownFlags() throws Exception {
        assertRefused(damaged(b -> b.putInt(H_FLAGS, 6)), "flags");
    }

    @Test
    void laneAndSlotCountsOutOfRange() throws Exception {
        assertRefused(damaged(b -> b.putInt(H_LANE_COUNT, 0)), "lane_count");
        assertRefused(damaged(b -> b.putInt(H_LANE_COUNT, 32)), "lane_count");
        assertRefused(damaged(b -> b.putInt(H_SLOT_COUNT, 0)), "slot_count");
        assertRefused(damaged(b -> b.putInt(H_SLOT_COUNT, 65537)), "slot_count");
    }

    @Test
    void slotSizeNotAMultipleOf64OrTooSmall() throws Exception {
        assertRefused(damaged(b -> b.putLong(H_SLOT_SIZE, 4096 + 8)), "slot_size");
        assertRefused(damaged(b -> b.putLong(H_SLOT_SIZE, 128)), "slot_size");
        assertRefused(damaged(b -> b.putLong(H_SLOT_SIZE, -64)), "slot_size");
    }

    @Test
    void derivedSizesMustMatch() throws Exception {
        assertRefused(damaged(b -> b.putInt(H_RING_CAPACITY, 8)), "ring_capacity");
        assertRefused(damaged(b -> b.putLong(H_LANE_SIZE, 512)), "lane_size");
        assertRefused(damaged(b -> b.putInt(H_HEADER_SIZE, 100)), "header_size");
    }

    @Test
    void regionsOutOfPlaceOrOutOfTheFile() throws Exception {
        assertRefused(damaged(b -> b.putLong(H_LANE_TABLE_OFFSET, 0)), "lane_table_offset");
        assertRefused(
                damaged(b -> b.putLong(H_DESCRIPTOR_TABLE_OFFSET, 1L << 40)),
                "descriptor_table_offset");
        assertRefused(
                damaged(b -> b.putLong(H_SLOT_DATA_OFFSET, header.segmentSize())),
                "slot_data_offset");
        assertRefused(
                damaged(b -> b.putLong(H_SEGMENT_SIZE, header.segmentSize() * 2)), "segment_size");
    }

    @Test
    void truncatedFiles() throws Exception {
        Path tiny = dir.resolve("tiny");
        Files.write(tiny, new byte[100]);
        assertRefused(tiny, "file_size");

        Path cut = damaged(b -> {});
        try (FileChannel channel = FileChannel.open(cut, StandardOpenOption.WRITE)) {
            channel.truncate(header.segmentSize() - 4096);
        }
        assertRefused(cut, "segment_size");
    }

    @Test
    void schemaTooLongOrUnparsable() throws Exception {
        assertRefused(damaged(b -> b.putInt(H_SCHEMA_LENGTH, 4096)), "schema_length");
        assertRefused(damaged(b -> b.putInt(H_SCHEMA, 0x12345678)), "schema");
    }

    @Test
    void unknownObjectKind() throws Exception {
        assertRefused(damaged(b -> b.putInt(H_OBJECT_KIND, 3)), "object_kind");
    }

    private int descriptorOf(int slot) {
        return (int) (header.descriptorTableOffset() + slot * DESCRIPTOR_SIZE);
    }

    @Test
    void slotLengthLargerThanTheSlot() throws Exception {
        assertRefused(damaged(b -> b.putInt(descriptorOf(0) + D_LENGTH, 4097)), "length");
        assertRefused(damaged(b -> b.putInt(descriptorOf(1) + D_LENGTH, -1)), "length");
    }

    @Test
    void badChecksum() throws Exception {
        int data = (int) header.slotDataOffset();
        assertRefused(damaged(b -> b.put(data + 200, (byte) (b.get(data + 200) ^ 1))), "checksum");
    }

    @Test
    void impossibleSlotState() throws Exception {
        // Lane 5 of a 2-lane segment holds it.
        assertRefused(
                damaged(b -> b.putLong(descriptorOf(0) + D_STATE_WORD, stateWord(1, 1L << 5))),
                "state_word");
        assertRefused(
                damaged(
                        b ->
                                b.putLong(
                                        descriptorOf(0) + D_STATE_WORD,
                                        stateWord(1, WRITER_BIT | 1))),
                "state_word");
    }

    @Test
    void garbageMessageIsRefusedWhenDecoded() throws Exception {
        int data = (int) header.slotDataOffset();
        int descriptor = descriptorOf(0);
        Path path =
                damaged(
                        b -> {
                            b.putInt(data + 4, 1 << 20);
                            b.putInt(descriptor + D_FLAGS, 0);
                        });
        assertThatThrownBy(() -> decodeAll(path))
                .isInstanceOf(SegmentFormatException.class)
                .satisfies(
                        e -> assertThat(((SegmentFormatException) e).field()).isEqualTo("message"));
    }

    /**
     * A batch whose rows outnumber what its buffers hold (ten rows' buffers, 1000 rows claimed).
     * Arrow Java loads it without a word: the root's row count grows each vector to fit,
     * reallocated off the slot and zero-filled, so 990 rows the object does not hold would read as
     * empty. The live reader's check refuses it, not only the full validation.
     */
    @Test
    void rowsBeyondTheirBuffersAreRefusedWhenLoaded() throws Exception {
        Path path = dir.resolve("overclaimed");
        int rows = 1000;
        try (SegmentWriter writer =
                        SegmentWriter.builder(path)
                                .objectKind(ObjectKind.RECORDS)
                                .slotCount(1)
                                .slotSize(8192)
                                .create();
                SegmentReader reader = SegmentReader.open(path);
                RecordsBatchEncoder batch = new RecordsBatchEncoder(allocator)) {
            for (long i = 0; i < 10; i++) {
                TestContent.addRecord(batch, i, 30);
            }
            WritableSlot slot = writer.claim(Duration.ofSeconds(1));
            try (ArrowRecordBatch honest = new VectorUnloader(batch.root()).getRecordBatch();
                    ArrowRecordBatch overclaimed =
                            new ArrowRecordBatch(
                                    rows,
                                    honest.getNodes().stream()
                                            .map(node -> new ArrowFieldNode(rows, 0))
                                            .toList(),
                                    honest.getBuffers())) {
                ByteArrayOutputStream message = new ByteArrayOutputStream();
                MessageSerializer.serialize(
                        new WriteChannel(Channels.newChannel(message)), overclaimed);
                slot.buffer().clear().put(message.toByteArray());
                writer.publish(slot, message.size(), rows, 0, 0, rows - 1);
            }
            try (SegmentObject object = reader.poll(Duration.ofSeconds(1));
                    ArrowBatchReader batches = new ArrowBatchReader(reader.schema(), allocator)) {
                assertThatThrownBy(() -> batches.load(object))
                        .isInstanceOfSatisfying(
                                SegmentFormatException.class,
                                e -> assertThat(e.field()).isEqualTo("message"))
                        .hasMessageContaining("not a valid record batch")
                        .hasMessageContaining("do not hold its 1000 values");
            }
        }
    }

    @Test
    void recordCountMustMatchTheBatch() throws Exception {
        Path path = damaged(b -> b.putInt(descriptorOf(0) + D_RECORD_COUNT, 6));
        assertThatThrownBy(() -> decodeAll(path))
                .isInstanceOfSatisfying(
                        SegmentFormatException.class,
                        e -> assertThat(e.field()).isEqualTo("record_count"));
    }

    @Test
    void liveReaderRefusesACorruptEntry() throws Exception {
        Path path = dir.resolve("corrupt-live");
        try (SegmentWriter writer =
                        SegmentWriter.builder(path)
                                .objectKind(ObjectKind.RECORDS)
                                .slotCount(2)
                                .slotSize(4096)
                                .create();
                SegmentReader reader = SegmentReader.open(path)) {
            TestContent.write(writer, allocator, 2, 10, 1);
            MappedSegment raw = MappedSegment.open(path, true);
            long entry = raw.ringEntry(reader.lane(), 0);
            raw.ringEntry(reader.lane(), 0, stateWord(generation(entry) + 7, entry & LOW32));
            raw.ringEntry(reader.lane(), 1, stateWord(generation(entry), 99));

            assertThatThrownBy(() -> reader.poll(Duration.ofSeconds(1)))
                    .isInstanceOfSatisfying(
                            SegmentFormatException.class,
                            e -> assertThat(e.field()).isEqualTo("state_word"));
            assertThatThrownBy(() -> reader.poll(Duration.ofSeconds(1)))
                    .isInstanceOfSatisfying(
                            SegmentFormatException.class,
                            e -> assertThat(e.field()).isEqualTo("ring"));
        }
    }
}
