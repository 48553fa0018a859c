package dev.sluice.client.brokerd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.protocol.StartPosition;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BrokerdClientTest {
    @TempDir Path dir;

    @Test
    void theBuilderRefusesTimeoutsThatCannotWork() {
        assertThatThrownBy(
                        () ->
                                BrokerdClient.builder(dir.resolve("s"))
                                        .heartbeatTimeout(Duration.ZERO)
                                        .build())
                .hasMessageContaining("positive");
        assertThatThrownBy(
                        () ->
                                BrokerdClient.builder(dir.resolve("s"))
                                        .heartbeatTimeout(Duration.ofMillis(5))
                                        .build())
                .hasMessageContaining("at least 40 ms");
    }

    @Test
    void noDaemonOnTheSocketIsAnIoErrorAtOnce() {
        BrokerdClient client = BrokerdClient.builder(dir.resolve("absent.sock")).build();
        assertThatThrownBy(
                        () ->
                                client.subscribe(
                                        SubscriptionRequest.builder("t")
                                                .partitions(1, StartPosition.EARLIEST)
                                                .build()))
                .isInstanceOf(IOException.class)
                .isNotInstanceOf(BrokerdException.class);
        assertThat(dir.resolve("absent.sock")).doesNotExist();
    }
}
