package dev.sluice.flink.generation.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.job.BufferModel;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Producers' speeds and when their tasks are expected to be done, on a clock of milliseconds. */
class ProducerModelTest {
    private final ProducerModel model = new ProducerModel();

    @Test
    void aProducerIsMeasuredTaskByTaskInAMovingAverage() {
        model.handedOut(0, "t0", 1000, 0);
        model.done(0, "t0", true, 100);
        assertThat(model.rate(0)).isEqualTo(10.0);
        // The next task started when the first was done, not when it was handed out.
        model.handedOut(0, "t1", 1000, 50);
        model.done(0, "t1", true, 300);
        assertThat(model.rate(0))
                .isEqualTo(ProducerModel.RATE_WEIGHT * 5 + (1 - ProducerModel.RATE_WEIGHT) * 10);
    }

    @Test
    void aDroppedOrFailedTaskMeasuresNothing() {
        model.handedOut(0, "t0", 1000, 0);
        model.done(0, "t0", false, 100);
        assertThat(model.rate(0)).isZero();
        assertThat(model.expectedMillis(0, 1000)).isEmpty();
    }

    @Test
    void anUnmeasuredProducerIsExpectedAtItsSpeedFactorTimesTheMeasuredOnes() {
        model.announced(1, 0.25);
        assertThat(model.rate(1)).as("nobody measured yet").isZero();
        model.handedOut(0, "t0", 1000, 0);
        model.done(0, "t0", true, 100);
        assertThat(model.rate(1)).isEqualTo(2.5);
        assertThat(model.expectedMillis(1, 1000)).hasValue(400);
        assertThat(model.fastestRate(List.of(0, 1))).isEqualTo(10.0);
    }

    @Test
    void aQueuedTaskIsDoneAfterTheRestOfTheOneAtTheHead() {
        measuredAt10BytesPerMilli(0);
        model.handedOut(0, "a", 1000, 1000);
        model.handedOut(0, "b", 500, 1000);
        assertThat(model.expectedDone(0, "a", 1040)).hasValue(1100);
        assertThat(model.expectedDone(0, "b", 1040)).hasValue(1150);
        assertThat(model.expectedDone(0, "c", 1040)).as("not held").isEmpty();
    }

    @Test
    void aTaskThatOverrunsIsExpectedToNeedAsLongAgainAsItOverranAndItsProducerBecomesSlow() {
        measuredAt10BytesPerMilli(0);
        model.handedOut(0, "a", 1000, 1000);
        // Expected 100 ms; at 250 ms it overran by 150, so 150 more.
        assertThat(model.expectedDone(0, "a", 1250)).isEqualTo(OptionalLong.of(1400));
        assertThat(model.overran(0, BufferModel.SLOW_FACTOR, 1300)).isFalse();
        assertThat(model.overran(0, BufferModel.SLOW_FACTOR, 1301)).isTrue();
        model.done(0, "a", true, 1400);
        assertThat(model.overran(0, BufferModel.SLOW_FACTOR, 1500)).isFalse();
    }

    @Test
    void aLostProducerHoldsNothingAndIsMeasuredAnew() {
        measuredAt10BytesPerMilli(0);
        model.handedOut(0, "a", 1000, 1000);
        model.lost(0);
        assertThat(model.expectedDone(0, "a", 1000)).isEmpty();
        assertThat(model.rate(0)).isZero();
    }

    private void measuredAt10BytesPerMilli(int producer) {
        model.handedOut(producer, "m", 1000, 0);
        model.done(producer, "m", true, 100);
    }
}
