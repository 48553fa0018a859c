package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The Java idle strategy, step for step as native/test/idle_strategy_test.cc tests its twin. */
class IdleStrategyTest {
    private static final Path NATIVE_TWIN =
            Path.of("..", "native", "include", "sluice", "idle_strategy.h");

    @Test
    void spinsAndYieldsABoundedNumberOfTimesThenParks() {
        IdleStrategy idle = new IdleStrategy(5, 3);
        int spun = 0;
        int yielded = 0;
        int parks = 0;
        for (int i = 0; i < 1000; i++) {
            switch (idle.idle()) {
                case SPUN -> spun++;
                case YIELDED -> yielded++;
                case PARK -> parks++;
            }
        }
        assertThat(spun).isEqualTo(5);
        assertThat(yielded).isEqualTo(3);
        assertThat(parks).isEqualTo(992);
    }

    @Test
    void backoffDoublesUpToItsCap() {
        IdleStrategy idle = new IdleStrategy(0, 0);
        assertThat(idle.nextBackoffNanos()).isEqualTo(TimeUnit.MICROSECONDS.toNanos(10));
        assertThat(idle.nextBackoffNanos()).isEqualTo(TimeUnit.MICROSECONDS.toNanos(20));
        long last = 0;
        for (int i = 0; i < 50; i++) {
            last = idle.nextBackoffNanos();
        }
        assertThat(last).isEqualTo(TimeUnit.MILLISECONDS.toNanos(1));
    }

    @Test
    void resetStartsOverFromSpinning() {
        IdleStrategy idle = new IdleStrategy(1, 1);
        idle.idle();
        idle.idle();
        assertThat(idle.idle()).isEqualTo(IdleStrategy.Step.PARK);
        idle.nextBackoffNanos();
        idle.nextBackoffNanos();
        idle.reset();
        assertThat(idle.idle()).isEqualTo(IdleStrategy.Step.SPUN);
        assertThat(idle.nextBackoffNanos()).isEqualTo(TimeUnit.MICROSECONDS.toNanos(10));
    }

    /** Both sides idle alike (docs/architecture.md, "Segment"): the defaults are the C++ ones. */
    @Test
    void defaultsAreTheNativeTwins() throws Exception {
        String header = Files.readString(NATIVE_TWIN);
        assertThat((long) IdleStrategy.SPINS).isEqualTo(option(header, "spins"));
        assertThat((long) IdleStrategy.YIELDS).isEqualTo(option(header, "yields"));
        assertThat(IdleStrategy.MIN_BACKOFF_NANOS).isEqualTo(option(header, "min_backoff"));
        assertThat(IdleStrategy.MAX_BACKOFF_NANOS).isEqualTo(option(header, "max_backoff"));
    }

    /**
     * The value an option of idle_strategy.h's Options is initialised with: a count, or a duration
     * ({@code std::chrono::microseconds(10)}) in nanoseconds.
     */
    private static long option(String header, String name) {
        Matcher m =
                Pattern.compile("\\b" + name + " = (?:std::chrono::(\\w+)\\()?(\\d+)")
                        .matcher(header);
        assertThat(m.find()).as("%s in %s", name, NATIVE_TWIN).isTrue();
        long value = Long.parseLong(m.group(2));
        if (m.group(1) == null) {
            return value;
        }
        return TimeUnit.valueOf(m.group(1).toUpperCase(Locale.ROOT)).toNanos(value);
    }
}
