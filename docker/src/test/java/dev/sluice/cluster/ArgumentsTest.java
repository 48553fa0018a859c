package dev.sluice.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class ArgumentsTest {

    @Test
    void readsOptionsAndPositionalsInAnyOrder() {
        Arguments arguments =
                Arguments.parse("--root", "/src", "demo", "--speed", "1.5", "--keep", "true");

        assertThat(arguments.required("--root")).isEqualTo("/src");
        assertThat(arguments.positional()).containsExactly("demo");
        assertThat(arguments.positive("--speed", 1)).isEqualTo(1.5);
        assertThat(arguments.positive("--records", 7)).isEqualTo(7);
        assertThat(arguments.flag("--keep")).isTrue();
        assertThat(arguments.flag("--submit-only")).isFalse();
        assertThat(arguments.optional("--prefix", "print")).isEqualTo("print");
        assertThat(arguments.address("--metrics")).isNull();
        assertThat(Arguments.parse("--metrics", "0.0.0.0:9465").address("--metrics"))
                .isEqualTo(new InetSocketAddress("0.0.0.0", 9465));
    }

    @Test
    void aBadArgumentIsAnErrorNamingIt() {
        assertThatThrownBy(() -> Arguments.parse("demo", "--root"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--root needs a value");
        assertThatThrownBy(() -> Arguments.parse("demo").required("--root"))
                .hasMessage("--root is required");
        assertThatThrownBy(() -> Arguments.parse("--root", "").required("--root"))
                .hasMessage("--root is required");
        for (String speed : new String[] {"fast", "0", "-1", "NaN", "Infinity"}) {
            assertThatThrownBy(() -> Arguments.parse("--speed", speed).positive("--speed", 1))
                    .hasMessage("--speed: a positive number, got '" + speed + "'");
        }
        assertThatThrownBy(() -> Arguments.parse("--keep", "yes").flag("--keep"))
                .hasMessage("--keep: true or false, got 'yes'");
        for (String address : new String[] {"9465", ":9465", "host:", "host:0", "host:65536"}) {
            assertThatThrownBy(() -> Arguments.parse("--metrics", address).address("--metrics"))
                    .hasMessage(
                            "--metrics: ADDRESS:PORT with a port of 1 to 65535, got '"
                                    + address
                                    + "'");
        }
    }
}
