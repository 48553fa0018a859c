package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.SplitRule;
import dev.sluice.client.job.StreamSpec;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class RipJobsTest {

    private static final URI IMAGE = URI.create("file:///srv/images/chart.png");

    @Test
    void aPrintJobIsOneStreamPerInk() {
        PrintJob b8 = PrintJob.preset("B/8");
        JobSpec spec =
                RipJobs.spec(
                        "poster",
                        b8,
                        IMAGE,
                        List.of("node-1", "node-2", "node-3"),
                        8 << 20,
                        1 << 20,
                        OptionalLong.of(5_000_000),
                        false);
        assertThat(spec.id()).isEqualTo("poster");
        assertThat(spec.inputs()).containsExactly(IMAGE.toString());
        assertThat(spec.taskSizeBytes()).isEqualTo(8 << 20);
        assertThat(spec.streams())
                .extracting(StreamSpec::name)
                .containsExactly("cyan", "magenta", "yellow", "black");
        assertThat(spec.streams())
                .extracting(StreamSpec::outputLocation)
                .containsExactly("node-1", "node-2", "node-3", "node-1");
        for (StreamSpec stream : spec.streams()) {
            assertThat(stream.split()).isEqualTo(new SplitRule.Channel(stream.name()));
            assertThat(stream.sizeBytes()).isEqualTo(b8.channelBytes());
            assertThat(stream.rateBytesPerSecond()).hasValue(5_000_000);
            assertThat(stream.chunkSizeBytes()).isEqualTo(1 << 20);
        }
        assertThat(spec.generator().className()).isEqualTo(RipGenerator.class.getName());
        assertThat(spec.generator().parameters())
                .isEqualTo(Map.of("widthPx", "4480", "heightPx", "4480", "compute", "false"));
    }

    @Test
    void aJobNeedsAnOutputLocation() {
        assertThatThrownBy(
                        () ->
                                RipJobs.spec(
                                        "nowhere",
                                        PrintJob.A,
                                        IMAGE,
                                        List.of(),
                                        1 << 20,
                                        1 << 20,
                                        OptionalLong.empty(),
                                        true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("output location");
    }

    @Test
    void rowAlignedTaskSizesAreWholeRowsNearTheTarget() {
        // A: rows of 3,000 bytes.
        assertThat(RipJobs.rowAlignedTaskSize(PrintJob.A, 1_000_000, 1 << 16))
                .isEqualTo(333 * 3_000);
        // Never less than one chunk: 350 rows hold a 1 MiB chunk, 349 do not.
        assertThat(RipJobs.rowAlignedTaskSize(PrintJob.A, 10_000, 1 << 20)).isEqualTo(350 * 3_000);
        // Never more than the largest task: C's rows are 120,000 bytes.
        assertThat(RipJobs.rowAlignedTaskSize(PrintJob.C, Long.MAX_VALUE, 1 << 20))
                .isEqualTo(JobSpec.MAX_TASK_SIZE_BYTES / 120_000 * 120_000);
    }

    @Test
    void rowAlignedTaskSizesMakeValidJobs() {
        PrintJob job = PrintJob.preset("B/8");
        long taskSize = RipJobs.rowAlignedTaskSize(job, 3_000_000, 1 << 20);
        assertThat(taskSize % job.widthPx()).isZero();
        JobSpec spec =
                RipJobs.spec(
                        "aligned",
                        job,
                        IMAGE,
                        List.of("node-1"),
                        taskSize,
                        1 << 20,
                        OptionalLong.empty(),
                        true);
        assertThat(spec.taskSizeBytes()).isEqualTo(taskSize);
    }

    @Test
    void rowsWiderThanTheLargestTaskAreRefused() {
        PrintJob wide = new PrintJob("wide", "a very long banner", 2_000_000, 1, 1_000);
        assertThatThrownBy(() -> RipJobs.rowAlignedTaskSize(wide, 1 << 20, 1 << 20))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("print job wide");
    }
}
