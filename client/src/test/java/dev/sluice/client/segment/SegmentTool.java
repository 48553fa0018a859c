package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;

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

/**
 * The C++ side of the cross-process tests: libsluice's {@code sluice-segment-tool} run as a child
 * process, its output logged under a folder, its {@code key=value} summary parsed.
 *
 * <p>The tool is looked up under the directory in the system property {@code sluice.native.bin}
 * (the native module's CMake build directory, set by this module's Failsafe configuration). A test
 * fails rather than skips when it is missing: the real cross-process path is the point.
 */
final class SegmentTool implements AutoCloseable {
    static final Duration PROCESS_TIMEOUT = Duration.ofSeconds(60);

    private final Path binary;
    private final Path logs;
    private final List<Process> processes = new ArrayList<>();
    private final List<Path> segments = new ArrayList<>();

    SegmentTool(Path logs) throws IOException {
        this.binary = find();
        this.logs = logs;
    }

    private static Path find() throws IOException {
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
            return found.get();
        }
    }

    /**
     * A fresh segment name in the shared-memory folder, {@code prefix-PID-kind-NANOS}; the segment
     * and its doorbell are deleted on {@link #close}.
     */
    String segmentName(String prefix, ObjectKind kind) {
        String name =
                prefix
                        + "-"
                        + ProcessHandle.current().pid()
                        + "-"
                        + kind.name().toLowerCase()
                        + "-"
                        + System.nanoTime();
        segments.add(SegmentLayout.resolve(name));
        return name;
    }

    /** Starts the tool's command {@code args[0]}, its output in {@code logs/args[0].out|err}. */
    Process start(String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
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
    Map<String, String> summary(Process process, String mode) throws Exception {
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

    /** Kills what is still running and deletes the segments named here. */
    @Override
    public void close() throws IOException {
        for (Process process : processes) {
            process.destroyForcibly();
        }
        for (Path segment : segments) {
            Files.deleteIfExists(segment);
            Files.deleteIfExists(SegmentLayout.bellPath(segment));
        }
    }
}
