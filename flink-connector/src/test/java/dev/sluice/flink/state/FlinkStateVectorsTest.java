package dev.sluice.flink.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Flink state serializers against the files under {@code testdata/flink-state/}: each reads
 * every version it ever wrote, and writes its current one byte for byte (docs/formats.md, "Flink
 * state"). A change of layout fails here, before a checkpoint written by another build fails to
 * restore.
 */
class FlinkStateVectorsTest {

    static Stream<FlinkStateVector<?>> vectors() {
        return FlinkStateVectors.ALL.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void readsTheFile(FlinkStateVector<?> vector) throws IOException {
        byte[] bytes = Files.readAllBytes(FlinkStateVectors.DIRECTORY.resolve(vector.file()));
        assertThat(vector.read(bytes)).as(vector.file()).isEqualTo(vector.state());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vectors")
    void writesTheCurrentVersionByteForByte(FlinkStateVector<?> vector) throws IOException {
        byte[] bytes = Files.readAllBytes(FlinkStateVectors.DIRECTORY.resolve(vector.file()));
        if (vector.isCurrent()) {
            assertThat(vector.write()).as(vector.file()).isEqualTo(bytes);
        } else {
            assertThat(vector.version())
                    .as(vector.file() + " is of an older version than the serializer writes")
                    .isLessThan(vector.serializer().getVersion());
        }
    }

    /** The manifest names each file with its serializer and version, as the tests use them. */
    @Test
    void theManifestDescribesEveryFile() throws IOException {
        List<String> described =
                Files.readAllLines(FlinkStateVectors.DIRECTORY.resolve("manifest.tsv")).stream()
                        .filter(line -> !line.startsWith("#") && !line.isBlank())
                        .map(line -> String.join("\t", List.of(line.split("\t")).subList(0, 3)))
                        .toList();
        List<String> expected =
                FlinkStateVectors.ALL.stream()
                        .map(
                                v ->
                                        v.file()
                                                + "\t"
                                                + v.serializer().getClass().getSimpleName()
                                                + "\t"
                                                + v.version())
                        .toList();
        assertThat(described).containsExactlyInAnyOrderElementsOf(expected);
        try (Stream<Path> files = Files.list(FlinkStateVectors.DIRECTORY)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrderElementsOf(
                            Stream.concat(
                                            Stream.of("manifest.tsv"),
                                            FlinkStateVectors.ALL.stream()
                                                    .map(FlinkStateVector::file))
                                    .toList());
        }
    }
}
