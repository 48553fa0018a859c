package dev.sluice.flink.generation;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.job.Transport;
import org.junit.jupiter.api.Test;

class GenerationSourceBuilderTest {

    private static GenerationSourceBuilder builder() {
        return GenerationSource.builder().setBootstrapServers("localhost:9092");
    }

    @Test
    void aProducerMayHoldAtLeastOneUndeliveredTaskOfAStream() {
        assertThatThrownBy(() -> builder().setTasksAheadPerStream(0).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("tasks ahead per stream 0: at least 1")
                .hasMessageContaining("setTasksAheadPerStream");
        assertThatCode(() -> builder().setTasksAheadPerStream(1).build())
                .doesNotThrowAnyException();
    }

    @Test
    void anOutputLocationsTransportNeedsBothItsArguments() {
        assertThatThrownBy(() -> builder().setOutputLocationTransport(null, Transport.LOCAL))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("outputLocation");
        assertThatThrownBy(() -> builder().setOutputLocationTransport("printer-1", null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("transport");
        assertThatCode(
                        () ->
                                builder()
                                        .setOutputLocationTransport("printer-1", Transport.LOCAL)
                                        .build())
                .doesNotThrowAnyException();
    }
}
