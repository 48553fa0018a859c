package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A writer thread and a reader thread in one process: every row arrives intact and in order. */
class SegmentRoundTripTest {
    @TempDir Path dir;
    private final BufferAllocator allocator = new RootAllocator();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void tearDown() {
        threads.shutdownNow();
        allocator.close();
    }

    @ParameterizedTest(name = "{0}, checksums {1}, doorbell {2}")
    @CsvSource({
        "RECORDS, true, true",
        "RECORDS, false, false",
        "CHUNKS, true, false",
        "CHUNKS, false, true"
    })
    void everyRowArrivesInOrder(ObjectKind kind, boolean checksums, boolean doorbell)
            throws Exception {
        long count = 2_000;
        Path path = dir.resolve("seg");
        // The writer thread closes it: that is the end of the stream.
        SegmentWriter writer =
                SegmentWriter.builder(path)
                        .objectKind(kind)
                        .slotCount(4)
                        .slotSize(64 << 10)
                        .checksums(checksums)
                        .doorbell(doorbell)
                        .create();
        try (SegmentReader reader = SegmentReader.open(path)) {
            CompletableFuture<Void> written =
                    CompletableFuture.runAsync(
                            () -> {
                                try {
                                    TestContent.write(writer, allocator, count, 100, 37);
                                    writer.close();
                                } catch (Exception e) {
                                    throw new IllegalStateException(e);
                                }
                            },
                            threads);
            TestContent.Checker checker = TestContent.readAll(reader, allocator, count);
            written.get(30, TimeUnit.SECONDS);
            assertThat(checker.next).isEqualTo(count);
            assertThat(checker.objects).isEqualTo((count + 36) / 37);
            assertThat(reader.isEndOfStream()).isTrue();
        }
    }

    @Test
    void objectCarriesDescriptorFields() throws Exception {
        Path path = dir.resolve("seg");
        try (SegmentWriter writer =
                        SegmentWriter.builder(path)
                                .objectKind(ObjectKind.RECORDS)
                                .slotCount(2)
                                .slotSize(4096)
                                .create();
                SegmentReader reader = SegmentReader.open(path);
                RecordsBatchEncoder batch = new RecordsBatchEncoder(allocator)) {
            batch.add(7, 100, 1L, null, new byte[] {1}, java.util.List.of());
            batch.add(7, 101, 2L, null, new byte[] {2}, java.util.List.of());
            batch.writeTo(writer, java.time.Duration.ofSeconds(1));
            batch.add(1, 5, 3L, null, null, java.util.List.of());
            batch.add(2, 6, 4L, null, null, java.util.List.of());
            batch.writeTo(writer, java.time.Duration.ofSeconds(1));

            SegmentObject first = reader.poll(java.time.Duration.ofSeconds(5));
            assertThat(first.objectId()).isZero();
            assertThat(first.recordCount()).isEqualTo(2);
            assertThat(first.partition()).isEqualTo(7);
            assertThat(first.firstOffset()).isEqualTo(100);
            assertThat(first.lastOffset()).isEqualTo(101);
            SegmentObject second = reader.poll(java.time.Duration.ofSeconds(5));
            assertThat(second.objectId()).isEqualTo(1);
            assertThat(second.partition()).as("records of two partitions").isEqualTo(-1);
            assertThat(second.message().isReadOnly()).isTrue();
            first.release();
            second.release();
            assertThat(reader.poll(java.time.Duration.ofMillis(10))).isNull();
            assertThat(reader.isEndOfStream()).isFalse();
        }
    }
}
