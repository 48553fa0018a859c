package dev.sluice.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The demo cluster for real, on this machine's Docker: the image built from this build's outputs,
 * three hosts up, then the checks and the faults of {@link ClusterDemo}, as {@code ./sluice cluster
 * demo} runs them. Each step must pass; what the steps printed is in the report.
 */
class ClusterIT {

    @Test
    void theClusterPassesEveryCheckAndEndsEveryFaultWithCompleteUnstarvedStreams()
            throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out =
                new PrintStream(new Tee(System.out, printed), true, StandardCharsets.UTF_8);
        // Its own compose project, and free ports for Flink's UI and Prometheus: a demo cluster
        // left up on this machine does not clash with the test's.
        ClusterDemo demo =
                new ClusterDemo(
                        Path.of(System.getProperty("sluice.root")),
                        "sluice-it",
                        Map.of("SLUICE_FLINK_UI_PORT", "", "SLUICE_PROMETHEUS_PORT", ""),
                        out);

        boolean passed = demo.demo(false);

        assertThat(demo.steps())
                .as(printed.toString(StandardCharsets.UTF_8))
                .extracting(ClusterDemo.Step::name)
                .containsExactly(
                        "image build",
                        "cluster up",
                        "warm-up",
                        "a. printing across hosts",
                        "e. dashboard during (a)",
                        "b. SQL through the Gateway",
                        "capacity",
                        "c. generation locality",
                        "d. SluiceSource job, TM killed",
                        "d. TaskManager killed",
                        "d. TaskManager paused 15 s",
                        "d. TaskManager at 0.25 CPU",
                        "d. Kafka broker stopped",
                        "d. sluice-brokerd killed",
                        "d. host lost",
                        "d. host's network cut 20 s");
        assertThat(demo.steps())
                .as(printed.toString(StandardCharsets.UTF_8))
                .allMatch(ClusterDemo.Step::passed);
        assertThat(passed).isTrue();
    }

    /** Writes to two streams: the test's output and the report's message. */
    private static final class Tee extends OutputStream {
        private final OutputStream first;
        private final OutputStream second;

        Tee(OutputStream first, OutputStream second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public void write(int b) throws java.io.IOException {
            first.write(b);
            second.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws java.io.IOException {
            first.write(b, off, len);
            second.write(b, off, len);
        }
    }
}
