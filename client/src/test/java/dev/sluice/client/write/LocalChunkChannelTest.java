package dev.sluice.client.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.Limits;
import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.protocol.ControlCodec;
import dev.sluice.client.protocol.Frame;
import dev.sluice.client.protocol.FrameReader;
import dev.sluice.client.protocol.Produce;
import dev.sluice.client.protocol.Producing;
import dev.sluice.client.segment.ChunksBatchEncoder;
import dev.sluice.client.segment.ObjectKind;
import dev.sluice.client.segment.SegmentException;
import dev.sluice.client.segment.SegmentObject;
import dev.sluice.client.segment.SegmentReader;
import dev.sluice.client.segment.SegmentWriter;
import dev.sluice.client.segment.WritableSlot;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What of {@link LocalChunkChannel} needs no daemon: its settings, its topic, its slot sizes; and,
 * against a peer that answers PRODUCE by attaching a reader of its own to the segment, what the
 * channel does when that lane is gone.
 */
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
                .isEqualTo(Limits.MAX_SLOT_SIZE);
        assertThat(LocalChunkChannel.slotSizeFor(Limits.MAX_SLOT_SIZE, 1 << 20))
                .isEqualTo(Limits.MAX_SLOT_SIZE);
        assertThat(LocalChunkChannel.slotSizeFor(Limits.MAX_SLOT_SIZE + 1, 1 << 20)).isEqualTo(-1);
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
                if (slot - 64 >= Limits.MIN_SLOT_SIZE) {
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

    /**
     * A peer that answers each PRODUCE, on each connection, by opening the segment as a reader
     * (attaching a lane, as the daemon does before it answers) and PRODUCING; the readers go to
     * {@code readers}.
     */
    private static void answerProduce(
            ServerSocketChannel server, BlockingQueue<SegmentReader> readers) {
        AtomicLong ids = new AtomicLong(1);
        CompletableFuture.runAsync(
                () -> {
                    while (server.isOpen()) {
                        try {
                            SocketChannel peer = server.accept();
                            CompletableFuture.runAsync(() -> serve(peer, readers, ids));
                        } catch (IOException closed) {
                            return;
                        }
                    }
                });
    }

    private static void serve(
            SocketChannel peer, BlockingQueue<SegmentReader> readers, AtomicLong ids) {
        try (peer) {
            FrameReader frames = new FrameReader(peer);
            for (Frame frame; (frame = frames.read()) != null; ) {
                if (frame.message() instanceof Produce produce) {
                    readers.add(SegmentReader.open(Path.of(produce.segmentPath())));
                    Frame answer =
                            new Frame(frame.requestId(), new Producing(ids.getAndIncrement()));
                    peer.write(ByteBuffer.wrap(ControlCodec.encode(answer)));
                }
            }
        } catch (IOException e) {
            // The channel hung up.
        }
    }

    @Test
    void aLaneGoneIsTheDaemonGoneTheStreamIsLostAndTheNextChunkGoesToANewSegment()
            throws Exception {
        Path socket = dir.resolve("daemon.sock");
        Path segments = Files.createDirectory(dir.resolve("segments"));
        BlockingQueue<SegmentReader> readers = new LinkedBlockingQueue<>();
        AtomicInteger losses = new AtomicInteger();
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            answerProduce(server, readers);
            try (LocalChunkChannel channel =
                    LocalChunkChannel.open(
                            BrokerdClient.builder(socket).build(),
                            "sluice.chunks.press-1",
                            new LocalChunkChannel.Settings(segments, 2, Duration.ofSeconds(10)),
                            losses::incrementAndGet)) {
                SegmentReader first = readers.poll(10, TimeUnit.SECONDS);
                channel.send("job-7", "cyan", 0, false, new byte[100]);
                try (SegmentObject chunk = first.poll(Duration.ofSeconds(10))) {
                    assertThat(chunk.recordCount()).isEqualTo(1);
                }
                // The reader leaves its lane while its connection stays open.
                first.close();

                channel.send("job-7", "cyan", 1, false, new byte[100]);

                assertThat(losses).hasValue(1);
                assertThat(channel.takeLostStreams()).containsExactly("job-7/cyan");
                try (SegmentReader second = readers.poll(10, TimeUnit.SECONDS);
                        SegmentObject chunk = second.poll(Duration.ofSeconds(10))) {
                    assertThat(second.header().objectKind()).isEqualTo(ObjectKind.CHUNKS);
                    assertThat(chunk.recordCount()).isEqualTo(1);
                }
                assertThat(channel.chunksSent()).isEqualTo(2);
                assertThat(channel.losses()).isEqualTo(1);
            }
        }
        try (var files = Files.list(segments)) {
            assertThat(files).as("both segments are gone").isEmpty();
        }
    }
}
