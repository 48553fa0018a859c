package dev.sluice.flink.generation.reader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.flink.generation.scheduler.JobEvents;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.testutils.source.reader.TestingReaderContext;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.junit.jupiter.api.Test;

/** A producer announces its capacity before it asks for work (docs/generation.md). */
class GenerationSourceReaderTest {

    private static TestingReaderContext context(double speedFactor) {
        Configuration configuration = new Configuration();
        configuration.set(GenerationSourceReader.SPEED_FACTOR, speedFactor);
        return new TestingReaderContext(
                configuration, UnregisteredMetricsGroup.createSourceReaderMetricGroup());
    }

    @Test
    void aProducerAnnouncesItsSpeedFactorThenAsksForTwoTasks() throws Exception {
        TestingReaderContext context = context(0.25);
        try (GenerationSourceReader reader = new GenerationSourceReader(context)) {
            reader.start();
            assertThat(context.getSentEvents())
                    .containsExactly(new JobEvents.ProducerReady(2, 0.25));
            assertThat(context.getNumSplitRequests()).isEqualTo(2);
        }
    }

    @Test
    void aSpeedFactorThatIsNotAPositiveNumberIsRefusedNamingItsKey() throws Exception {
        for (double bad : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            TestingReaderContext context = context(bad);
            try (GenerationSourceReader reader = new GenerationSourceReader(context)) {
                assertThatThrownBy(reader::start)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessage(
                                "sluice.producer.speed-factor must be a positive number, got "
                                        + bad);
                assertThat(context.getNumSplitRequests()).isZero();
            }
        }
    }
}
