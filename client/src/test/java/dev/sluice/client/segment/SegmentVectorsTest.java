package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The segment files the C++ side writes under {@code testdata/segment/}, checked the way the
 * manifest says: {@code ok} files are inspected and every published object decoded and checked
 * against {@link TestContent}; {@code error} files must be refused naming the given field.
 */
class SegmentVectorsTest {
    private static final Path VECTORS = Path.of("..", "testdata", "segment");
    private static final Path MANIFEST = VECTORS.resolve("manifest.tsv");

    /** One manifest line: the file, {@code ok} or {@code error}, and its other columns. */
    record Entry(String file, String result, Map<String, String> values) {}

    /**
     * Reads {@code manifest.tsv} as {@code sluice-segment-tool vectors} writes it: a comment line
     * {@code # file result objects records checksum field} naming the tab-separated columns, then
     * one line per file with {@code -} for a column that does not apply.
     */
    static List<Entry> manifest() throws Exception {
        List<Entry> entries = new ArrayList<>();
        List<String> columns = null;
        for (String line : Files.readAllLines(MANIFEST)) {
            if (line.isBlank()) {
                continue;
            }
            if (line.startsWith("#")) {
                columns = List.of(line.substring(1).trim().split("\t"));
                continue;
            }
            assertThat(columns)
                    .as("column names before the first entry of %s", MANIFEST)
                    .isNotNull();
            String[] cells = line.split("\t");
            Map<String, String> values = new HashMap<>();
            for (int c = 0; c < cells.length && c < columns.size(); c++) {
                if (!cells[c].equals("-")) {
                    values.put(columns.get(c), cells[c]);
                }
            }
            entries.add(new Entry(values.get("file"), values.get("result"), values));
        }
        return entries;
    }

    @TestFactory
    Stream<DynamicTest> everyVectorAsTheManifestSays() throws Exception {
        // Committed with the format: missing vectors are a broken checkout, not a reason to skip.
        assertThat(VECTORS)
                .as("the segment test vectors, %s", VECTORS.toAbsolutePath())
                .isDirectory();
        List<Entry> entries = manifest();
        assertThat(entries).as("entries of %s", MANIFEST).isNotEmpty();
        assertThat(entries)
                .extracting(Entry::result)
                .as("ok and error vectors")
                .contains("ok", "error");
        return entries.stream()
                .map(e -> DynamicTest.dynamicTest(e.file() + " " + e.result(), () -> check(e)));
    }

    private static void check(Entry entry) throws Exception {
        Path file = VECTORS.resolve(entry.file());
        assertThat(file).exists();
        if (entry.result().equals("error")) {
            String field = entry.values().get("field");
            assertThat(field).as("field named for %s", entry.file()).isNotNull();
            assertThatThrownBy(() -> decode(file))
                    .isInstanceOfSatisfying(
                            SegmentFormatException.class,
                            e -> assertThat(e.field()).as(e.getMessage()).isEqualTo(field));
        } else {
            assertThat(entry.result()).isEqualTo("ok");
            TestContent.Checker checker = decode(file);
            assertThat(checker.objects)
                    .as("objects")
                    .isEqualTo(Long.parseLong(entry.values().get("objects")));
            assertThat(checker.next)
                    .as("records")
                    .isEqualTo(Long.parseLong(entry.values().get("records")));
            String checksum = entry.values().get("checksum");
            long expected = TestContent.parseChecksum(checksum);
            assertThat(checker.checksum).as("checksum").isEqualTo(expected);
        }
    }

    /** Validates the file and decodes every published object, without attaching a lane. */
    private static TestContent.Checker decode(Path file) throws Exception {
        SegmentInspector inspector = SegmentInspector.open(file);
        List<SegmentObject> objects = inspector.publishedObjects();
        long records = objects.stream().mapToLong(SegmentObject::recordCount).sum();
        TestContent.Checker checker = new TestContent.Checker(records);
        try (BufferAllocator allocator = new RootAllocator();
                ArrowBatchReader batches = new ArrowBatchReader(inspector.schema(), allocator)) {
            for (SegmentObject object : objects) {
                checker.check(
                        inspector.header().objectKind(), batches.loadAndValidateFully(object));
            }
        }
        return checker;
    }
}
