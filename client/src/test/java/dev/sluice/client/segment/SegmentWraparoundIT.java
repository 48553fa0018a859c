package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.junit.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A tiny segment (3 slots of 1 KiB, one row per object) forced through thousands of wrap-arounds of
 * its ring across processes and languages, both ways: every object, one {@link TestContent} row
 * whose offset or seq is its sequence number, arrives once, in order and intact. The Java reader
 * holds every slot before it releases any, so the C++ writer waits on a full ring each round. The
 * C++ twin is native's segment_wraparound_test.cc.
 */
class SegmentWraparoundIT {
    private static final long COUNT = 5_000;
    private static final int SIZE = 8;
    private static final int SLOTS = 3;
    private static final int SLOT_SIZE = 1024;

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
        return tool.segmentName("sluice-it-wrap", kind);
    }

    @ParameterizedTest
    @EnumSource(ObjectKind.class)
    void aJavaReaderHoldingEverySlotGetsEveryObjectOfTheToolOnceInOrder(ObjectKind kind)
            throws Exception {
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
                        "--batch",
                        "1",
                        "--slots",
                        Integer.toString(SLOTS),
                        "--slot-size",
                        Integer.toString(SLOT_SIZE),
                        "--wait-readers",
                        "1");
        Path path = SegmentLayout.resolve(name);
        Await.until(
                "the tool creates " + path,
                SegmentTool.PROCESS_TIMEOUT,
                () -> Files.exists(path) || !writer.isAlive());

        TestContent.Checker checker = new TestContent.Checker(COUNT);
        long fullRings = 0;
        try (SegmentReader reader = SegmentReader.open(path);
                ArrowBatchReader batches = new ArrowBatchReader(reader.schema(), allocator)) {
            assertThat(reader.header().slotCount()).isEqualTo(SLOTS);
            List<SegmentObject> held = new ArrayList<>();
            long lastId = -1;
            SegmentObject object;
            while ((object = reader.take()) != null) {
                assertThat(object.objectId()).as("object ids increase").isGreaterThan(lastId);
                lastId = object.objectId();
                VectorSchemaRoot root = batches.load(object);
                checker.check(kind, root);
                held.add(object);
                if (held.size() == SLOTS) {
                    fullRings++;
                    for (SegmentObject taken : held) {
                        taken.release();
                    }
                    held.clear();
                }
            }
            for (SegmentObject taken : held) {
                taken.release();
            }
        }
        Map<String, String> summary = tool.summary(writer, "write");
        assertThat(checker.next).as("rows read, each checked in order").isEqualTo(COUNT);
        assertThat(checker.objects).isEqualTo(COUNT);
        assertThat(fullRings).isEqualTo(COUNT / SLOTS);
        assertThat(Long.parseLong(summary.get("objects"))).isEqualTo(COUNT);
        assertThat(TestContent.parseChecksum(summary.get("checksum")))
                .as("checksum")
                .isEqualTo(checker.checksum);
    }

    @ParameterizedTest
    @EnumSource(ObjectKind.class)
    void theToolGetsEveryObjectOfAJavaWriterThroughATinyRing(ObjectKind kind) throws Exception {
        String name = segmentName(kind);
        long checksum = 0;
        for (long i = 0; i < COUNT; i++) {
            checksum += TestContent.fnv1a(TestContent.value(i, SIZE));
        }
        Process reader;
        try (SegmentWriter writer =
                SegmentWriter.builder(name)
                        .objectKind(kind)
                        .slotCount(SLOTS)
                        .slotSize(SLOT_SIZE)
                        .create()) {
            reader = tool.start("read", "--segment", name);
            assertThat(writer.awaitReaders(1, SegmentTool.PROCESS_TIMEOUT))
                    .as("the tool attaches")
                    .isTrue();
            TestContent.write(writer, allocator, COUNT, SIZE, 1);
        }
        // The tool checks every row against the rule in order and fails at the first mismatch.
        Map<String, String> summary = tool.summary(reader, "read");
        assertThat(Long.parseLong(summary.get("records"))).isEqualTo(COUNT);
        assertThat(Long.parseLong(summary.get("objects"))).isEqualTo(COUNT);
        assertThat(TestContent.parseChecksum(summary.get("checksum")))
                .as("checksum")
                .isEqualTo(checksum);
    }
}
