package dev.sluice.examples.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.flink.source.ReadMode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class SourceExampleTest {
    private static SourceExample.Args parse(String... args) {
        return SourceExample.Args.parse(args);
    }

    @Test
    void readsInPushModeForTheWordSluiceUnlessTold() {
        assertThat(parse("filter", "--brokerd", "/opt/sluice-brokerd"))
                .isEqualTo(
                        new SourceExample.Args(
                                "filter", ReadMode.PUSH, "sluice", Path.of("/opt/sluice-brokerd")));
        assertThat(parse("filter", "--mode", "PULL", "--word", "mill", "--brokerd", "b"))
                .isEqualTo(new SourceExample.Args("filter", ReadMode.PULL, "mill", Path.of("b")));
    }

    @Test
    void anUnknownJobNamesTheJobsThereAre() {
        assertThatThrownBy(() -> parse("grep", "--brokerd", "b"))
                .hasMessage(
                        "unknown job grep: name one of count, filter, wordcount,"
                                + " windowed-wordcount");
        assertThatThrownBy(() -> parse())
                .hasMessage("no job: name one of count, filter, wordcount, windowed-wordcount");
    }

    @Test
    void aBadOptionSaysWhatToSet() {
        assertThatThrownBy(() -> parse("count", "--mode", "push", "--brokerd", "b"))
                .hasMessage("--mode push: set PUSH, PULL or AUTO");
        assertThatThrownBy(() -> parse("count", "--mode")).hasMessage("--mode needs a value");
        assertThatThrownBy(() -> parse("count", "--speed", "3"))
                .hasMessage("unknown option --speed");
        assertThatThrownBy(() -> parse("count"))
                .hasMessage("--brokerd: set the sluice-brokerd executable");
    }

    @Test
    void theSampleTextIsTwelveLinesOfWords() throws Exception {
        assertThat(EmbeddedTextTopic.sampleText())
                .hasSize(12)
                .allMatch(line -> line.matches("[a-z ]+"));
    }
}
