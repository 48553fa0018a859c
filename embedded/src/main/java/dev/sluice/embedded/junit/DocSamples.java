package dev.sluice.embedded.junit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The fenced code samples of the project's pages (README.md and docs/*.md), for the tests that run
 * or compile them against the code (docs/architecture.md, "Tests").
 */
public final class DocSamples {
    private static final Pattern FENCE =
            Pattern.compile("^```(\\w+)\\n(.*?)^```$", Pattern.MULTILINE | Pattern.DOTALL);

    /** A sample: its page from the repository's root, the line its code starts on, its code. */
    public record Sample(String page, int line, String code) {
        /** Where it is, as {@code docs/formats.md:51}. */
        public String where() {
            return page + ":" + line;
        }
    }

    private DocSamples() {}

    /** The samples fenced as {@code language} in the pages under {@code root}, page by page. */
    public static List<Sample> of(Path root, String language) {
        List<Path> pages = new ArrayList<>();
        pages.add(root.resolve("README.md"));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
            List<Sample> samples = new ArrayList<>();
            for (Path page : pages) {
                String text = Files.readString(page);
                Matcher fence = FENCE.matcher(text);
                while (fence.find()) {
                    if (fence.group(1).equals(language)) {
                        int line = (int) text.substring(0, fence.start(2)).lines().count() + 1;
                        samples.add(
                                new Sample(root.relativize(page).toString(), line, fence.group(2)));
                    }
                }
            }
            return samples;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
