package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PrintingDemoOptionsTest {

    @Test
    void defaultsAreJobsAAndBAtAnEighthAtAMeasuredSpeed() {
        PrintingDemo.Options options = PrintingDemo.Options.parse(new String[0]);
        assertThat(options.jobs()).containsExactly(PrintJob.A, PrintJob.B.scaled(8));
        assertThat(options.bytesPerSecond()).isEmpty();
        assertThat(options.parallelism()).isEqualTo(2);
        assertThat(options.survivesProducerLoss()).isFalse();
    }

    @Test
    void optionsAreRead() {
        PrintingDemo.Options options =
                PrintingDemo.Options.parse(
                        new String[] {
                            "--jobs",
                            "B/4,C/40",
                            "--speed",
                            "2.5",
                            "--out",
                            "x",
                            "--buffer",
                            "producer-loss"
                        });
        assertThat(options.jobs()).containsExactly(PrintJob.B.scaled(4), PrintJob.C.scaled(40));
        assertThat(options.bytesPerSecond()).hasValue(2_500_000);
        assertThat(options.out()).isEqualTo(Path.of("x"));
        assertThat(options.survivesProducerLoss()).isTrue();
    }

    @Test
    void badOptionsAreRefusedWithWhatIsWrong() {
        assertThatThrownBy(() -> PrintingDemo.Options.parse(new String[] {"--colour", "red"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown option --colour")
                .hasMessageContaining("--jobs");
        assertThatThrownBy(() -> PrintingDemo.Options.parse(new String[] {"--speed"}))
                .hasMessageContaining("--speed needs a value");
        for (String speed : List.of("fast", "0", "-1", "NaN")) {
            assertThatThrownBy(() -> PrintingDemo.Options.parse(new String[] {"--speed", speed}))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("--speed: a positive rate in MB/s, got '" + speed + "'");
        }
        assertThatThrownBy(() -> PrintingDemo.Options.parse(new String[] {"--buffer", "big"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--buffer: task or producer-loss, got 'big'");
        assertThatThrownBy(() -> PrintingDemo.Options.parse(new String[] {"--jobs", "Z"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Z");
    }

    @Test
    void anImageThatCannotBeReadStopsTheDemoBeforeAnythingStarts(@TempDir Path dir) {
        Path missing = dir.resolve("missing.png");
        PrintingDemo.Options options =
                new PrintingDemo.Options(
                        List.of(PrintJob.A),
                        OptionalLong.of(1),
                        missing,
                        dir,
                        null,
                        2,
                        Duration.ofSeconds(1),
                        false);
        assertThatThrownBy(
                        () ->
                                PrintingDemo.run(
                                        options,
                                        new PrintStream(OutputStream.nullOutputStream()),
                                        false))
                .isInstanceOf(IOException.class)
                .hasMessage("--image: cannot read " + missing);
    }
}
