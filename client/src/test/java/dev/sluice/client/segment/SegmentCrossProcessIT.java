package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.junit.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The Java side against the C++ side, each in its own process, through a real segment in {@code
 * /dev/shm}: the C++ {@code sluice-segment-tool} writes and Java reads, then the reverse. Both
 * generate and check {@link TestContent}'s rows and must agree on the checksum ({@link SegmentTool}
 * says where the tool is found).
 */
class SegmentCrossProcessIT {
    private static final long COUNT = 5_000;
    private static final int SIZE = 200;
    private static final Duration PROCESS_TIMEOUT = SegmentTool.PROCESS_TIMEOUT;

    @TempDir Path logs;
    private final BufferAllocator allocator = new RootAllocator();
    private SegmentTool tool;

    @BeforeEach
    void startTool() throws IOException {
        tool = new SegmentTool(logs);
    }

    @AfterEach
    void cleanUp() throws IOException {
        tool.close();
        allocator.close();
    }

    private String segmentName(ObjectKind kind) {
        return tool.segmentName("sluice-it", kind);
    }

    @ParameterizedTest
    @EnumSource(ObjectKind.class)
    void javaReadsWhatTheToolWrites(ObjectKind kind) throws Exception {
        String name = segmentName(kind);
        Process writer =
                tool.start(
                        "write",
                        "--segment",
                        name,
                        "--kind",
                        kind.name().toLowerCase(),
                        "--count",
                        Long.toString(COUNT),
                        "--size",
                        Integer.toString(SIZE),
                        "--wait-readers",
                        "1");
        Path path = SegmentLayout.resolve(name);
        Await.until(
                "the tool creates " + path,
                PROCESS_TIMEOUT,
                () -> Files.exists(path) || !writer.isAlive());
        assertThat(writer.isAlive()).as("tool write is running").isTrue();

        TestContent.Checker checker;
        try (SegmentReader reader = SegmentReader.open(path)) {
            assertThat(reader.header().objectKind()).isEqualTo(kind);
            checker = TestContent.readAll(reader, allocator, COUNT);
        }
        Map<String, String> summary = tool.summary(writer, "write");
        assertThat(checker.next).isEqualTo(COUNT);
        assertThat(Long.parseLong(summary.get("records"))).isEqualTo(COUNT);
        assertThat(Long.parseLong(summary.get("objects"))).isEqualTo(checker.objects);
        assertThat(TestContent.parseChecksum(summary.get("checksum")))
                .as("checksum")
                .isEqualTo(checker.checksum);
    }

    @ParameterizedTest
    @EnumSource(ObjectKind.class)
    void toolReadsWhatJavaWrites(ObjectKind kind) throws Exception {
        String name = segmentName(kind);
        TestContent.Checker expected = new TestContent.Checker(COUNT);
        for (long i = 0; i < COUNT; i++) {
            expected.checksum += TestContent.fnv1a(TestContent.value(i, SIZE));
        }
        Process reader;
        try (SegmentWriter writer =
                SegmentWriter.builder(name)
                        .objectKind(kind)
                        .slotCount(16)
                        .slotSize(256 << 10)
                        .create()) {
            reader = tool.start("read", "--segment", name);
            assertThat(writer.awaitReaders(1, PROCESS_TIMEOUT)).as("the tool attaches").isTrue();
            TestContent.write(writer, allocator, COUNT, SIZE, 100);
        }
        Map<String, String> summary = tool.summary(reader, "read");
        assertThat(Long.parseLong(summary.get("records"))).isEqualTo(COUNT);
        assertThat(Long.parseLong(summary.get("objects"))).isEqualTo(COUNT / 100);
        assertThat(TestContent.parseChecksum(summary.get("checksum")))
                .as("checksum")
                .isEqualTo(expected.checksum);
    }

    @Test
    void javaReaderSeesTheKilledToolWriterAsDead() throws Exception {
        String name = segmentName(ObjectKind.RECORDS);
        // Far more than fits: the tool blocks on credits until it is killed.
        Process writer =
                tool.start(
                        "write",
                        "--segment",
                        name,
                        "--kind",
                        "records",
                        "--count",
                        "100000000",
                        "--size",
                        "100",
                        "--slots",
                        "4",
                        "--wait-readers",
                        "1");
        Path path = SegmentLayout.resolve(name);
        Await.until(
                "the tool creates " + path,
                PROCESS_TIMEOUT,
                () -> Files.exists(path) || !writer.isAlive());
        try (SegmentReader reader = SegmentReader.open(path)) {
            SegmentObject first = reader.poll(PROCESS_TIMEOUT);
            assertThat(first).as("a first object").isNotNull();
            first.release();
            writer.destroyForcibly().waitFor(PROCESS_TIMEOUT.toSeconds(), TimeUnit.SECONDS);

            Duration deathNoticed =
                    Duration.ofNanos(reader.header().livenessTimeoutNanos()).plus(PROCESS_TIMEOUT);
            assertThatThrownBy(
                            () ->
                                    Await.until(
                                            "the reader finds the killed writer dead",
                                            deathNoticed,
                                            () -> {
                                                // What was published before the kill is still
                                                // delivered.
                                                SegmentObject object =
                                                        reader.poll(Duration.ofSeconds(1));
                                                if (object != null) {
                                                    object.release();
                                                }
                                                return false;
                                            }))
                    .isInstanceOf(WriterDeadException.class);
        }
    }

    @Test
    void javaWriterReclaimsTheLaneOfAKilledToolReader() throws Exception {
        String name = segmentName(ObjectKind.CHUNKS);
        try (SegmentWriter writer =
                        SegmentWriter.builder(name)
                                .objectKind(ObjectKind.CHUNKS)
                                .slotCount(4)
                                .slotSize(64 << 10)
                                .livenessTimeout(Duration.ofSeconds(1))
                                .create();
                ChunksBatchEncoder batch = new ChunksBatchEncoder(allocator)) {
            Process reader = tool.start("read", "--segment", name);
            assertThat(writer.awaitReaders(1, PROCESS_TIMEOUT)).as("the tool attaches").isTrue();
            reader.destroyForcibly().waitFor(PROCESS_TIMEOUT.toSeconds(), TimeUnit.SECONDS);

            // Its lane stays ATTACHED until its heartbeat is stale; then its slots come back.
            for (long i = 0; i < 20; i++) {
                TestContent.addChunk(batch, i, 20, 100);
                batch.writeTo(writer, Duration.ofSeconds(10));
            }
            assertThat(writer.attachedReaders()).isZero();
        }
    }
}
