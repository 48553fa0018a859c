package dev.sluice.client.progress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.time.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * What goes to the progress topic, tick by tick on a fake clock (the timer is left out: {@code
 * tick()} is what it calls), then with the timer's thread. Kafka's own MockProducer records what
 * was sent; the real topic is ProgressIT's.
 */
class ProgressReporterTest {
    private static final Duration INTERVAL = Duration.ofMillis(100);
    private static final long SPACING = ProgressReporter.TASK_SPACING.toNanos();
    private static final long CHUNKS_PER_TASK = 4;
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(1);

    private final MockProducer<byte[], byte[]> producer =
            new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
    private final FakeClock clock = new FakeClock();
    private final ProgressReporter reporter = reporter(producer);

    /** A reporter on the real clock, for the tests of its timer thread. */
    private ProgressReporter timed(Duration interval) {
        return new ProgressReporter(
                producer, true, "sluice-progress", interval, CHUNKS_PER_TASK, CLOSE_TIMEOUT);
    }

    private ProgressReporter reporter(MockProducer<byte[], byte[]> to) {
        return new ProgressReporter(
                to, true, "sluice-progress", INTERVAL, CHUNKS_PER_TASK, CLOSE_TIMEOUT, clock);
    }

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
        assertThat(reporter.tick()).isZero();
        clock.advance(INTERVAL.toNanos());
        reporter.update(at(0, false));
        reporter.update(at(1, false));
        reporter.update(at(2, false));
        reporter.tick();
        clock.advance(INTERVAL.toNanos());
        assertThat(reporter.tick()).as("nothing new").isZero();

        assertThat(sent()).containsExactly(at(-1, false), at(2, false));
        ProducerRecord<byte[], byte[]> first = producer.history().get(0);
        assertThat(first.topic()).isEqualTo("sluice-progress");
        assertThat(new String(first.key())).isEqualTo("job-1/cyan");
        assertThat(reporter.sent()).isEqualTo(2);
    }

    @Test
    void aChangeWithinTheIntervalWaitsForItsEndAndSaysHowLong() {
        reporter.update(at(0, false));
        reporter.tick();
        clock.advance(30_000_000);
        reporter.update(at(1, false));

        assertThat(reporter.tick()).isEqualTo(INTERVAL.toNanos() - 30_000_000);
        clock.advance(INTERVAL.toNanos() - 30_000_001);
        assertThat(reporter.tick()).isEqualTo(1);
        assertThat(sent()).containsExactly(at(0, false));
        clock.advance(1);
        assertThat(reporter.tick()).isZero();
        assertThat(sent()).containsExactly(at(0, false), at(1, false));
    }

    @Test
    void aDeliveredTaskGoesOutAfterTheTaskSpacingNotTheInterval() {
        reporter.update(at(-1, false));
        reporter.tick();
        // seqs 0 to 2: the first task (4 chunks) is not done yet.
        reporter.update(at(2, false));
        clock.advance(SPACING);
        assertThat(reporter.tick()).isEqualTo(INTERVAL.toNanos() - SPACING);

        // seq 3 ends it: due once the spacing since the last record is over.
        reporter.update(at(3, false));
        assertThat(reporter.tick()).isZero();
        reporter.update(at(4, false));
        reporter.update(at(7, false));
        clock.advance(SPACING - 1);
        assertThat(reporter.tick()).as("the second task, within the spacing").isEqualTo(1);
        clock.advance(1);
        reporter.tick();
        assertThat(sent()).containsExactly(at(-1, false), at(3, false), at(7, false));
    }

    @Test
    void withoutTaskBoundariesOnlyTheIntervalApplies() {
        ProgressReporter unknown =
                new ProgressReporter(
                        producer, true, "sluice-progress", INTERVAL, 0, CLOSE_TIMEOUT, clock);
        unknown.update(at(-1, false));
        unknown.tick();
        unknown.update(at(3, false));
        clock.advance(SPACING);
        assertThat(unknown.tick()).isEqualTo(INTERVAL.toNanos() - SPACING);
        assertThat(sent()).containsExactly(at(-1, false));
    }

    @Test
    void unchangedProgressGoesOutAgainEachHeartbeatSoAWaitingReaderIsSeenAlive() {
        reporter.update(at(5, false));
        reporter.tick();
        clock.advance(ProgressReporter.HEARTBEAT.toNanos() - 1);
        reporter.tick();
        assertThat(sent()).containsExactly(at(5, false));
        clock.advance(1);
        reporter.tick();
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
        reporter.update(at(4, false));
        reporter.tick();

        // Unchanged progress within the interval: a renewal sends it again, flagged, at once.
        reporter.resubscribed();
        assertThat(sent()).containsExactly(at(4, false), at(4, false).withResubscribed(true));

        clock.advance(INTERVAL.toNanos());
        reporter.update(at(5, false));
        reporter.tick();
        reporter.tick();
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
        ProgressReporter failing = reporter(manual);
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
    void theTimerThreadSendsTheFirstRecordAtOnceAndADeliveredTaskWithoutCallsFromTheReader() {
        ProgressReporter timed = timed(INTERVAL);
        timed.update(at(0, false));
        timed.start("job-1/cyan");
        awaitSent(1);

        // The first task's last chunk: sent by the timer without a call from the reader.
        timed.update(at(3, false));
        awaitSent(2);
        assertThat(sent()).containsExactly(at(0, false), at(3, false));
        timed.close();
    }

    @Test
    void aRenewalIsSentByTheTimerThreadWithoutWaitingForTheInterval() {
        ProgressReporter timed = timed(Duration.ofHours(1));
        timed.update(at(0, false));
        timed.start("job-1/cyan");
        awaitSent(1);

        timed.resubscribed();
        awaitSent(2);
        assertThat(sent()).containsExactly(at(0, false), at(0, false).withResubscribed(true));
        timed.close();
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

        // Within the interval: close does not wait for it.
        reporter.close();

        assertThat(sent()).containsExactly(at(0, false), at(5, false));
        assertThat(producer.closed()).isTrue();
        reporter.update(at(6, false));
        clock.advance(INTERVAL.toNanos());
        reporter.tick();
        assertThat(sent()).hasSize(2);
    }

    @Test
    void closeGivesASentEndOfTheStreamLongerToBeAcknowledged() {
        List<Duration> closeTimeouts = new ArrayList<>();
        ProgressReporter ending = reporter(closingWithin(closeTimeouts));
        ending.update(at(7, true));
        ending.close();
        ProgressReporter midway = reporter(closingWithin(closeTimeouts));
        midway.update(at(5, false));
        midway.close();

        // The scheduler takes a reader whose end it never heard for gone: the end gets a leader
        // election's time; the rest, the close timeout.
        assertThat(closeTimeouts).containsExactly(ProgressReporter.END_TIMEOUT, CLOSE_TIMEOUT);
    }

    @Test
    void aSharedProducerIsLeftOpenAndCloseWaitsForTheReportersLastRecord() {
        MockProducer<byte[], byte[]> shared =
                new MockProducer<>(
                        false, null, new ByteArraySerializer(), new ByteArraySerializer());
        ProgressReporter sharing =
                new ProgressReporter(
                        shared,
                        false,
                        "sluice-progress",
                        INTERVAL,
                        CHUNKS_PER_TASK,
                        Duration.ofSeconds(10),
                        clock);
        sharing.update(at(7, true));
        AtomicBoolean acknowledging = new AtomicBoolean();
        Thread acknowledger =
                new Thread(
                        () -> {
                            while (shared.history().isEmpty()) {
                                LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
                            }
                            acknowledging.set(true);
                            shared.completeNext();
                        });

        acknowledger.start();
        sharing.close();

        // Close returned once the end was acknowledged, not before.
        assertThat(acknowledging).isTrue();
        assertThat(shared.closed()).isFalse();
        assertThat(shared.history()).hasSize(1);
    }

    /** A producer that acknowledges every send and records the timeout it is closed with. */
    private static MockProducer<byte[], byte[]> closingWithin(List<Duration> closeTimeouts) {
        return new MockProducer<>(
                true, null, new ByteArraySerializer(), new ByteArraySerializer()) {
            @Override
            public void close(Duration timeout) {
                closeTimeouts.add(timeout);
                super.close(timeout);
            }
        };
    }

    @Test
    void closeEndsTheTimerThreadBeforeItReturns() {
        ProgressReporter timed = timed(INTERVAL);
        timed.update(at(0, false));
        timed.start("job-1/cyan");
        Thread timer =
                Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().equals("sluice-progress-job-1/cyan"))
                        .findFirst()
                        .orElseThrow();
        assertThat(timer.isDaemon()).isTrue();

        timed.close();

        // The thread ends with its reader (docs/architecture.md, "Threads").
        assertThat(timer.isAlive()).isFalse();
        assertThat(sent()).contains(at(0, false));
    }

    @Test
    void failuresAreCountedAndTheNextProgressStillGoesOut() {
        MockProducer<byte[], byte[]> manual =
                new MockProducer<>(
                        false, null, new ByteArraySerializer(), new ByteArraySerializer());
        ProgressReporter failing = reporter(manual);
        failing.update(at(0, false));
        failing.tick();
        manual.errorNext(new KafkaException("broker gone"));
        clock.advance(INTERVAL.toNanos());
        failing.update(at(1, false));
        failing.tick();
        manual.completeNext();

        assertThat(failing.failures()).isEqualTo(1);
        assertThat(failing.sent()).isEqualTo(1);
        assertThat(manual.history()).hasSize(2);
    }
}
