package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.junit.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A parked side is woken by the other's ring well before its park would time out. The liveness
 * timeout is long, so a park lasts up to 15 s: a wake within seconds can only be the doorbell.
 */
class DoorbellTest {
    private static final Duration LIVENESS = Duration.ofSeconds(60);
    private static final long PROMPT_SECONDS = 5;

    @TempDir Path dir;
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void tearDown() {
        threads.shutdownNow();
    }

    interface Call<T> {
        T call() throws Exception;
    }

    private <T> CompletableFuture<T> async(Call<T> call) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return call.call();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                },
                threads);
    }

    @Test
    void ringWakesBothEnds() throws Exception {
        Path bell = dir.resolve("x.bell");
        try (WriterDoorbell writer = WriterDoorbell.listen(bell, 4);
                ReaderDoorbell reader = ReaderDoorbell.connect(bell, 3)) {
            assertThat(reader).as("connected").isNotNull();
            CompletableFuture<Boolean> readerWoken =
                    async(() -> reader.await(TimeUnit.SECONDS.toNanos(30)));
            writer.ring(3);
            assertThat(readerWoken.get(PROMPT_SECONDS, TimeUnit.SECONDS)).isTrue();

            CompletableFuture<Boolean> writerWoken =
                    async(() -> writer.await(TimeUnit.SECONDS.toNanos(30)));
            reader.ring();
            assertThat(writerWoken.get(PROMPT_SECONDS, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void noSocketMeansNoDoorbell() {
        assertThat(ReaderDoorbell.connect(dir.resolve("missing.bell"), 0)).isNull();
    }

    @Test
    void parkedReaderIsWokenByPublish() throws Exception {
        try (SegmentWriter writer =
                        SegmentWriter.builder(dir.resolve("seg"))
                                .objectKind(ObjectKind.CHUNKS)
                                .slotCount(2)
                                .slotSize(512)
                                .livenessTimeout(LIVENESS)
                                .create();
                SegmentReader reader = SegmentReader.open(writer.path())) {
            CompletableFuture<SegmentObject> polled =
                    async(() -> reader.poll(Duration.ofSeconds(30)));
            MappedSegment view = MappedSegment.open(writer.path(), false);
            Await.until(
                    "the reader parks",
                    Duration.ofSeconds(5),
                    () -> view.readerWaiting(reader.lane()) == 1);

            WritableSlot slot = writer.claim(Duration.ofSeconds(1));
            long id = writer.publish(slot, 0, 0, -1, -1, -1);
            assertThat(polled.get(PROMPT_SECONDS, TimeUnit.SECONDS).objectId()).isEqualTo(id);
        }
    }

    @Test
    void parkedWriterIsWokenByRelease() throws Exception {
        try (SegmentWriter writer =
                        SegmentWriter.builder(dir.resolve("seg"))
                                .objectKind(ObjectKind.CHUNKS)
                                .slotCount(1)
                                .slotSize(512)
                                .livenessTimeout(LIVENESS)
                                .create();
                SegmentReader reader = SegmentReader.open(writer.path())) {
            writer.publish(writer.claim(Duration.ofSeconds(1)), 0, 0, -1, -1, -1);
            SegmentObject held = reader.poll(Duration.ofSeconds(5));
            CompletableFuture<WritableSlot> claimed =
                    async(() -> writer.claim(Duration.ofSeconds(30)));
            MappedSegment view = MappedSegment.open(writer.path(), false);
            Await.until("the writer parks", Duration.ofSeconds(5), () -> view.writerWaiting() == 1);

            held.release();
            assertThat(claimed.get(PROMPT_SECONDS, TimeUnit.SECONDS)).isNotNull();
        }
    }
}
