package dev.sluice.client.stream;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * What goes to the progress topic, tick by tick (the timer is left out: {@code tick()} is what it
 * calls). Kafka's own MockProducer records what was sent; the real topic is ProgressIT's.
 */
class ProgressReporterTest {
    private final MockProducer<byte[], byte[]> producer =
            new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
    private final ProgressReporter reporter =
            new ProgressReporter(producer, "sluice.progress", Duration.ofSeconds(1));

    private static DeliveryProgress at(long seq, boolean eos) {
        return new DeliveryProgress("job-1", "cyan", 0, 1, seq, (seq + 1) * 10, eos);
    }

    private List<DeliveryProgress> sent() {
        return producer.history().stream()
                .map(r -> DeliveryProgressCodec.decode(r.key(), r.value()))
                .toList();
    }

    @Test
    void sendsOnlyTheLatestProgressOfEachIntervalAndNothingWhenUnchanged() {
        reporter.update(at(-1, false));
        reporter.tick();
        reporter.update(at(0, false));
        reporter.update(at(1, false));
        reporter.update(at(2, false));
        reporter.tick();
        reporter.tick(); // nothing new

        assertThat(sent()).containsExactly(at(-1, false), at(2, false));
        ProducerRecord<byte[], byte[]> first = producer.history().get(0);
        assertThat(first.topic()).isEqualTo("sluice.progress");
        assertThat(new String(first.key())).isEqualTo("job-1/cyan");
        assertThat(reporter.sent()).isEqualTo(2);
    }

    @Test
    void unchangedProgressGoesOutAgainEachHeartbeatSoAWaitingReaderIsSeenAlive() {
        FakeClock clock = new FakeClock();
        ProgressReporter beating =
                new ProgressReporter(producer, "sluice.progress", Duration.ofSeconds(1), clock);
        beating.update(at(5, false));
        beating.tick();
        clock.advance(ProgressReporter.HEARTBEAT.toNanos() - 1);
        beating.tick();
        assertThat(sent()).containsExactly(at(5, false));
        clock.advance(1);
        beating.tick();
        assertThat(sent()).containsExactly(at(5, false), at(5, false));
    }

    @Test
    void theEndOfTheStreamGoesOutAtOnce() {
        reporter.update(at(3, false));
        reporter.update(at(4, true));

        assertThat(sent()).containsExactly(at(4, true));
        reporter.tick();
        assertThat(sent()).hasSize(1);
    }

    @Test
    void aRenewalGoesOutAtOnceFlaggedOnTheLatestProgressAndTheNextRecordClearsIt() {
        FakeClock clock = new FakeClock();
        ProgressReporter renewed =
                new ProgressReporter(producer, "sluice.progress", Duration.ofSeconds(1), clock);
        renewed.update(at(4, false));
        renewed.tick();

        // Unchanged progress within a heartbeat: a renewal sends it again, flagged, at once.
        renewed.resubscribed();
        assertThat(sent()).containsExactly(at(4, false), at(4, false).withResubscribed(true));

        renewed.update(at(5, false));
        renewed.tick();
        renewed.tick();
        assertThat(sent())
                .containsExactly(at(4, false), at(4, false).withResubscribed(true), at(5, false));
        assertThat(producer.history().get(1).value()[0])
                .as("a flagged record is version 2")
                .isEqualTo((byte) 2);
        assertThat(producer.history().get(2).value()[0])
                .as("the records after it are version 1 again")
                .isEqualTo((byte) 1);
    }

    @Test
    void aRenewalBeforeTheFirstProgressWaitsForIt() {
        reporter.resubscribed();
        assertThat(sent()).isEmpty();
        reporter.update(at(-1, false));
        reporter.tick();
        assertThat(sent()).containsExactly(at(-1, false).withResubscribed(true));
    }

    @Test
    void aRenewalWhoseRecordFailedIsToldAgain() {
        MockProducer<byte[], byte[]> manual =
                new MockProducer<>(
                        false, null, new ByteArraySerializer(), new ByteArraySerializer());
        ProgressReporter failing = new ProgressReporter(manual, "p", Duration.ofSeconds(1));
        failing.update(at(2, false));
        failing.resubscribed();
        manual.errorNext(new KafkaException("broker gone"));
        failing.update(at(3, false));
        failing.tick();
        manual.completeNext();

        List<DeliveryProgress> sent =
                manual.history().stream()
                        .map(r -> DeliveryProgressCodec.decode(r.key(), r.value()))
                        .toList();
        assertThat(sent)
                .containsExactly(
                        at(2, false).withResubscribed(true), at(3, false).withResubscribed(true));
        assertThat(failing.failures()).isEqualTo(1);
    }

    @Test
    void aRenewalIsSentByTheTimerThreadWithoutWaitingForTheInterval() {
        reporter.update(at(0, false));
        reporter.start(Duration.ofHours(1), "job-1/cyan");
        awaitSent(1);

        reporter.resubscribed();
        awaitSent(2);
        assertThat(sent()).containsExactly(at(0, false), at(0, false).withResubscribed(true));
        reporter.close();
    }

    /** Polls the producer's history until it holds {@code count} records, for up to 10 s. */
    private void awaitSent(int count) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (producer.history().size() < count && System.nanoTime() < deadline) {
            LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
        }
        assertThat(producer.history()).hasSize(count);
    }

    @Test
    void closeSendsWhatIsLeftThenClosesTheProducer() {
        reporter.update(at(0, false));
        reporter.tick();
        reporter.update(at(5, false));

        reporter.close();

        assertThat(sent()).containsExactly(at(0, false), at(5, false));
        assertThat(producer.closed()).isTrue();
        reporter.update(at(6, false));
        reporter.tick();
        assertThat(sent()).hasSize(2);
    }

    @Test
    void closeEndsTheTimerThreadBeforeItReturns() {
        reporter.update(at(0, false));
        reporter.start(Duration.ofMillis(5), "job-1/cyan");
        Thread timer =
                Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().equals("sluice-progress-job-1/cyan"))
                        .findFirst()
                        .orElseThrow();
        assertThat(timer.isDaemon()).isTrue();

        reporter.close();

        // The thread ends with its reader (docs/architecture.md, "Threads").
        assertThat(timer.isAlive()).isFalse();
        assertThat(sent()).contains(at(0, false));
    }

    @Test
    void failuresAreCountedAndTheNextProgressStillGoesOut() {
        MockProducer<byte[], byte[]> manual =
                new MockProducer<>(
                        false, null, new ByteArraySerializer(), new ByteArraySerializer());
        ProgressReporter failing = new ProgressReporter(manual, "p", Duration.ofSeconds(1));
        failing.update(at(0, false));
        failing.tick();
        manual.errorNext(new KafkaException("broker gone"));
        failing.update(at(1, false));
        failing.tick();
        manual.completeNext();

        assertThat(failing.failures()).isEqualTo(1);
        assertThat(failing.sent()).isEqualTo(1);
        assertThat(manual.history()).hasSize(2);
    }
}
