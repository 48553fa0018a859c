package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What both encoders share (BatchEncoder): a written batch starts again empty on the same buffers,
 * and an object's partition and offsets come from its rows or are {@code -1}; and a chunks batch
 * whose payloads are added by reference is written as the same message as one that holds them.
 */
class BatchEncoderTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    @TempDir Path dir;
    private final BufferAllocator allocator = new RootAllocator();

    @AfterEach
    void closeAllocator() {
        allocator.close();
    }

    private SegmentWriter writer(ObjectKind kind) throws Exception {
        return SegmentWriter.builder(dir.resolve("seg"))
                .objectKind(kind)
                .slotCount(4)
                .slotSize(4096)
                .create();
    }

    @Test
    void aWrittenBatchStartsAgainWithItsOwnRowsAndHeaders() throws Exception {
        try (SegmentWriter writer = writer(ObjectKind.RECORDS);
                SegmentReader reader = SegmentReader.open(writer.path());
                ArrowBatchReader decoder =
                        new ArrowBatchReader(ObjectKind.RECORDS.schema(), allocator);
                RecordsBatchEncoder batch = new RecordsBatchEncoder(allocator)) {
            batch.add(0, 1, 1L, null, null, List.of(header("a", "1"), header("b", "2")));
            batch.writeTo(writer, TIMEOUT);
            assertThat(batch.rowCount()).isZero();
            assertThat(batch.root().getRowCount()).isZero();
            batch.add(0, 2, 2L, null, null, List.of(header("c", "3")));
            batch.writeTo(writer, TIMEOUT);

            try (SegmentObject first = reader.poll(TIMEOUT)) {
                assertThat(headerKeys(decoder.load(first))).containsExactly("a", "b");
            }
            try (SegmentObject second = reader.poll(TIMEOUT)) {
                VectorSchemaRoot root = decoder.load(second);
                assertThat(root.getRowCount()).isEqualTo(1);
                assertThat(headerKeys(root))
                        .as("the second batch's own header")
                        .containsExactly("c");
            }
        }
    }

    @Test
    void chunksAndEmptyBatchesHaveNoPartitionOrOffsets() throws Exception {
        try (SegmentWriter writer = writer(ObjectKind.CHUNKS);
                SegmentReader reader = SegmentReader.open(writer.path());
                ChunksBatchEncoder batch = new ChunksBatchEncoder(allocator)) {
            batch.add("job-1", "s0", 0, true, new byte[] {1});
            batch.writeTo(writer, TIMEOUT);
            batch.writeTo(writer, TIMEOUT);

            for (int rows : new int[] {1, 0}) {
                try (SegmentObject object = reader.poll(TIMEOUT)) {
                    assertThat(object.recordCount()).isEqualTo(rows);
                    assertThat(object.partition()).isEqualTo(-1);
                    assertThat(object.firstOffset()).isEqualTo(-1);
                    assertThat(object.lastOffset()).isEqualTo(-1);
                }
            }
        }
    }

    @Test
    void aBatchAddedByReferenceIsTheSameMessageAsOneHoldingItsPayloads() throws Exception {
        byte[] first = TestContent.value(7, 1500);
        byte[] second = TestContent.value(8, 701);
        try (SegmentWriter writer = writer(ObjectKind.CHUNKS);
                SegmentReader reader = SegmentReader.open(writer.path());
                ArrowBatchReader decoder =
                        new ArrowBatchReader(ObjectKind.CHUNKS.schema(), allocator);
                ChunksBatchEncoder held = new ChunksBatchEncoder(allocator);
                ChunksBatchEncoder byReference = new ChunksBatchEncoder(allocator)) {
            held.add("job-1", "cyan", 4, false, first);
            held.add("job-1", "cyan", 5, true, second);
            byReference.addReferenced("job-1", "cyan", 4, false, first);
            byReference.addReferenced("job-1", "cyan", 5, true, second);

            WritableSlot heldSlot = writer.claim(TIMEOUT);
            WritableSlot referencedSlot = writer.claim(TIMEOUT);
            int heldLength = held.writeTo(heldSlot);
            int referencedLength = byReference.writeTo(referencedSlot);
            assertThat(referencedLength).isEqualTo(heldLength);
            assertThat(referencedSlot.buffer().limit(referencedLength))
                    .isEqualTo(heldSlot.buffer().limit(heldLength));
            writer.abandon(heldSlot);
            writer.abandon(referencedSlot);

            // Through the writer, as a whole object: the payloads as they were.
            byReference.writeTo(writer, TIMEOUT);
            assertThat(byReference.rowCount()).isZero();
            try (SegmentObject object = reader.poll(TIMEOUT)) {
                VectorSchemaRoot root = decoder.load(object);
                VarBinaryVector payloads = (VarBinaryVector) root.getVector("payload");
                assertThat(root.getRowCount()).isEqualTo(2);
                assertThat(payloads.get(0)).isEqualTo(first);
                assertThat(payloads.get(1)).isEqualTo(second);
            }
        }
    }

    @Test
    void aBatchTakesItsRowsAllByReferenceOrNone() {
        try (ChunksBatchEncoder byReference = new ChunksBatchEncoder(allocator);
                ChunksBatchEncoder held = new ChunksBatchEncoder(allocator)) {
            byReference.addReferenced("job-1", "cyan", 0, false, new byte[] {1});
            assertThatThrownBy(() -> byReference.add("job-1", "cyan", 1, false, new byte[] {2}))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("addReferenced");
            held.add("job-1", "cyan", 0, false, new byte[] {1});
            assertThatThrownBy(() -> held.addReferenced("job-1", "cyan", 1, false, new byte[] {2}))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("hold their payloads");

            // A cleared batch takes either way again.
            byReference.clear();
            byReference.add("job-1", "cyan", 1, false, new byte[] {2});
            assertThat(byReference.rowCount()).isEqualTo(1);
        }
    }

    private static RecordHeader header(String key, String value) {
        return new RecordHeader(key, value.getBytes(StandardCharsets.UTF_8));
    }

    private static List<String> headerKeys(VectorSchemaRoot root) {
        ListVector headers = (ListVector) root.getVector("headers");
        return headers.getObject(0).stream()
                .map(h -> String.valueOf(((Map<?, ?>) h).get("key")))
                .toList();
    }
}
