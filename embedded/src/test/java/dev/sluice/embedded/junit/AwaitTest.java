package dev.sluice.embedded.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {

    @Test
    void returnsOnceTheConditionHolds() {
        AtomicInteger asked = new AtomicInteger();
        Await.until(
                "asked three times", Duration.ofSeconds(10), () -> asked.incrementAndGet() == 3);
        assertThat(asked).hasValue(3);
    }

    @Test
    void returnsTheFirstValueThatIsNotNull() {
        AtomicInteger asked = new AtomicInteger();
        String value =
                Await.untilNonNull(
                        "a value",
                        Duration.ofSeconds(10),
                        () -> asked.incrementAndGet() < 4 ? null : "value " + asked.get());
        assertThat(value).isEqualTo("value 4");
    }

    @Test
    void failsNamingWhatWasAwaited() {
        assertThatThrownBy(
                        () -> Await.until("the moon is blue", Duration.ofMillis(20), () -> false))
                .isInstanceOf(AssertionError.class)
                .hasMessage("timed out after PT0.02S waiting until the moon is blue");
    }
}
