package dev.sluice.client.segment;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.junit.Await;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The process's heartbeat thread is counted: it runs while a segment beats and ends with the last
 * one (docs/architecture.md, "Threads"), so a Flink job's segments leave no thread behind.
 */
class HeartbeatTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final long LIVENESS = TimeUnit.MILLISECONDS.toNanos(40); // a beat every 5 ms

    @Test
    void theSharedThreadEndsWithTheLastHeartbeatAndStartsAgainWithTheNext() throws Exception {
        assertThat(Heartbeat.running()).as("heartbeats left running by an earlier test").isZero();
        AtomicInteger firstBeats = new AtomicInteger();
        AtomicInteger secondBeats = new AtomicInteger();
        AtomicReference<Thread> beating = new AtomicReference<>();
        Heartbeat first = Heartbeat.start(firstBeats::incrementAndGet, LIVENESS);
        Heartbeat second =
                Heartbeat.start(
                        () -> {
                            secondBeats.incrementAndGet();
                            if (secondBeats.get() > 1) {
                                beating.set(Thread.currentThread());
                            }
                        },
                        LIVENESS);
        assertThat(Heartbeat.running()).isEqualTo(2);
        Await.until("the second beats on the shared thread", TIMEOUT, () -> beating.get() != null);
        Thread thread = beating.get();
        assertThat(thread.getName()).isEqualTo("sluice-segment-heartbeat");
        assertThat(thread.isDaemon()).isTrue();

        first.close();
        first.close(); // idempotent: counts once
        int before = secondBeats.get();
        Await.until("the second goes on beating", TIMEOUT, () -> secondBeats.get() > before + 2);
        int stopped = firstBeats.get();
        assertThat(thread.isAlive()).isTrue();

        second.close();
        assertThat(Heartbeat.running()).isZero();
        // close() returns once the thread ended.
        assertThat(thread.isAlive()).isFalse();
        assertThat(firstBeats.get()).isEqualTo(stopped);

        AtomicReference<Thread> again = new AtomicReference<>();
        try (Heartbeat third = Heartbeat.start(() -> again.set(Thread.currentThread()), LIVENESS)) {
            Await.until(
                    "a new thread beats",
                    TIMEOUT,
                    () -> again.get() != null && again.get() != Thread.currentThread());
            assertThat(again.get()).isNotSameAs(thread);
            assertThat(again.get().getName()).isEqualTo("sluice-segment-heartbeat");
        }
        assertThat(again.get().isAlive()).isFalse();
    }
}
