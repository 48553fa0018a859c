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
        model.handedOut(0, "j", "t0", 1000, 0);
        model.done(0, "j", "t0", true, 0, 100);
        assertThat(model.rate(0)).isEqualTo(10.0);
        // The next task started when the first was done, not when it was handed out.
        model.handedOut(0, "j", "t1", 1000, 50);
        model.done(0, "j", "t1", true, 0, 300);
        assertThat(model.rate(0))
                .isEqualTo(ProducerModel.RATE_WEIGHT * 5 + (1 - ProducerModel.RATE_WEIGHT) * 10);
    }

    @Test
    void aDroppedOrFailedTaskMeasuresNothing() {
        model.handedOut(0, "j", "t0", 1000, 0);
        model.done(0, "j", "t0", false, 0, 100);
        assertThat(model.rate(0)).isZero();
        assertThat(model.expectedMillis(0, 1000)).isEmpty();
    }

    @Test
    void anUnmeasuredProducerIsExpectedAtItsSpeedFactorTimesTheMeasuredOnes() {
        model.announced(1, 0.25);
        assertThat(model.rate(1)).as("nobody measured yet").isZero();
        model.handedOut(0, "j", "t0", 1000, 0);
        model.done(0, "j", "t0", true, 0, 100);
        assertThat(model.rate(1)).isEqualTo(2.5);
        assertThat(model.expectedMillis(1, 1000)).hasValue(400);
        assertThat(model.fastestRate(List.of(0, 1))).isEqualTo(10.0);
    }

    @Test
    void aQueuedTaskIsDoneAfterTheRestOfTheOneAtTheHead() {
        measuredAt10BytesPerMilli(0);
        model.handedOut(0, "j", "a", 1000, 1000);
        model.handedOut(0, "j", "b", 500, 1000);
        assertThat(model.expectedDone(0, "a", 1040)).hasValue(1100);
        assertThat(model.expectedDone(0, "b", 1040)).hasValue(1150);
        assertThat(model.expectedDone(0, "c", 1040)).as("not held").isEmpty();
    }

    @Test
    void aTaskThatOverrunsIsExpectedToNeedAsLongAgainAsItOverranAndItsProducerBecomesSlow() {
        measuredAt10BytesPerMilli(0);
        model.handedOut(0, "j", "a", 1000, 1000);
        // Expected 100 ms; at 250 ms it overran by 150, so 150 more.
        assertThat(model.expectedDone(0, "a", 1250)).isEqualTo(OptionalLong.of(1400));
        assertThat(model.overran(0, BufferModel.SLOW_FACTOR, 1300)).isFalse();
        assertThat(model.overran(0, BufferModel.SLOW_FACTOR, 1301)).isTrue();
        model.done(0, "j", "a", true, 0, 1400);
        assertThat(model.overran(0, BufferModel.SLOW_FACTOR, 1500)).isFalse();
    }

    @Test
    void aLostProducerHoldsNothingAndIsMeasuredAnew() {
        measuredAt10BytesPerMilli(0);
        model.handedOut(0, "j", "a", 1000, 1000);
        model.lost(0);
        assertThat(model.expectedDone(0, "a", 1000)).isEmpty();
        assertThat(model.rate(0)).isZero();
    }

    @Test
    void aJobsPreloadIsLeftOutOfTheRateAndCountedInTheFirstTaskOfTheJobOnEachProducer() {
        measuredAt10BytesPerMilli(0);
        measuredAt10BytesPerMilli(1);
        // Job k: producer 0 spends 200 ms of its first task on the preload, then 100 computing.
        model.handedOut(0, "k", "k0", 1000, 1000);
        model.handedOut(1, "k", "k1", 1000, 1000);
        assertThat(model.overran(0, BufferModel.SLOW_FACTOR, 2000))
                .as("no preload of k measured yet: not judged")
                .isFalse();
        assertThat(model.expectedDone(1, "k1", 1250))
                .as("its computation counted from now while the preload is unknown")
                .hasValue(1350);
        model.done(0, "k", "k0", true, 200, 1300);
        assertThat(model.rate(0)).as("the preload left out").isEqualTo(10.0);

        // Producer 1's first task is expected in 300 ms too, and judged on three times that.
        assertThat(model.expectedDone(1, "k1", 1250)).hasValue(1300);
        assertThat(model.expectedDone(1, "k1", 1400)).as("overran by 100").hasValue(1500);
        assertThat(model.overran(1, BufferModel.SLOW_FACTOR, 1900)).isFalse();
        assertThat(model.overran(1, BufferModel.SLOW_FACTOR, 1901)).isTrue();
        assertThat(model.headTiming(1, 1901))
                .isEqualTo(
                        "producer 1 on its task for 901 ms, expected in 100 ms and 200 ms of"
                                + " preload");

        // Producer 0 has the generator: its next task of k is judged on its own time.
        model.handedOut(0, "k", "k2", 1000, 1300);
        assertThat(model.overran(0, BufferModel.SLOW_FACTOR, 1601)).isTrue();
    }

    @Test
    void aProducerStartedAgainAndAnEndedJobPreloadAnew() {
        measuredAt10BytesPerMilli(0);
        model.handedOut(0, "k", "k0", 1000, 0);
        model.done(0, "k", "k0", true, 500, 700);
        model.announced(0, 1.0);
        model.handedOut(0, "k", "k1", 1000, 1000);
        assertThat(model.overran(0, BufferModel.SLOW_FACTOR, 2800))
                .as("restored: k's 500 ms of preload counted again")
                .isFalse();
        assertThat(model.overran(0, BufferModel.SLOW_FACTOR, 2801)).isTrue();

        model.ended("k");
        assertThat(model.overran(0, BufferModel.SLOW_FACTOR, 2801))
                .as("k's preload forgotten")
                .isFalse();
    }

    private void measuredAt10BytesPerMilli(int producer) {
        model.handedOut(producer, "j", "m", 1000, 0);
        model.done(producer, "j", "m", true, 0, 100);
    }
}
