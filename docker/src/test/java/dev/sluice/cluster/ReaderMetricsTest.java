package dev.sluice.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.read.StreamReaderStats;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class ReaderMetricsTest {
    private long now = 1_000_000;
    private final ReaderMetrics metrics = new ReaderMetrics("host1", () -> now);

    private static StreamReaderStats stats(
            long bytes, long starved, long bufferedBytes, long p99Nanos, boolean ended) {
        return new StreamReaderStats(
                bytes / 1000,
                bytes,
                starved,
                0,
                OptionalLong.of(4_000_000),
                4_000_000,
                0,
                p99Nanos,
                p99Nanos,
                0,
                0,
                bufferedBytes,
                ended,
                0,
                Optional.empty(),
                0,
                0);
    }

    @Test
    void aStreamBeingReadHasEachFamilyLabelledByItsJobStreamLocationAndHost() {
        metrics.reading(
                "job-1",
                "cyan",
                "printhead-cyan",
                () -> stats(8_000_000, 2, 2_000_000, 3_000_000, false));

        String labels =
                "{sluice_job=\"job-1\",stream=\"cyan\",output_location=\"printhead-cyan\",host=\"host1\"}";
        assertThat(metrics.scrape())
                .contains("# TYPE sluice_reader_bytes_total counter\n")
                .contains("sluice_reader_requested_bytes_per_second" + labels + " 4000000.0\n")
                .contains("sluice_reader_bytes_total" + labels + " 8000000.0\n")
                // 2 MB in hand at 4 MB/s.
                .contains("sluice_reader_buffered_seconds" + labels + " 0.5\n")
                .contains("sluice_reader_starvation_events_total" + labels + " 2.0\n")
                .contains("sluice_reader_lateness_p99_seconds" + labels + " 0.003\n")
                .contains("sluice_reader_end_of_stream" + labels + " 0.0\n");
    }

    @Test
    void aFinishedStreamIsServedForTheTimeKeptThenDropped() {
        StreamReaderStats last = stats(8_000_000, 0, 0, 0, true);
        metrics.reading("job-1", "cyan", "printhead-cyan", () -> last);
        metrics.reading("job-2", "cyan", "printhead-cyan", () -> stats(1000, 0, 0, 0, false));
        metrics.ended("job-1", "cyan");

        now += ReaderMetrics.KEPT.toMillis();
        assertThat(metrics.scrape())
                .contains("sluice_job=\"job-1\"")
                .contains("sluice_job=\"job-2\"");

        now += 1;
        assertThat(metrics.scrape())
                .doesNotContain("sluice_job=\"job-1\"")
                .contains("sluice_job=\"job-2\"");
    }

    @Test
    void labelValuesAreEscapedAsTheTextFormatWants() {
        assertThat(ReaderMetrics.escape("a\\b\"c\nd")).isEqualTo("a\\\\b\\\"c\\nd");
    }
}
