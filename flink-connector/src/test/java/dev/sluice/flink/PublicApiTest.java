package dev.sluice.flink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.annotation.PublicApiSurface;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The connector's public API, every type marked Flink's {@code @PublicEvolving}, is the list in
 * {@code src/test/resources/public-api.txt}: a type that joins or leaves it changes that list too,
 * in the same diff.
 */
class PublicApiTest {
    @Test
    void publicEvolvingTypesAreTheListedOnes() throws IOException {
        assertThat(
                        PublicApiSurface.differenceFromList(
                                Path.of("src/main/java"),
                                "org.apache.flink.annotation.PublicEvolving",
                                Path.of("src/test/resources/public-api.txt")))
                .isEmpty();
    }
}
