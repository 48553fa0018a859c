package dev.sluice.client.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The frames the C++ side writes under {@code testdata/protocol/}: each decodes as {@code
 * manifest.txt} says, or is refused naming the field it gives, and each good frame encodes back to
 * the same bytes, so the two codecs agree byte for byte.
 */
class ProtocolVectorsTest {
    private static final Path VECTORS = Path.of("..", "testdata", "protocol");

    /** One manifest entry: the file, and its {@code key=value} lines. */
    record Entry(String file, Map<String, String> values) {
        String result() {
            return values.get("result");
        }
    }

    /**
     * {@code [file]} opens an entry, {@code key=value} lines fill it, {@code #} lines are comments.
     */
    static List<Entry> manifest() throws Exception {
        List<Entry> entries = new ArrayList<>();
        for (String line :
                Files.readAllLines(VECTORS.resolve("manifest.txt"), StandardCharsets.UTF_8)) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            if (line.startsWith("[") && line.endsWith("]")) {
                entries.add(new Entry(line.substring(1, line.length() - 1), new LinkedHashMap<>()));
                continue;
            }
            int equals = line.indexOf('=');
            assertThat(equals).as("key=value: %s", line).isPositive();
            assertThat(entries).as("an entry before %s", line).isNotEmpty();
            entries.get(entries.size() - 1)
                    .values()
                    .put(line.substring(0, equals), line.substring(equals + 1));
        }
        return entries;
    }

    @Test
    void theManifestCoversEveryMessageInEveryVersionAndTheMalformedCases() throws Exception {
        List<Entry> entries = manifest();
        Map<String, Set<String>> types =
                entries.stream()
                        .filter(e -> e.result().equals("ok"))
                        .collect(
                                Collectors.groupingBy(
                                        e -> e.values().get("version"),
                                        Collectors.mapping(
                                                e -> e.values().get("type"), Collectors.toSet())));
        Map<String, Set<String>> ofVersion = new HashMap<>();
        for (int version = ControlCodec.MIN_VERSION; version <= ControlCodec.VERSION; version++) {
            int v = version;
            ofVersion.put(
                    Integer.toString(version),
                    Stream.of(MessageType.values())
                            .filter(t -> t.firstVersion() <= v)
                            .map(Enum::name)
                            .collect(Collectors.toSet()));
        }
        assertThat(ofVersion.get("3")).hasSize(7);
        assertThat(ofVersion.get("4")).contains("PRODUCE", "PRODUCING").hasSize(9);
        assertThat(types).isEqualTo(ofVersion);
        Set<String> fields =
                entries.stream()
                        .filter(e -> e.result().equals("error"))
                        .map(e -> e.values().get("field"))
                        .collect(Collectors.toSet());
        assertThat(fields)
                .contains(
                        "frame_length",
                        "version",
                        "type",
                        "topic",
                        "mode",
                        "message",
                        "partitions[1].start",
                        "partition_count",
                        "segment_dir",
                        "flags",
                        "missing_to",
                        "stream",
                        "segment_path",
                        "producer_id");
    }

    @TestFactory
    Stream<DynamicTest> everyVectorAsTheManifestSays() throws Exception {
        return manifest().stream()
                .map(e -> DynamicTest.dynamicTest(e.file() + " " + e.result(), () -> check(e)));
    }

    private static void check(Entry entry) throws Exception {
        byte[] bytes = Files.readAllBytes(VECTORS.resolve(entry.file()));
        if (entry.result().equals("error")) {
            String field = entry.values().get("field");
            assertThatThrownBy(() -> ControlCodec.decode(bytes))
                    .isInstanceOfSatisfying(
                            ProtocolException.class,
                            e -> assertThat(e.field()).as(e.getMessage()).isEqualTo(field));
            return;
        }
        assertThat(entry.result()).isEqualTo("ok");
        Frame frame = ControlCodec.decode(bytes);
        Map<String, String> described = new LinkedHashMap<>();
        described.put("result", "ok");
        described.putAll(FrameDescription.of(frame));
        assertThat(described).isEqualTo(entry.values());
        assertThat(ControlCodec.encode(frame)).isEqualTo(bytes);
    }
}
