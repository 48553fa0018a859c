package dev.sluice.client.job;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** The jobs the tests share. */
final class TestJobs {

    private TestJobs() {}

    /** The text of {@code jobs/printing-job.json}: four inks of a packaging print job. */
    static String printingJobJson() {
        try (InputStream in = TestJobs.class.getResourceAsStream("/jobs/printing-job.json")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A one-stream job with every default, under the given id. */
    static JobSpec small(String id) {
        return new JobSpec(
                id,
                List.of("file:///srv/in.tiff"),
                new GeneratorSpec("com.example.Gen", Map.of("dpi", "300")),
                List.of(new StreamSpec("black", "printer-1", new SplitRule.Channel("k"), 5000)));
    }
}
