package dev.sluice.client.read;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Percentiles within the histogram's bound of the exact ones, max and count exact. */
class LatenessHistogramTest {

    @Test
    void percentilesAreWithinOneSixtyFourthOfASortedArraysOnRandomData() {
        SplittableRandom random = new SplittableRandom(20261125);
        for (int run = 0; run < 20; run++) {
            int n = 1 + random.nextInt(5000);
            long[] values = new long[n];
            LatenessHistogram histogram = new LatenessHistogram();
            for (int i = 0; i < n; i++) {
                // Log-uniform from 1 ns to about 10 minutes: every bucket range gets values.
                values[i] = (long) Math.pow(2, random.nextDouble() * 39.1);
                histogram.record(values[i]);
            }
            Arrays.sort(values);

            for (double percent : new double[] {0.1, 1, 25, 50, 90, 99, 99.9, 100}) {
                long exact = values[(int) Math.ceil(percent / 100 * n) - 1];
                assertThat(histogram.percentile(percent))
                        .as("p%s of %d values", percent, n)
                        .isBetween(exact - exact / 64, exact + exact / 64);
            }
            assertThat(histogram.max()).isEqualTo(values[n - 1]);
            assertThat(histogram.count()).isEqualTo(n);
        }
    }

    @Test
    void smallValuesAreExactAndNegativeOnesAreOnTime() {
        LatenessHistogram histogram = new LatenessHistogram();
        for (long v : new long[] {-5, 0, 1, 2, 63, 63}) {
            histogram.record(v);
        }
        assertThat(histogram.percentile(50)).isEqualTo(1);
        assertThat(histogram.percentile(34)).isEqualTo(1);
        assertThat(histogram.percentile(33)).isEqualTo(0);
        assertThat(histogram.percentile(99)).isEqualTo(63);
        assertThat(histogram.max()).isEqualTo(63);
    }

    @Test
    void aValueBeyondTheTrackedRangeKeepsItsExactMaxAndNoPercentileExceedsIt() {
        LatenessHistogram histogram = new LatenessHistogram();
        histogram.record(1_000);
        long hour = 3_600_000_000_000L;
        histogram.record(hour);

        assertThat(histogram.max()).isEqualTo(hour);
        assertThat(histogram.percentile(100))
                .isGreaterThan(LatenessHistogram.MAX_TRACKED_NANOS / 2);
        assertThat(histogram.percentile(100)).isLessThanOrEqualTo(hour);
        assertThat(histogram.percentile(50)).isBetween(1_000L - 1_000 / 64, 1_000L + 1_000 / 64);
    }

    @Test
    void emptyIsZero() {
        LatenessHistogram histogram = new LatenessHistogram();
        assertThat(histogram.percentile(99)).isZero();
        assertThat(histogram.max()).isZero();
        assertThat(histogram.count()).isZero();
    }
}
