package dev.sluice.examples.printing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.job.JobState;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo end to end on its real parts (a Kafka broker, sluice-brokerd, a Flink MiniCluster with
 * two producers), on two small jobs at once: every channel of both arrives complete, in order,
 * byte-equal to the sequential run, at the requested constant speed, and is written out.
 */
class PrintingDemoIT {

    @Test
    void twoPrintJobsArriveEqualToTheSequentialRunAndAreWrittenOut(@TempDir Path out)
            throws Exception {
        // 300 x 300 and 400 x 400 px: 90 and 160 KB per channel.
        List<PrintJob> jobs = List.of(PrintJob.A.scaled(10), PrintJob.B.scaled(90));
        long speed = 400_000;
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        List<PrintingDemo.JobReport> reports =
                PrintingDemo.run(
                        new PrintingDemo.Options(
                                jobs, speed, null, out, null, 2, Duration.ofMinutes(3)),
                        new PrintStream(console, true, StandardCharsets.UTF_8),
                        false);

        assertThat(reports).hasSize(2);
        for (int i = 0; i < jobs.size(); i++) {
            PrintJob job = jobs.get(i);
            PrintingDemo.JobReport report = reports.get(i);
            assertThat(report.state()).isEqualTo(JobState.COMPLETED);
            assertThat(report.channels()).hasSize(4);
            for (PrintingDemo.ChannelReport channel : report.channels()) {
                assertThat(channel.bytes()).isEqualTo(job.channelBytes());
                assertThat(channel.streamedSha256())
                        .as(report.jobId() + " " + channel.channel())
                        .isEqualTo(channel.sequentialSha256());
                // Paced: never faster than the printer's speed (how much slower is the benchmarks'
                // business, not a test's).
                assertThat(channel.bytesPerSecond()).isPositive().isLessThanOrEqualTo(speed);
                BufferedImage png = ImageIO.read(channel.png().toFile());
                assertThat(png.getWidth()).isEqualTo(job.widthPx());
                assertThat(png.getHeight()).isEqualTo(job.heightPx());
            }
            assertThat(ImageIO.read(report.composite().toFile())).isNotNull();
            assertThat(report.ok()).isTrue();
        }
        assertThat(console.toString(StandardCharsets.UTF_8))
                .contains("equal to the sequential run", "print-A-10", "print-B-90");
    }
}
