package dev.sluice.embedded.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
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
    void endsWithWhatTheConditionThrows() {
        assertThatThrownBy(
                        () ->
                                Await.until(
                                        "the file is read",
                                        Duration.ofSeconds(10),
                                        () -> {
                                            throw new IOException("disk gone");
                                        }))
                .isInstanceOf(IOException.class)
                .hasMessage("disk gone");
    }

    @Test
    void failsNamingWhatWasAwaited() {
        assertThatThrownBy(
                        () -> Await.until("the moon is blue", Duration.ofMillis(20), () -> false))
                .isInstanceOf(AssertionError.class)
                .hasMessage("timed out after PT0.02S waiting until the moon is blue");
    }

    @Test
    void describesWhatWasAwaitedAsItStoodWhenTheWaitFailed() {
        AtomicInteger asked = new AtomicInteger();
        assertThatThrownBy(
                        () ->
                                Await.until(
                                        () -> "never; asked " + asked.get() + " times",
                                        Duration.ZERO,
                                        () -> asked.incrementAndGet() < 0))
                .isInstanceOf(AssertionError.class)
                .hasMessage("timed out after PT0S waiting until never; asked 1 times");
    }
}
