package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.job.JobState;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo end to end on its real parts (a Kafka broker, sluice-brokerd, a Flink MiniCluster with
 * two producers), on two small jobs at once, at the speed its calibration measures on them: every
 * channel of both arrives complete, in order, byte-equal to the sequential run, at that constant
 * speed, and is written out; the speed and the aggregate rate are printed.
 */
class PrintingDemoIT {
    private static final Pattern SPEED =
            Pattern.compile(
                    "speed +([0-9.]+) MB/s per channel \\(measured: this machine's pipeline moved"
                            + " ([0-9.]+) MB/s unpaced for A/10,B/90 .*; --speed MB/s sets it");
    private static final Pattern AGGREGATE =
            Pattern.compile(
                    "aggregate +([0-9.]+) MB in ([0-9.]+) s from the first submission: ([0-9.]+)"
                            + " MB/s over 8 channels read at ([0-9.]+) MB/s each .* one thread"
                            + " computes the same jobs at ([0-9.]+) MB/s");
    private static final Pattern STARVATION = Pattern.compile("starvation events: ([0-9]+)");

    @Test
    void twoPrintJobsArriveEqualToTheSequentialRunAndAreWrittenOut(@TempDir Path out)
            throws Exception {
        // 300 x 300 and 400 x 400 px: 90 and 160 KB per channel, small enough to calibrate on
        // as they are.
        List<PrintJob> jobs = List.of(PrintJob.A.scaled(10), PrintJob.B.scaled(90));
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        PrintingDemo.Report report =
                PrintingDemo.run(
                        new PrintingDemo.Options(
                                jobs,
                                OptionalLong.empty(),
                                null,
                                out,
                                null,
                                2,
                                Duration.ofMinutes(3),
                                false),
                        new PrintStream(console, true, StandardCharsets.UTF_8),
                        false);
        String printed = console.toString(StandardCharsets.UTF_8);

        assertThat(report.measured()).isTrue();
        long speed = report.bytesPerSecond();
        assertThat(speed).isGreaterThanOrEqualTo(100_000);
        assertThat(report.jobs()).hasSize(2);
        for (int i = 0; i < jobs.size(); i++) {
            PrintJob job = jobs.get(i);
            PrintingDemo.JobReport jobReport = report.jobs().get(i);
            assertThat(jobReport.state()).isEqualTo(JobState.COMPLETED);
            assertThat(jobReport.channels()).hasSize(4);
            for (PrintingDemo.ChannelReport channel : jobReport.channels()) {
                assertThat(channel.bytes()).isEqualTo(job.channelBytes());
                assertThat(channel.streamedSha256())
                        .as(jobReport.jobId() + " " + channel.channel())
                        .isEqualTo(channel.sequentialSha256());
                // Paced: never faster than the measured speed (how much slower is the
                // benchmarks' business, not a test's).
                assertThat(channel.bytesPerSecond()).isPositive().isLessThanOrEqualTo(speed);
                BufferedImage png = ImageIO.read(channel.png().toFile());
                assertThat(png.getWidth()).isEqualTo(job.widthPx());
                assertThat(png.getHeight()).isEqualTo(job.heightPx());
            }
            assertThat(ImageIO.read(jobReport.composite().toFile())).isNotNull();
            assertThat(jobReport.ok()).isTrue();
        }
        assertThat(report.ok()).isTrue();
        assertThat(printed)
                .contains(
                        "equal to the sequential run",
                        "print-A-10",
                        "print-B-90",
                        "calibrate  A/10, B/90, 1.0 MB, read unpaced twice");
        assertThat(printed)
                .as("each job's start delay, and why")
                .containsPattern("buffer     print-A-10 +start delay [0-9.]+ s: one task");

        Matcher speedLine = SPEED.matcher(printed);
        assertThat(speedLine.find()).as(printed).isTrue();
        assertThat(Math.round(Double.parseDouble(speedLine.group(1)) * 1e6)).isEqualTo(speed);
        assertThat(Double.parseDouble(speedLine.group(2))).isPositive();

        Matcher aggregate = AGGREGATE.matcher(printed);
        assertThat(aggregate.find()).as(printed).isTrue();
        double megabytes = Double.parseDouble(aggregate.group(1));
        double seconds = Double.parseDouble(aggregate.group(2));
        assertThat(megabytes).isEqualTo(Math.round(report.bytes() / 1e5) / 10.0);
        assertThat(seconds).isPositive();
        assertThat(Double.parseDouble(aggregate.group(3))).isPositive();
        assertThat(Math.round(Double.parseDouble(aggregate.group(4)) * 1e6)).isEqualTo(speed);
        assertThat(Double.parseDouble(aggregate.group(5))).isPositive();

        Matcher starvation = STARVATION.matcher(printed);
        assertThat(starvation.find()).as(printed).isTrue();
        assertThat(Long.parseLong(starvation.group(1))).isEqualTo(report.starvationEvents());
    }
}
