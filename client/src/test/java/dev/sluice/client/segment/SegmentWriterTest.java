package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the writer creates, fills and removes the segment file. */
class SegmentWriterTest {
    @TempDir Path dir;
    private final BufferAllocator allocator = new RootAllocator();

    @AfterEach
    void closeAllocator() {
        allocator.close();
    }

    private SegmentWriter.Builder builder() {
        return SegmentWriter.builder(dir.resolve("seg"))
                .objectKind(ObjectKind.RECORDS)
                .slotCount(5)
                .slotSize(1024);
    }

    @Test
    void fileAndDoorbellAreOwnerOnlyAndExactlySized() throws Exception {
        try (SegmentWriter writer = builder().create()) {
            Path bell = SegmentLayout.bellPath(writer.path());
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(writer.path())))
                    .isEqualTo("rw-------");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(bell)))
                    .isEqualTo("rw-------");
            assertThat(Files.size(writer.path())).isEqualTo(writer.header().segmentSize());
            try (var files = Files.list(dir)) {
                assertThat(files.map(p -> p.getFileName().toString()))
                        .as("no temporary name left")
                        .containsExactlyInAnyOrder("seg", "seg.bell");
            }
        }
    }

    /**
     * Temporary names were NAME.tmp-PID, which anyone could create first to make every writer of
     * NAME fail; they have a random part now (spec "File layout").
     */
    @Test
    void filesAtThePredictableTemporaryNamesDoNotBlockTheWriter() throws Exception {
        long pid = ProcessHandle.current().pid();
        Path squatted = Files.writeString(dir.resolve("seg.tmp-" + pid), "squatter");
        Path squattedBell = Files.writeString(dir.resolve("seg.bell.tmp-" + pid), "squatter");
        try (SegmentWriter writer = builder().create()) {
            assertThat(Files.size(writer.path())).isEqualTo(writer.header().segmentSize());
            assertThat(SegmentLayout.bellPath(writer.path())).exists();
        }
        assertThat(squatted).hasContent("squatter");
        assertThat(squattedBell).hasContent("squatter");
    }

    @Test
    void temporaryNamesAreRandomHexBesideTheFile() {
        Path one = TemporaryName.beside(dir.resolve("seg"));
        Path two = TemporaryName.beside(dir.resolve("seg"));
        assertThat(one.getParent()).isEqualTo(dir);
        assertThat(one.getFileName().toString()).matches("seg\\.tmp-[0-9a-f]{16}");
        assertThat(one).isNotEqualTo(two);
    }

    @Test
    void closeUnlinksFileAndDoorbell() throws Exception {
        SegmentWriter writer = builder().create();
        writer.close();
        assertThat(Files.exists(writer.path())).isFalse();
        assertThat(Files.exists(SegmentLayout.bellPath(writer.path()))).isFalse();
    }

    @Test
    void anExistingSegmentIsNotReplacedUnlessAsked() throws Exception {
        try (SegmentWriter first = builder().create()) {
            assertThatThrownBy(() -> builder().create())
                    .isInstanceOf(FileAlreadyExistsException.class);
            try (SegmentWriter second = builder().replaceExisting(true).create()) {
                assertThat(second.path()).isEqualTo(first.path());
                assertThat(Files.size(second.path())).isEqualTo(second.header().segmentSize());
            }
        }
    }

    @Test
    void headerRoundTripsThroughValidation() throws Exception {
        try (SegmentWriter writer =
                builder()
                        .laneCount(7)
                        .checksums(false)
                        .livenessTimeout(Duration.ofMillis(1500))
                        .create()) {
            SegmentHeader header = SegmentInspector.open(writer.path()).header();
            assertThat(header).isEqualTo(writer.header());
            assertThat(header.laneCount()).isEqualTo(7);
            assertThat(header.checksums()).isFalse();
            assertThat(header.livenessTimeoutNanos()).isEqualTo(1_500_000_000L);
            assertThat(SegmentInspector.open(writer.path()).schema())
                    .isEqualTo(ObjectKind.RECORDS.schema());
        }
    }

    @Test
    void invalidParametersAreRefusedBeforeAnythingIsCreated() {
        assertThatThrownBy(() -> builder().slotSize(1000).create())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder().slotCount(0).create())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder().laneCount(32).create())
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(dir.resolve("seg")).doesNotExist();
    }

    @Test
    void batchLargerThanASlotIsRefusedAndTheSlotReturned() throws Exception {
        try (SegmentWriter writer = builder().slotCount(1).create();
                RecordsBatchEncoder batch = new RecordsBatchEncoder(allocator)) {
            batch.add(0, 0, 0, null, new byte[4000], List.of());
            assertThatThrownBy(() -> batch.writeTo(writer, Duration.ofSeconds(1)))
                    .isInstanceOf(SegmentException.class)
                    .hasMessageContaining("slot_size");
            assertThat(writer.claim(Duration.ofMillis(100)))
                    .as("the only slot is free again")
                    .isNotNull();
        }
    }

    @Test
    void writeTimesOutWhenReadersHoldEverySlot() throws Exception {
        try (SegmentWriter writer = builder().slotCount(1).create();
                SegmentReader reader = SegmentReader.open(writer.path());
                RecordsBatchEncoder batch = new RecordsBatchEncoder(allocator)) {
            TestContent.addRecord(batch, 0, 10);
            batch.writeTo(writer, Duration.ofSeconds(1));
            assertThat(reader.poll(Duration.ofSeconds(1))).as("held, not released").isNotNull();
            TestContent.addRecord(batch, 1, 10);
            assertThatThrownBy(() -> batch.writeTo(writer, Duration.ofMillis(50)))
                    .isInstanceOf(TimeoutException.class);
        }
    }
}
