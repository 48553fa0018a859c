package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The Java side against the C++ side, each in its own process, through a real segment in {@code
 * /dev/shm}: the C++ {@code sluice-segment-tool} writes and Java reads, then the reverse. Both
 * generate and check {@link TestContent}'s rows and must agree on the checksum.
 *
 * <p>The tool is looked up under the directory in the system property {@code sluice.native.bin}
 * (the native module's CMake build directory, set by this module's Failsafe configuration). The
 * test fails rather than skips when it is missing: the real cross-process path is the point.
 */
class SegmentCrossProcessIT {
    private static final long COUNT = 5_000;
    private static final int SIZE = 200;
    private static final Duration PROCESS_TIMEOUT = Duration.ofSeconds(60);

    private static Path tool;

    @TempDir Path logs;
    private final BufferAllocator allocator = new RootAllocator();
    private final List<Process> processes = new ArrayList<>();
    private final List<Path> segments = new ArrayList<>();

    @BeforeAll
    static void findTool() throws IOException {
        String bin = System.getProperty("sluice.native.bin");
        assertThat(bin).as("system property sluice.native.bin").isNotNull();
        Path dir = Path.of(bin);
        assertThat(dir).as("the native module's build directory").isDirectory();
        try (Stream<Path> files = Files.walk(dir)) {
            Optional<Path> found =
                    files.filter(
                                    p ->
                                            p.getFileName().toString().equals("sluice-segment-tool")
                                                    && Files.isExecutable(p))
                            .findFirst();
            assertThat(found).as("sluice-segment-tool under %s", dir).isPresent();
            tool = found.get();
        }
    }

    @AfterEach
    void cleanUp() throws IOException {
        for (Process process : processes) {
            process.destroyForcibly();
        }
        for (Path segment : segments) {
            Files.deleteIfExists(segment);
            Files.deleteIfExists(SegmentLayout.bellPath(segment));
        }
        allocator.close();
    }

    private String segmentName(ObjectKind kind) {
        String name =
                "sluice-it-"
                        + ProcessHandle.current().pid()
                        + "-"
                        + kind.name().toLowerCase()
                        + "-"
                        + System.nanoTime();
        segments.add(SegmentLayout.resolve(name));
        return name;
    }

    private Process start(String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(tool.toString());
        command.addAll(List.of(args));
        Process process =
                new ProcessBuilder(command)
                        .redirectOutput(logs.resolve(args[0] + ".out").toFile())
                        .redirectError(logs.resolve(args[0] + ".err").toFile())
                        .start();
        processes.add(process);
        return process;
    }

    /** Waits for the tool to exit 0 and parses its {@code key=value} summary line. */
    private Map<String, String> summary(Process process, String mode) throws Exception {
        assertThat(process.waitFor(PROCESS_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
                .as("tool %s exits", mode)
                .isTrue();
        String out = Files.readString(logs.resolve(mode + ".out"), StandardCharsets.UTF_8);
        String err = Files.readString(logs.resolve(mode + ".err"), StandardCharsets.UTF_8);
        assertThat(process.exitValue())
                .as("exit code of tool %s; stdout:%n%s%nstderr:%n%s", mode, out, err)
                .isZero();
        Map<String, String> fields = new HashMap<>();
        for (String line : out.split("\n")) {
            if (line.contains("checksum=")) {
                for (String pair : line.trim().split("\\s+")) {
                    int eq = pair.indexOf('=');
                    if (eq > 0) {
                        fields.put(pair.substring(0, eq), pair.substring(eq + 1));
                    }
                }
            }
        }
        assertThat(fields)
                .as("summary line of tool %s in:%n%s", mode, out)
                .containsKeys("objects", "records", "checksum");
        return fields;
    }

    @ParameterizedTest
    @EnumSource(ObjectKind.class)
    void javaReadsWhatTheToolWrites(ObjectKind kind) throws Exception {
        String name = segmentName(kind);
        Process writer =
                start(
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
        TestWait.until(
                "the tool creates " + path,
                PROCESS_TIMEOUT,
                () -> Files.exists(path) || !writer.isAlive());
        assertThat(writer.isAlive()).as("tool write is running").isTrue();

        TestContent.Checker checker;
        try (SegmentReader reader = SegmentReader.open(path)) {
            assertThat(reader.header().objectKind()).isEqualTo(kind);
            checker = TestContent.readAll(reader, allocator, COUNT);
        }
        Map<String, String> tool = summary(writer, "write");
        assertThat(checker.next).isEqualTo(COUNT);
        assertThat(Long.parseLong(tool.get("records"))).isEqualTo(COUNT);
        assertThat(Long.parseLong(tool.get("objects"))).isEqualTo(checker.objects);
        assertThat(TestContent.parseChecksum(tool.get("checksum")))
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
            reader = start("read", "--segment", name);
            assertThat(writer.awaitReaders(1, PROCESS_TIMEOUT)).as("the tool attaches").isTrue();
            TestContent.write(writer, allocator, COUNT, SIZE, 100);
        }
        Map<String, String> tool = summary(reader, "read");
        assertThat(Long.parseLong(tool.get("records"))).isEqualTo(COUNT);
        assertThat(Long.parseLong(tool.get("objects"))).isEqualTo(COUNT / 100);
        assertThat(TestContent.parseChecksum(tool.get("checksum")))
                .as("checksum")
                .isEqualTo(expected.checksum);
    }

    @Test
    void javaReaderSeesTheKilledToolWriterAsDead() throws Exception {
        String name = segmentName(ObjectKind.RECORDS);
        // Far more than fits: the tool blocks on credits until it is killed.
        Process writer =
                start(
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
        TestWait.until(
                "the tool creates " + path,
                PROCESS_TIMEOUT,
                () -> Files.exists(path) || !writer.isAlive());
        try (SegmentReader reader = SegmentReader.open(path)) {
            SegmentObject first = reader.poll(PROCESS_TIMEOUT);
            assertThat(first).as("a first object").isNotNull();
            first.release();
            writer.destroyForcibly().waitFor(PROCESS_TIMEOUT.toSeconds(), TimeUnit.SECONDS);

            long deadline =
                    System.nanoTime()
                            + reader.header().livenessTimeoutNanos()
                            + PROCESS_TIMEOUT.toNanos();
            assertThatThrownBy(
                            () -> {
                                // What was published before the kill is still delivered.
                                while (System.nanoTime() < deadline) {
                                    SegmentObject object = reader.poll(Duration.ofSeconds(1));
                                    if (object != null) {
                                        object.release();
                                    }
                                }
                            })
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
            Process reader = start("read", "--segment", name);
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
