package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.JobStatus;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class CalibrationTest {

    @Test
    void theSpeedIsHalfTheMeasuredRateOverTheChannelsRoundedDownToATenthOfAMegabyte() {
        // 67 MB/s over 8 channels: half is 4.1875 MB/s each.
        assertThat(Calibration.perChannelSpeed(67e6, 8)).isEqualTo(4_100_000);
        // 42 MB/s over 8 channels: half is 2.625 MB/s each.
        assertThat(Calibration.perChannelSpeed(42e6, 8)).isEqualTo(2_600_000);
        // A whole number of steps stays whole: 65.6 * 1e6 is 65,599,999.99... in doubles, and
        // half of it over 8 channels must still be 4.1 MB/s, not 4.0.
        assertThat(Calibration.perChannelSpeed(65.6 * 1e6, 8)).isEqualTo(4_100_000);
        assertThat(Calibration.perChannelSpeed(3.3e6, 4)).isEqualTo(400_000);
    }

    @Test
    void theSpeedIsNeverBelowATenthOfAMegabytePerSecond() {
        assertThat(Calibration.perChannelSpeed(1.5e6, 8)).isEqualTo(100_000);
        assertThat(Calibration.perChannelSpeed(1, 8)).isEqualTo(100_000);
        assertThat(Calibration.perChannelSpeed(0, 8)).isEqualTo(100_000);
    }

    @Test
    void theCalibrationJobsAreTheChosenOnesScaledToAFewMegabytesPerChannel() {
        List<PrintJob> jobs = List.of(PrintJob.A, PrintJob.B.scaled(8));
        List<PrintJob> scaled = Calibration.scaledDown(jobs);
        long total = 0;
        for (int i = 0; i < jobs.size(); i++) {
            PrintJob job = jobs.get(i);
            PrintJob calibration = scaled.get(i);
            assertThat(calibration.sheetWidthInches()).isEqualTo(job.sheetWidthInches());
            assertThat(calibration.sheetHeightInches()).isEqualTo(job.sheetHeightInches());
            assertThat(calibration.dpi()).isLessThan(job.dpi());
            assertThat(calibration.name()).startsWith(job.name() + " at ");
            total += 4 * calibration.channelBytes();
        }
        // Rounding the resolution down loses a few percent of the volume, never adds to it.
        assertThat(total)
                .isLessThanOrEqualTo(Calibration.BYTES)
                .isGreaterThan(Calibration.BYTES * 9 / 10);
    }

    @Test
    void aJobSmallerThanItsShareIsCalibratedOnAsItIs() {
        List<PrintJob> jobs = List.of(PrintJob.A.scaled(10), PrintJob.B.scaled(90));
        assertThat(Calibration.scaledDown(jobs)).isEqualTo(jobs);
    }

    @Test
    void theClusterTakesTheCalibrationJobsTasksTooEvenWhereTheyAreLargerThanTheJobs() {
        PrintJob calibration = Calibration.scaledDown(List.of(PrintJob.B)).get(0);
        assertThat(PrintingDemo.taskSize(calibration))
                .isGreaterThan(PrintingDemo.taskSize(PrintJob.B));
        assertThat(PrintingDemo.largestTask(List.of(PrintJob.B)))
                .isEqualTo(PrintingDemo.taskSize(calibration));
    }

    @Test
    void aCalibrationJobThatDidNotCompleteFailsTheCalibrationNamingItAndTheWayAround() {
        PrintRun.Job completed = job("calibrate-A-10", JobState.COMPLETED);
        PrintRun.Job failed =
                new PrintRun.Job(
                        PrintJob.B.scaled(90),
                        spec("calibrate-B-90", PrintJob.B.scaled(90)),
                        JobStatus.now("calibrate-B-90", JobState.FAILED, "preload: no image"),
                        Map.of());

        assertThatCode(() -> Calibration.checkCompleted(new PrintRun.Result(0, List.of(completed))))
                .doesNotThrowAnyException();
        assertThatThrownBy(
                        () ->
                                Calibration.checkCompleted(
                                        new PrintRun.Result(0, List.of(completed, failed))))
                .isInstanceOf(Calibration.Failed.class)
                .hasMessage(
                        "the calibration failed: job calibrate-B-90 ended FAILED: preload: no"
                                + " image; --speed MB/s sets the per-channel speed without it");
    }

    private static PrintRun.Job job(String id, JobState state) {
        return new PrintRun.Job(
                PrintJob.A.scaled(10),
                spec(id, PrintJob.A.scaled(10)),
                JobStatus.now(id, state),
                Map.of());
    }

    private static JobSpec spec(String id, PrintJob job) {
        return PrintingDemo.spec(
                id,
                job,
                URI.create("file:/chart.png"),
                List.of("printhead-cyan"),
                OptionalLong.empty());
    }
}
