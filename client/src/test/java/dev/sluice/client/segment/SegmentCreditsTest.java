package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.junit.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Slots are credits: every reader sees every object, and a slot is free once all released it. */
class SegmentCreditsTest {
    @TempDir Path dir;
    private final BufferAllocator allocator = new RootAllocator();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void tearDown() {
        threads.shutdownNow();
        allocator.close();
    }

    private SegmentWriter writer(int slots) throws Exception {
        return SegmentWriter.builder(dir.resolve("seg"))
                .objectKind(ObjectKind.RECORDS)
                .slotCount(slots)
                .slotSize(4096)
                .laneCount(4)
                .create();
    }

    private static void publishEmpty(SegmentWriter writer) throws Exception {
        WritableSlot slot = writer.claim(Duration.ofSeconds(5));
        assertThat(slot).as("a free slot").isNotNull();
        writer.publish(slot, 0, 0, -1, -1, -1);
    }

    @Test
    void everyReaderReceivesEveryObjectConcurrently() throws Exception {
        long count = 600;
        SegmentWriter writer = writer(3);
        List<SegmentReader> readers = new ArrayList<>();
        List<CompletableFuture<TestContent.Checker>> results = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            SegmentReader reader = SegmentReader.open(writer.path());
            readers.add(reader);
            results.add(CompletableFuture.supplyAsync(() -> readAll(reader, count), threads));
        }
        TestContent.write(writer, allocator, count, 20, 7);
        // Closing is the end of the stream the readers wait for.
        writer.close();
        for (CompletableFuture<TestContent.Checker> result : results) {
            TestContent.Checker checker = result.get(30, TimeUnit.SECONDS);
            assertThat(checker.next).isEqualTo(count);
        }
        assertThat(readers).extracting(SegmentReader::lane).containsExactlyInAnyOrder(0, 1, 2);
        for (SegmentReader reader : readers) {
            reader.close();
        }
    }

    private TestContent.Checker readAll(SegmentReader reader, long count) {
        try {
            return TestContent.readAll(reader, allocator, count);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void slotIsFreeOnlyAfterEveryReaderReleasedIt() throws Exception {
        try (SegmentWriter writer = writer(1);
                SegmentReader a = SegmentReader.open(writer.path());
                SegmentReader b = SegmentReader.open(writer.path())) {
            publishEmpty(writer);
            SegmentObject fromA = a.poll(Duration.ofSeconds(5));
            SegmentObject fromB = b.poll(Duration.ofSeconds(5));
            assertThat(fromA.objectId()).isEqualTo(fromB.objectId()).isZero();

            fromA.release();
            assertThat(writer.claim(Duration.ofMillis(20)))
                    .as("b still holds the only slot")
                    .isNull();
            fromB.release();
            assertThat(writer.claim(Duration.ofSeconds(5))).as("released by both").isNotNull();
        }
    }

    @Test
    void writerBlocksWithoutCreditsThenProceeds() throws Exception {
        try (SegmentWriter writer = writer(2);
                SegmentReader reader = SegmentReader.open(writer.path())) {
            publishEmpty(writer);
            publishEmpty(writer);
            CompletableFuture<WritableSlot> claim =
                    CompletableFuture.supplyAsync(
                            () -> {
                                try {
                                    return writer.claim(Duration.ofSeconds(20));
                                } catch (Exception e) {
                                    throw new IllegalStateException(e);
                                }
                            },
                            threads);
            MappedSegment view = MappedSegment.open(writer.path(), false);
            Await.until("the writer parks", Duration.ofSeconds(5), () -> view.writerWaiting() == 1);
            assertThat(claim).isNotDone();

            SegmentObject first = reader.poll(Duration.ofSeconds(5));
            first.release();
            WritableSlot slot = claim.get(10, TimeUnit.SECONDS);
            assertThat(slot.index()).isEqualTo(first.slot());
        }
    }
}
