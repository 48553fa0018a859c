package dev.sluice.flink.generation;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.job.Transport;
import java.time.Duration;
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

    @Test
    void thePreferredLeaderIntervalIsZeroOrAtLeastAMillisecond() {
        assertThatThrownBy(
                        () -> builder().setPreferredLeaderInterval(Duration.ofSeconds(-1)).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("preferred leader interval PT-1S: at least 1 ms, or zero")
                .hasMessageContaining("setPreferredLeaderInterval");
        assertThatThrownBy(
                        () -> builder().setPreferredLeaderInterval(Duration.ofNanos(500)).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("at least 1 ms");
        assertThatThrownBy(() -> builder().setPreferredLeaderInterval(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("interval");
        assertThatCode(() -> builder().setPreferredLeaderInterval(Duration.ZERO).build())
                .doesNotThrowAnyException();
        assertThatCode(() -> builder().setPreferredLeaderInterval(Duration.ofMillis(1)).build())
                .doesNotThrowAnyException();
    }
}
