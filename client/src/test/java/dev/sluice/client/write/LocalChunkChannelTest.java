package dev.sluice.client.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.segment.ChunksBatchEncoder;
import dev.sluice.client.segment.ObjectKind;
import dev.sluice.client.segment.SegmentException;
import dev.sluice.client.segment.SegmentWriter;
import dev.sluice.client.segment.WritableSlot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What of {@link LocalChunkChannel} needs no daemon: its settings, its topic, its slot sizes. */
class LocalChunkChannelTest {
    @TempDir Path dir;
    private final BufferAllocator allocator = new RootAllocator();

    @AfterEach
    void closeAllocator() {
        allocator.close();
    }

    @Test
    void theDefaultsAreDevShmEightSlotsAndAMinute() {
        LocalChunkChannel.Settings defaults = LocalChunkChannel.Settings.defaults();
        assertThat(defaults.segmentDir()).isEqualTo(Path.of("/dev/shm"));
        assertThat(defaults.slotCount()).isEqualTo(8);
        assertThat(defaults.reconnectTimeout()).isEqualTo(Duration.ofSeconds(60));
    }

    @Test
    void settingsRefuseWhatPRODUCEOrASegmentCannotTake() {
        Duration minute = Duration.ofMinutes(1);
        assertThatThrownBy(() -> new LocalChunkChannel.Settings(Path.of("shm"), 8, minute))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("segmentDir shm: not absolute");
        assertThatThrownBy(() -> new LocalChunkChannel.Settings(dir, 0, minute))
                .hasMessageContaining("slotCount 0: 1 to 65536");
        assertThatThrownBy(() -> new LocalChunkChannel.Settings(dir, 65537, minute))
                .hasMessageContaining("slotCount 65537");
        assertThatThrownBy(() -> new LocalChunkChannel.Settings(dir, 8, Duration.ZERO))
                .hasMessageContaining("reconnectTimeout PT0S: must be positive");
        assertThatThrownBy(() -> new LocalChunkChannel.Settings(null, 8, minute))
                .hasMessageContaining("segmentDir");
    }

    @Test
    void aTopicThatIsNotAChunkTopicIsRefusedBeforeAnythingIsCreated() throws IOException {
        BrokerdClient brokerd = BrokerdClient.builder(dir.resolve("no.sock")).build();
        LocalChunkChannel.Settings settings =
                new LocalChunkChannel.Settings(dir, 8, Duration.ofSeconds(1));
        for (String topic : new String[] {"orders", "sluice.chunks.", "sluice.chunks.a/b"}) {
            assertThatThrownBy(() -> LocalChunkChannel.open(brokerd, topic, settings, () -> {}))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("topic '" + topic + "': not a chunk topic");
        }
        try (var files = Files.list(dir)) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void noDaemonOnTheSocketFailsOpenNamingItAndLeavesNoSegmentBehind() throws IOException {
        Path socket = dir.resolve("no.sock");
        BrokerdClient brokerd = BrokerdClient.builder(socket).build();
        AtomicInteger losses = new AtomicInteger();
        assertThatThrownBy(
                        () ->
                                LocalChunkChannel.open(
                                        brokerd,
                                        "sluice.chunks.press-1",
                                        new LocalChunkChannel.Settings(
                                                dir, 8, Duration.ofSeconds(1)),
                                        losses::incrementAndGet))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("sluice.chunks.press-1")
                .hasMessageContaining("sluice-brokerd at " + socket);
        try (var files = Files.list(dir)) {
            assertThat(files).as("the segment and its doorbell are gone").isEmpty();
        }
        assertThat(losses).hasValue(0);
    }

    @Test
    void aSegmentDirThatIsMissingIsNamed() {
        Path missing = dir.resolve("missing");
        BrokerdClient brokerd = BrokerdClient.builder(dir.resolve("no.sock")).build();
        assertThatThrownBy(
                        () ->
                                LocalChunkChannel.open(
                                        brokerd,
                                        "sluice.chunks.press-1",
                                        new LocalChunkChannel.Settings(
                                                missing, 8, Duration.ofSeconds(1)),
                                        () -> {}))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("LocalChunkChannel.Settings.segmentDir " + missing);
    }

    @Test
    void aSlotFitsTheChunkRoundedTo64AndAtLeastDoublesTheOldSize() {
        assertThat(LocalChunkChannel.slotSizeFor(100, 64)).isEqualTo(256);
        assertThat(LocalChunkChannel.slotSizeFor(1000, 256)).isEqualTo(1024);
        assertThat(LocalChunkChannel.slotSizeFor(1025, 256)).isEqualTo(1088);
        assertThat(LocalChunkChannel.slotSizeFor(65_537, 65_536)).isEqualTo(131_072);
        assertThat(LocalChunkChannel.slotSizeFor(300_000, 65_536)).isEqualTo(300_032);
        assertThat(LocalChunkChannel.slotSizeFor(1L << 30, 1L << 30))
                .isEqualTo(LocalChunkChannel.MAX_SLOT_SIZE);
        assertThat(LocalChunkChannel.slotSizeFor(LocalChunkChannel.MAX_SLOT_SIZE, 1 << 20))
                .isEqualTo(LocalChunkChannel.MAX_SLOT_SIZE);
        assertThat(LocalChunkChannel.slotSizeFor(LocalChunkChannel.MAX_SLOT_SIZE + 1, 1 << 20))
                .isEqualTo(-1);
    }

    @Test
    void theCountedSizeIsWhatASlotTakesAndTheSizedSlotHoldsIt() throws Exception {
        try (ChunksBatchEncoder encoder = new ChunksBatchEncoder(allocator)) {
            for (int payload : new int[] {0, 1, 63, 1000, 70_000}) {
                encoder.add("job-7", "cyan", 12, payload % 2 == 0, new byte[payload]);
                long counted = LocalChunkChannel.encodedSize(encoder.root());
                assertThat(counted).isGreaterThan(payload);
                long slot = LocalChunkChannel.slotSizeFor(counted, 0);
                try (SegmentWriter writer = writer("fits-" + payload, slot)) {
                    WritableSlot claimed = writer.claim(Duration.ZERO);
                    assertThat(claimed.write(encoder.root())).isEqualTo(counted);
                }
                if (slot - 64 >= LocalChunkChannel.MIN_SLOT_SIZE) {
                    try (SegmentWriter writer = writer("short-" + payload, slot - 64)) {
                        WritableSlot claimed = writer.claim(Duration.ZERO);
                        assertThatThrownBy(() -> claimed.write(encoder.root()))
                                .isInstanceOf(SegmentException.class);
                    }
                }
                encoder.clear();
            }
        }
    }

    private SegmentWriter writer(String name, long slotSize) throws IOException {
        return SegmentWriter.builder(dir.resolve(name))
                .objectKind(ObjectKind.CHUNKS)
                .slotCount(1)
                .slotSize(slotSize)
                .create();
    }
}
