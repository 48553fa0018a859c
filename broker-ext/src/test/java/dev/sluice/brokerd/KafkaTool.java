package dev.sluice.brokerd;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs {@code sluice-kafka-tool}, the bare librdkafka client built by this module's CMake. */
final class KafkaTool {

    /** What one run printed and how it ended. */
    record Run(int exitCode, String stdout, String stderr) {

        /** The {@code key=value} pairs of the summary line of a successful run. */
        Map<String, String> summary() {
            assertThat(exitCode).as("exit code; stderr: %s", stderr).isZero();
            Map<String, String> fields = new HashMap<>();
            for (String field : stdout.strip().split(" ")) {
                String[] keyValue = field.split("=", 2);
                fields.put(keyValue[0], keyValue[1]);
            }
            return fields;
        }

        long records() {
            return Long.parseLong(summary().get("records"));
        }

        long checksum() {
            return Long.parseUnsignedLong(summary().get("checksum"));
        }
    }

    private static final long TIMEOUT_SECONDS = 120;

    private KafkaTool() {}

    static Path binary() {
        Path binary = Path.of(System.getProperty("sluice.native.bin"), "sluice-kafka-tool");
        assertThat(binary).as("built by the cmake-build step").isExecutable();
        return binary;
    }

    static Run run(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(binary().toString());
        command.addAll(List.of(args));
        Path out = Files.createTempFile("kafka-tool", ".out");
        Path err = Files.createTempFile("kafka-tool", ".err");
        try {
            Process process =
                    new ProcessBuilder(command)
                            .redirectOutput(out.toFile())
                            .redirectError(err.toFile())
                            .start();
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(
                        "sluice-kafka-tool did not finish in "
                                + TIMEOUT_SECONDS
                                + " s: "
                                + String.join(" ", command));
            }
            return new Run(
                    process.exitValue(),
                    Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /**
     * The tool's checksum: the sum, modulo 2^64, of the 64-bit FNV-1a hash of every value, so it
     * does not depend on how partitions interleave.
     */
    static long checksumOf(Iterable<byte[]> values) {
        long sum = 0;
        for (byte[] value : values) {
            long hash = 0xcbf29ce484222325L;
            for (byte b : value) {
                hash = (hash ^ (b & 0xff)) * 0x100000001b3L;
            }
            sum += hash;
        }
        return sum;
    }
}
