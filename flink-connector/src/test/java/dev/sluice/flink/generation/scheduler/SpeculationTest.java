package dev.sluice.flink.generation.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** When the producers have capacity to spare for duplicates, on a clock of milliseconds. */
class SpeculationTest {
    private final ProducerModel model = new ProducerModel();
    private final Speculation speculation = new Speculation(model);

    @Test
    void theProducersHaveSpareCapacityWhileTheyGenerateMoreThanThePacedStreamsRead() {
        measuredAt10BytesPerMilli(0);
        measuredAt10BytesPerMilli(1);
        assertThat(speculation.hasSpareCapacity(19.9, List.of(0, 1), 100)).isTrue();
        assertThat(speculation.hasSpareCapacity(20.1, List.of(0, 1), 100)).isFalse();
        assertThat(speculation.hasSpareCapacity(10.1, List.of(0), 100))
                .as("only the live producers count")
                .isFalse();
    }

    @Test
    void aSlowProducerAddsNoCapacity() {
        measuredAt10BytesPerMilli(0);
        measuredAt10BytesPerMilli(1);
        // Producer 1 expected 100 ms for its task, at 400 ms it is slow.
        model.handedOut(1, "j", "a", 1000, 100);
        assertThat(speculation.isSlow(1, 400)).isFalse();
        assertThat(speculation.hasSpareCapacity(15, List.of(0, 1), 400)).isTrue();
        assertThat(speculation.isSlow(1, 401)).isTrue();
        assertThat(speculation.hasSpareCapacity(15, List.of(0, 1), 401)).isFalse();
    }

    private void measuredAt10BytesPerMilli(int producer) {
        model.handedOut(producer, "j", "m", 1000, 0);
        model.done(producer, "j", "m", true, 0, 100);
    }
}
