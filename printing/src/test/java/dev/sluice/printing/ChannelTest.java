package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ChannelTest {

    @Test
    void streamNamesRoundTrip() {
        assertThat(Channel.MAGENTA.streamName()).isEqualTo("magenta");
        for (Channel channel : Channel.values()) {
            assertThat(Channel.ofStream(channel.streamName())).isSameAs(channel);
        }
    }

    @Test
    void unknownStreamsAreRefused() {
        assertThatThrownBy(() -> Channel.ofStream("CYAN"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'CYAN'")
                .hasMessageContaining("cyan, magenta, yellow or black");
    }
}
