package dev.sluice.client.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PublicApiSurfaceTest {
    private static final String ANNOTATION = "dev.sluice.client.annotation.PublicEvolving";

    @TempDir Path sources;

    @Test
    void findsAnnotatedTypesAndNestedOnesButNotMentions() throws IOException {
        write(
                "a/Api.java",
                """
                package a;

                import dev.sluice.client.annotation.PublicEvolving;

                /** Not {@code @PublicEvolving class Fake}. */
                @PublicEvolving
                public final class Api {
                    // @PublicEvolving class Commented
                    static final String S = "@PublicEvolving class Quoted";

                    @PublicEvolving
                    @FunctionalInterface
                    public interface Nested {
                        void run();
                    }

                    public record Plain() {}
                }
                """);
        write(
                "a/Hidden.java",
                """
                package a;

                final class Hidden {}
                """);

        assertThat(PublicApiSurface.annotatedTypes(sources, ANNOTATION))
                .containsExactly("a.Api", "a.Api.Nested");
    }

    @Test
    void namesWhatWasAddedAndWhatRemoved() {
        Path list = Path.of("public-api.txt");

        assertThat(PublicApiSurface.difference(Set.of("a.A", "a.B"), Set.of("a.B", "a.C"), list))
                .contains("added: a.A")
                .contains("removed: a.C")
                .doesNotContain("a.B");
        assertThat(PublicApiSurface.difference(Set.of("a.B"), Set.of("a.B"), list)).isEmpty();
    }

    private void write(String path, String content) throws IOException {
        Path file = sources.resolve(path);
        Files.createDirectories(file.getParent());
        Files.writeString(file, content);
    }
}
