package dev.sluice.client.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.protocol.StreamGap;
import dev.sluice.client.time.FakeClock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Pacing, starvation, sharing and progress against a scripted stream on a fake clock. */
class ChunkDeliveryTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long FOREVER = TimeUnit.SECONDS.toNanos(3600);

    private final FakeClock clock = new FakeClock();
    private final long t0 = clock.nanoTime();
    private final List<DeliveryProgress> progress = new ArrayList<>();

    private ChunkDelivery delivery(ScriptedSource source, long rate, int index, int count) {
        return delivery(source, rate, 0, index, count);
    }

    private ChunkDelivery delivery(
            ScriptedSource source, long rate, long startDelay, int index, int count) {
        return new ChunkDelivery(
                "job-1", "cyan", source, clock, rate, startDelay, 0, index, count, progress::add);
    }

    /** Acquires and releases every chunk, recording when each was handed out (ms after t0). */
    private List<Long> readAll(ChunkDelivery delivery, List<Long> seqs) throws IOException {
        List<Long> times = new ArrayList<>();
        while (!delivery.isEndOfStream()) {
            StreamChunk chunk = delivery.acquire(FOREVER);
            if (chunk == null) {
                continue;
            }
            times.add((clock.nanoTime() - t0) / MS);
            seqs.add(chunk.seq());
            chunk.release();
        }
        return times;
    }

    @Test
    void aPacedReaderHandsChunksOutAtTheRateAndParksBetweenThem() throws IOException {
        // 10 chunks of 1000 bytes, all there from the start, at 10 000 bytes/s: one per 100 ms.
        ScriptedSource source = new ScriptedSource(clock).chunks(10, 1000, t0);
        ChunkDelivery delivery = delivery(source, 10_000, 0, 1);
        List<Long> seqs = new ArrayList<>();

        List<Long> times = readAll(delivery, seqs);

        assertThat(times).containsExactly(0L, 100L, 200L, 300L, 400L, 500L, 600L, 700L, 800L, 900L);
        assertThat(seqs).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        StreamReaderStats stats = delivery.stats(0, 0);
        assertThat(stats.starvationEvents()).isZero();
        assertThat(stats.starvedNanos()).isZero();
        assertThat(stats.achievedRateBytesPerSecond()).isCloseTo(10_000.0, within(1e-6));
        assertThat(stats.targetRateBytesPerSecond()).hasValue(10_000);
        assertThat(stats.chunks()).isEqualTo(10);
        assertThat(stats.bytes()).isEqualTo(10_000);
        assertThat(stats.endOfStream()).isTrue();
        // One park per interval: waiting is parking, not spinning on the clock.
        assertThat(clock.parks).isEqualTo(9);
        // Every chunk on time: the fake clock's parks wake up exactly when asked.
        assertThat(stats.latenessMaxNanos()).isZero();
        assertThat(stats.startDelayNanos()).isZero();
        // Without a start delay, the first chunk is handed out as it comes, with the rest in hand.
        assertThat(stats.startBufferBytes()).isEqualTo(10_000);
    }

    @Test
    void anOnTimeChunkIsAsLateAsThePark() throws IOException {
        // Every park wakes up 0.3 ms late; the absolute schedule keeps it from adding up.
        clock.overshootNanos = 300_000;
        ScriptedSource source = new ScriptedSource(clock).chunks(10, 1000, t0);
        ChunkDelivery delivery = delivery(source, 10_000, 0, 1);

        readAll(delivery, new ArrayList<>());

        assertThat(clock.nanoTime() - t0).isEqualTo(900 * MS + 300_000);
        StreamReaderStats stats = delivery.stats(0, 0);
        // The first chunk is not parked for: on time; the nine others 0.3 ms late.
        assertThat(stats.latenessMaxNanos()).isEqualTo(300_000);
        assertThat(stats.latenessP50Nanos()).isCloseTo(300_000L, within(300_000L / 64));
        assertThat(stats.latenessP99Nanos()).isCloseTo(300_000L, within(300_000L / 64));
        assertThat(stats.starvationEvents()).isZero();
    }

    @Test
    void theLatenessPercentilesAreThoseOfTheChunksHandoutsPastTheirDueTimes() throws IOException {
        // All 200 chunks are there; the application comes back for chunk i a scripted time after
        // it was due (under the 100 ms interval, so it is never starved, only late).
        int n = 200;
        ScriptedSource source = new ScriptedSource(clock).chunks(n, 1000, t0);
        ChunkDelivery delivery = delivery(source, 10_000, 0, 1);
        long[] late = new long[n];
        for (int i = 0; i < n; i++) {
            late[i] = i == 0 ? 0 : (i * 7919L % 97) * 731_000;
            clock.advanceTo(t0 + i * 100 * MS + late[i]);
            StreamChunk chunk = delivery.acquire(FOREVER);
            assertThat(clock.nanoTime() - t0).isEqualTo(i * 100 * MS + late[i]);
            chunk.release();
        }

        long[] sorted = late.clone();
        Arrays.sort(sorted);
        long p50 = sorted[n / 2 - 1];
        long p99 = sorted[(int) Math.ceil(0.99 * n) - 1];
        StreamReaderStats stats = delivery.stats(0, 0);
        assertThat(stats.latenessP50Nanos()).isCloseTo(p50, within(p50 / 64));
        assertThat(stats.latenessP99Nanos()).isCloseTo(p99, within(p99 / 64));
        assertThat(stats.latenessMaxNanos()).isEqualTo(sorted[n - 1]);
        assertThat(stats.starvationEvents()).isZero();
    }

    @Test
    void aChunkLateForItsDueTimeIsOneStarvationAndTheScheduleGoesOnFromItsArrival()
            throws IOException {
        ScriptedSource source = new ScriptedSource(clock);
        for (int seq = 0; seq < 10; seq++) {
            // Chunk 5 is due at 500 ms but comes at 2000 ms; the others are there from the start.
            source.add(seq, seq == 9, 1000, seq == 5 ? t0 + 2000 * MS : t0);
        }
        ChunkDelivery delivery = delivery(source, 10_000, 0, 1);

        List<Long> times = readAll(delivery, new ArrayList<>());

        // No rush after the stall: 6 comes 100 ms after 5, as the rate says.
        assertThat(times)
                .containsExactly(0L, 100L, 200L, 300L, 400L, 2000L, 2100L, 2200L, 2300L, 2400L);
        StreamReaderStats stats = delivery.stats(0, 0);
        assertThat(stats.starvationEvents()).isEqualTo(1);
        assertThat(stats.starvedNanos()).isEqualTo(1500 * MS);
        // A starved chunk is as late as it came; the nine others on time.
        assertThat(stats.latenessMaxNanos()).isEqualTo(1500 * MS);
        assertThat(stats.latenessP99Nanos()).isCloseTo(1500 * MS, within(1500 * MS / 64));
        assertThat(stats.latenessP50Nanos()).isZero();
    }

    @Test
    void anApplicationsOwnPauseIsLatenessNotStarvationTime() throws IOException {
        ScriptedSource source = new ScriptedSource(clock);
        // Chunk 1 is due at 100 ms and comes at 2500 ms; the application pauses until 2000 ms.
        source.add(0, false, 1000, t0);
        source.add(1, true, 1000, t0 + 2500 * MS);
        ChunkDelivery delivery = delivery(source, 10_000, 0, 1);
        delivery.acquire(FOREVER).release();

        clock.advanceTo(t0 + 2000 * MS);
        StreamChunk late = delivery.acquire(FOREVER);

        assertThat((clock.nanoTime() - t0) / MS).isEqualTo(2500);
        late.release();
        StreamReaderStats stats = delivery.stats(0, 0);
        // Missing when asked for: one event, and the 500 ms the reader waited, not the 2400 ms
        // since it was due.
        assertThat(stats.starvationEvents()).isEqualTo(1);
        assertThat(stats.starvedNanos()).isEqualTo(500 * MS);
        assertThat(stats.latenessMaxNanos()).isEqualTo(2400 * MS);
    }

    @Test
    void aStartDelayHoldsTheFirstChunkBackSoThatALateTaskIsNotAStarvation() throws IOException {
        // Chunks 0-4 come at once, 5-9 (the next task) at 700 ms. Without a delay chunk 5 is due
        // at 500 ms and starves (the test above); 300 ms after the first came, it is due at 800.
        ScriptedSource source = new ScriptedSource(clock);
        for (int seq = 0; seq < 10; seq++) {
            source.add(seq, seq == 9, 1000, seq < 5 ? t0 : t0 + 700 * MS);
        }
        ChunkDelivery delivery = delivery(source, 10_000, 300 * MS, 0, 1);
        List<Long> seqs = new ArrayList<>();

        List<Long> times = readAll(delivery, seqs);

        assertThat(times)
                .containsExactly(300L, 400L, 500L, 600L, 700L, 800L, 900L, 1000L, 1100L, 1200L);
        assertThat(seqs).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        StreamReaderStats stats = delivery.stats(0, 0);
        assertThat(stats.starvationEvents()).isZero();
        assertThat(stats.latenessMaxNanos()).isZero();
        assertThat(stats.startDelayNanos()).isEqualTo(300 * MS);
        // The first task was in hand when the first chunk went out, the second not yet.
        assertThat(stats.startBufferBytes()).isEqualTo(5000);
    }

    @Test
    void theFirstChunkIsDueAtTheEndOfTheStartDelay() throws IOException {
        // Its park wakes up 2 ms late; the first chunk came at 50 ms, chunk 1 at 1000 ms.
        clock.overshootNanos = 2 * MS;
        ScriptedSource source = new ScriptedSource(clock);
        source.add(0, false, 1000, t0 + 50 * MS).add(1, true, 1000, t0 + 1000 * MS);
        ChunkDelivery delivery = delivery(source, 10_000, 300 * MS, 0, 1);

        List<Long> times = readAll(delivery, new ArrayList<>());

        assertThat(times).containsExactly(352L, 1000L);
        StreamReaderStats stats = delivery.stats(0, 0);
        // 0 was due at 350 ms; 1 at 452 ms and came at 1000, starved.
        assertThat(stats.latenessMaxNanos()).isEqualTo(548 * MS);
        assertThat(stats.latenessP50Nanos()).isCloseTo(2 * MS, within(2 * MS / 64));
        assertThat(stats.startBufferBytes()).isEqualTo(1000);
    }

    @Test
    void aSharedReadersStartBufferCountsItsOwnChunksOnly() throws IOException {
        ScriptedSource source = new ScriptedSource(clock);
        for (int seq = 0; seq < 10; seq++) {
            source.add(seq, seq == 9, 100 + seq, t0);
        }
        ChunkDelivery delivery = delivery(source, 10_000, 100 * MS, 1, 2);

        delivery.acquire(FOREVER).release();

        // Its chunks 1, 3, 5, 7 and 9; the other reader's 2 to 8 are there too but not counted.
        assertThat(delivery.stats(0, 0).startBufferBytes()).isEqualTo(101 + 103 + 105 + 107 + 109);
    }

    @Test
    void anUnpacedReaderIgnoresTheStartDelay() throws IOException {
        ScriptedSource source = new ScriptedSource(clock).chunks(3, 1000, t0);
        ChunkDelivery delivery = delivery(source, 0, 300 * MS, 0, 1);
        List<Long> times = readAll(delivery, new ArrayList<>());
        assertThat(times).containsExactly(0L, 0L, 0L);
        assertThat(delivery.stats(0, 0).startDelayNanos()).isZero();
        assertThat(delivery.stats(0, 0).bufferedBytes()).isZero();
    }

    @Test
    void aPacedReaderTellsTheBytesInHandAheadOfEachHandout() throws IOException {
        // Three chunks in hand at once, the last one at 1 s: at 10 kB/s, one due every 100 ms.
        ScriptedSource source = new ScriptedSource(clock);
        source.add(0, false, 1000, t0).add(1, false, 1000, t0).add(2, false, 1000, t0);
        source.add(3, true, 1000, t0 + 1000 * MS);
        ChunkDelivery delivery = delivery(source, 10_000, 0, 1);

        List<Long> buffered = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            delivery.acquire(FOREVER).release();
            buffered.add(delivery.stats(0, 0).bufferedBytes());
        }

        // 2000 B ahead is 200 ms of the stream; after chunk 2 nothing is, and chunk 3 starves.
        assertThat(buffered).containsExactly(2000L, 1000L, 0L, 0L);
        assertThat(delivery.stats(0, 0).starvationEvents()).isEqualTo(1);
    }

    @Test
    void everyLateChunkCountsOnceEvenWhenTheApplicationAsksSeveralTimes() throws IOException {
        ScriptedSource source = new ScriptedSource(clock);
        source.add(0, false, 1000, t0).add(1, false, 1000, t0 + 1000 * MS);
        source.add(2, true, 1000, t0 + 5000 * MS);
        ChunkDelivery delivery = delivery(source, 10_000, 0, 1);
        delivery.acquire(FOREVER).release();

        // Chunk 1 is due at 100 ms; asked with short timeouts, it comes at 1000 ms.
        int nulls = 0;
        StreamChunk chunk;
        while ((chunk = delivery.acquire(200 * MS)) == null) {
            nulls++;
        }
        assertThat(chunk.seq()).isEqualTo(1);
        assertThat(nulls).isGreaterThanOrEqualTo(4);
        chunk.release();
        assertThat(delivery.acquire(FOREVER).seq()).isEqualTo(2);

        StreamReaderStats stats = delivery.stats(0, 0);
        assertThat(stats.starvationEvents()).isEqualTo(2);
        // 1 was due at 100 and came at 1000; 2 was due at 1100 and came at 5000.
        assertThat(stats.starvedNanos()).isEqualTo((900 + 3900) * MS);
    }

    @Test
    void anApplicationThatFallsBehindIsNotStarvedAndGetsWhatIsDueAtOnce() throws IOException {
        ScriptedSource source = new ScriptedSource(clock).chunks(10, 1000, t0);
        ChunkDelivery delivery = delivery(source, 10_000, 0, 1);
        List<Long> times = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            StreamChunk chunk = delivery.acquire(FOREVER);
            times.add((clock.nanoTime() - t0) / MS);
            if (i == 2) {
                clock.advance(1000 * MS); // the application is busy for a second
            }
            chunk.release();
        }

        // 3 to 9 were due by 1200 ms: handed out at once, back on the schedule.
        assertThat(times)
                .containsExactly(0L, 100L, 200L, 1200L, 1200L, 1200L, 1200L, 1200L, 1200L, 1200L);
        assertThat(delivery.stats(0, 0).starvationEvents()).isZero();
    }

    @Test
    void aWaitShorterThanTheDueTimeReturnsNullWithoutStarvation() throws IOException {
        ScriptedSource source = new ScriptedSource(clock).chunks(2, 1000, t0);
        ChunkDelivery delivery = delivery(source, 10_000, 0, 1);
        delivery.acquire(FOREVER).release();

        assertThat(delivery.acquire(50 * MS)).isNull();
        assertThat(clock.nanoTime() - t0).isEqualTo(50 * MS);
        assertThat(delivery.acquire(0)).isNull();

        StreamChunk second = delivery.acquire(FOREVER);
        assertThat(second.seq()).isEqualTo(1);
        assertThat(clock.nanoTime() - t0).isEqualTo(100 * MS);
        assertThat(delivery.stats(0, 0).starvationEvents()).isZero();
    }

    @Test
    void unpacedChunksAreHandedOutAsTheyComeWithoutParking() throws IOException {
        ScriptedSource source = new ScriptedSource(clock);
        source.add(0, false, 1000, t0).add(1, false, 1000, t0 + 10 * MS);
        source.add(2, false, 1000, t0 + 10 * MS).add(3, true, 1000, t0 + 500 * MS);
        ChunkDelivery delivery = delivery(source, 0, 0, 1);

        List<Long> times = readAll(delivery, new ArrayList<>());

        assertThat(times).containsExactly(0L, 10L, 10L, 500L);
        assertThat(clock.parks).isZero();
        StreamReaderStats stats = delivery.stats(0, 0);
        assertThat(stats.starvationEvents()).isZero();
        assertThat(stats.targetRateBytesPerSecond()).isEmpty();
        // 3000 bytes before the latest chunk over 500 ms.
        assertThat(stats.achievedRateBytesPerSecond()).isCloseTo(6000.0, within(1e-6));
        // Nothing is due unpaced, so nothing is late, and there is no start buffer.
        assertThat(stats.latenessMaxNanos()).isZero();
        assertThat(stats.startBufferBytes()).isZero();
    }

    @Test
    void sharedReadersGetExactlyTheirResidueClassAndEachSeesTheEnd() throws IOException {
        int chunks = 10;
        int readers = 3;
        List<Long> all = new ArrayList<>();
        long bytes = 0;
        for (int i = 0; i < readers; i++) {
            progress.clear();
            ScriptedSource source = new ScriptedSource(clock).chunks(chunks, 100 + i, t0);
            ChunkDelivery delivery = delivery(source, 0, i, readers);
            List<Long> seqs = new ArrayList<>();
            readAll(delivery, seqs);

            final int index = i;
            assertThat(seqs).allMatch(seq -> seq % readers == index);
            assertThat(seqs).hasSize(i == 0 ? 4 : 3);
            assertThat(delivery.isEndOfStream()).isTrue();
            assertThat(delivery.acquire(FOREVER)).isNull();
            // Every chunk, its own or passed by, was given back; the subscription too.
            assertThat(source.done).hasSize(chunks);
            assertThat(source.closed).isTrue();
            DeliveryProgress last = progress.get(progress.size() - 1);
            assertThat(last.endOfStream()).isTrue();
            assertThat(last.deliveredSeq()).isEqualTo(chunks - 1);
            assertThat(last.readerIndex()).isEqualTo(i);
            assertThat(last.readerCount()).isEqualTo(readers);
            assertThat(last.deliveredBytes()).isEqualTo(seqs.size() * (100L + i));
            all.addAll(seqs);
            bytes += last.deliveredBytes();
        }
        assertThat(all).containsExactlyInAnyOrder(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        assertThat(bytes).isEqualTo(4 * 100 + 3 * 101 + 3 * 102);
    }

    @Test
    void progressIsTheContiguousFrontierOfWhatTheReaderIsDoneWith() throws IOException {
        ScriptedSource source = new ScriptedSource(clock).chunks(4, 10, t0);
        ChunkDelivery delivery = delivery(source, 0, 1, 2);
        assertThat(progress).containsExactly(progress("job-1", 1, 2, -1, 0, false));

        StreamChunk one = delivery.acquire(FOREVER);
        assertThat(one.seq()).isEqualTo(1);
        // Chunk 0 was passed by; 1 is held, so not delivered yet.
        assertThat(delivery.progress().deliveredSeq()).isEqualTo(0);
        one.release();
        assertThat(delivery.progress().deliveredSeq()).isEqualTo(1);
        assertThat(delivery.progress().deliveredBytes()).isEqualTo(10);
        StreamChunk three = delivery.acquire(FOREVER);
        assertThat(delivery.progress().deliveredSeq()).isEqualTo(2);
        three.release();

        assertThat(progress)
                .containsExactly(
                        progress("job-1", 1, 2, -1, 0, false),
                        progress("job-1", 1, 2, 0, 0, false),
                        progress("job-1", 1, 2, 1, 10, false),
                        progress("job-1", 1, 2, 2, 10, false),
                        progress("job-1", 1, 2, 3, 20, true));
    }

    private static DeliveryProgress progress(
            String job, int index, int count, long seq, long bytes, boolean eos) {
        return new DeliveryProgress(job, "cyan", index, count, seq, bytes, eos);
    }

    @Test
    void aHoleInTheStreamIsAnError() throws IOException {
        ScriptedSource source = new ScriptedSource(clock);
        source.add(0, false, 10, t0).add(2, true, 10, t0);
        ChunkDelivery delivery = delivery(source, 0, 0, 1);
        delivery.acquire(FOREVER).release();

        assertThatThrownBy(() -> delivery.acquire(FOREVER))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("job-1/cyan: chunk 2 came where 1 was due");
    }

    @Test
    void aBegunStreamSilentPastTheTimeoutIsToldOnceAndTheReaderWaitsOn() throws IOException {
        // Unpaced, a 1 s silence timeout: chunks 0 and 1 come at once, then nothing until 5 s.
        ScriptedSource source = new ScriptedSource(clock);
        source.add(0, false, 1000, t0).add(1, false, 1000, t0);
        source.add(2, true, 1000, t0 + 5000 * MS);
        ChunkDelivery delivery =
                new ChunkDelivery("job-1", "cyan", source, clock, 0, 0, 1000 * MS, 0, 1, p -> {});
        delivery.acquire(FOREVER).release();
        delivery.acquire(FOREVER).release();

        assertThatThrownBy(() -> delivery.acquire(FOREVER))
                .isInstanceOfSatisfying(
                        StreamSilentException.class,
                        e -> {
                            assertThat(e.nextSeq()).isEqualTo(2);
                            assertThat(e.silentNanos()).isEqualTo(1000 * MS);
                        })
                .hasMessageStartingWith(
                        "stream job-1/cyan brought no chunk for 1000 ms, waiting for chunk 2");
        // Told when the timeout ran out, however long the caller would have waited.
        assertThat(clock.nanoTime() - t0).isEqualTo(1000 * MS);
        // Once per silence: the reader waits on, and gets the chunk when it comes.
        StreamChunk late = delivery.acquire(FOREVER);
        assertThat(late.seq()).isEqualTo(2);
        assertThat(clock.nanoTime() - t0).isEqualTo(5000 * MS);
        late.release();
        assertThat(delivery.isEndOfStream()).isTrue();
    }

    @Test
    void aStreamNotBegunOrEndedIsNeverSilent() throws IOException {
        // The first chunk comes at 5 s: before it, the job may not have started.
        ScriptedSource source = new ScriptedSource(clock).chunks(1, 1000, t0 + 5000 * MS);
        ChunkDelivery delivery =
                new ChunkDelivery("job-1", "cyan", source, clock, 0, 0, 1000 * MS, 0, 1, p -> {});
        delivery.acquire(FOREVER).release();
        assertThat(delivery.isEndOfStream()).isTrue();
        assertThat(delivery.acquire(3000 * MS)).isNull();
        // A short wait returns empty, as before, while the silence is not yet due.
        ScriptedSource quiet = new ScriptedSource(clock);
        quiet.add(0, false, 1000, clock.nanoTime());
        ChunkDelivery shortWait =
                new ChunkDelivery("job-1", "cyan", quiet, clock, 0, 0, 1000 * MS, 0, 1, p -> {});
        shortWait.acquire(FOREVER).release();
        assertThat(shortWait.acquire(300 * MS)).isNull();
    }

    @Test
    void anApplicationsOwnPauseIsNoSilence() throws IOException {
        // Chunk 1 came while the application paused for 10 s: it is taken, not a silence told.
        ScriptedSource source = new ScriptedSource(clock);
        source.add(0, false, 1000, t0).add(1, false, 1000, t0 + 5000 * MS);
        source.add(2, true, 1000, t0 + 10_500 * MS);
        ChunkDelivery delivery =
                new ChunkDelivery("job-1", "cyan", source, clock, 0, 0, 1000 * MS, 0, 1, p -> {});
        delivery.acquire(FOREVER).release();
        clock.advanceTo(t0 + 10_000 * MS);
        delivery.acquire(FOREVER).release();
        StreamChunk last = delivery.acquire(FOREVER);
        assertThat(last.seq()).isEqualTo(2);
        last.release();
    }

    @Test
    void aReportedGapIsThrownOnceAndTheReaderWaitsOnForTheMissingChunk() throws IOException {
        // Paced at 10 000 bytes/s: 2 is due at 200 ms; the daemon reports it missing at 500 ms,
        // and it comes at 2000 ms.
        ScriptedSource source = new ScriptedSource(clock);
        source.add(0, false, 1000, t0).add(1, false, 1000, t0);
        source.gap(2, 2, 300 * MS, t0 + 500 * MS);
        source.add(2, false, 1000, t0 + 2000 * MS).add(3, true, 1000, t0 + 2000 * MS);
        ChunkDelivery delivery = delivery(source, 10_000, 0, 1);
        delivery.acquire(FOREVER).release();
        delivery.acquire(FOREVER).release();

        assertThatThrownBy(() -> delivery.acquire(FOREVER))
                .isInstanceOfSatisfying(
                        StreamGapException.class,
                        e -> {
                            assertThat(e.job()).isEqualTo("job-1");
                            assertThat(e.stream()).isEqualTo("cyan");
                            assertThat(e.gap())
                                    .isEqualTo(new StreamGap(1, 2, 2, 300 * MS, "job-1", "cyan"));
                        })
                .hasMessageStartingWith(
                        "stream job-1/cyan waits for chunk 2, missing at the daemon")
                .hasMessageContaining("had waited 300 ms");
        // Told when the report came, not when the wait ran out.
        assertThat(clock.nanoTime() - t0).isEqualTo(500 * MS);
        StreamReaderStats gapped = delivery.stats(0, 0);
        assertThat(gapped.gapsReported()).isEqualTo(1);
        assertThat(gapped.currentGap()).contains(new StreamGap(1, 2, 2, 300 * MS, "job-1", "cyan"));

        List<Long> seqs = new ArrayList<>();
        List<Long> times = readAll(delivery, seqs);

        assertThat(seqs).containsExactly(2L, 3L);
        assertThat(times).containsExactly(2000L, 2100L);
        StreamReaderStats stats = delivery.stats(0, 0);
        assertThat(stats.gapsReported()).isEqualTo(1);
        assertThat(stats.currentGap()).isEmpty();
        // The wait at the hole is one starvation, from 2's due time to its arrival.
        assertThat(stats.starvationEvents()).isEqualTo(1);
        assertThat(stats.starvedNanos()).isEqualTo(1800 * MS);
        assertThat(stats.latenessMaxNanos()).isEqualTo(1800 * MS);
        assertThat(source.done).containsExactly(0L, 1L, 2L, 3L);
    }

    @Test
    void everyReaderOfASharedStreamIsToldOfAGapWhateverItsShare() throws IOException {
        for (int i = 0; i < 2; i++) {
            long start = clock.nanoTime();
            ScriptedSource source = new ScriptedSource(clock);
            source.add(0, false, 10, start).add(1, false, 10, start).add(2, false, 10, start);
            source.gap(3, 4, 100 * MS, start + 100 * MS);
            long later = start + 1000 * MS;
            source.add(3, false, 10, later).add(4, false, 10, later).add(5, true, 10, later);
            ChunkDelivery delivery = delivery(source, 0, i, 2);

            List<String> events = readAllTellingGaps(delivery);

            // 3 is reader 1's, 4 reader 0's: both wait at 3.
            assertThat(events)
                    .as("reader %d", i)
                    .containsExactlyElementsOf(
                            i == 0
                                    ? List.of("0", "2", "gap 3 to 4", "4")
                                    : List.of("1", "gap 3 to 4", "3", "5"));
            assertThat(delivery.isEndOfStream()).isTrue();
            assertThat(source.done).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        }
    }

    @Test
    void aReportThatCameBeforeTheChunksBelowItsHoleIsToldWhenTheReaderGetsThere()
            throws IOException {
        // The reader is behind: 0 and 1 are there, but the report came first.
        ScriptedSource source = new ScriptedSource(clock);
        source.gap(2, 2, 100 * MS, t0);
        source.add(0, false, 10, t0).add(1, false, 10, t0);
        source.add(2, false, 10, t0 + 1000 * MS).add(3, true, 10, t0 + 1000 * MS);
        ChunkDelivery delivery = delivery(source, 0, 0, 1);

        assertThat(readAllTellingGaps(delivery)).containsExactly("0", "1", "gap 2", "2", "3");
    }

    @Test
    void aReportWhoseHoleWasFilledBeforeItCameIsNotTold() throws IOException {
        // 2 comes at 400 ms, its report (sent before 2 reached the daemon) at 500 ms.
        ScriptedSource source = new ScriptedSource(clock);
        source.add(0, false, 10, t0).add(1, false, 10, t0).add(2, false, 10, t0 + 400 * MS);
        source.gap(2, 2, 100 * MS, t0 + 500 * MS);
        source.add(3, true, 10, t0 + 1000 * MS);
        ChunkDelivery delivery = delivery(source, 0, 0, 1);

        assertThat(readAllTellingGaps(delivery)).containsExactly("0", "1", "2", "3");
        assertThat(delivery.stats(0, 0).gapsReported()).isZero();
        // The report was taken on the way (it woke the wait for 3), not left behind.
        assertThat(source.takeGap()).isNull();
    }

    /** Reads to the end like {@link #readAll}: each chunk's seq, and "gap S" for a gap thrown. */
    private static List<String> readAllTellingGaps(ChunkDelivery delivery) throws IOException {
        List<String> events = new ArrayList<>();
        while (!delivery.isEndOfStream()) {
            try (StreamChunk chunk = delivery.acquire(FOREVER)) {
                if (chunk != null) {
                    events.add(Long.toString(chunk.seq()));
                }
            } catch (StreamGapException e) {
                events.add("gap " + e.gap().missingSeqs());
            }
        }
        return events;
    }

    @Test
    void oneChunkIsHeldAtATimeAndItsViewIsTheSourcesBytes() throws IOException {
        ScriptedSource source = new ScriptedSource(clock).chunks(2, 5, t0);
        ChunkDelivery delivery = delivery(source, 0, 0, 1);

        StreamChunk chunk = delivery.acquire(FOREVER);
        assertThat(chunk.job()).isEqualTo("job-1");
        assertThat(chunk.stream()).isEqualTo("cyan");
        assertThat(chunk.size()).isEqualTo(5);
        ByteBuffer payload = chunk.payload();
        assertThat(payload.isReadOnly()).isTrue();
        assertThat(chunk.copyPayload()).containsExactly(0, 1, 2, 3, 4);
        assertThatThrownBy(() -> delivery.acquire(FOREVER))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("release chunk 0 before acquiring the next");

        chunk.release();
        assertThatThrownBy(chunk::release)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("chunk 0 was released");
        assertThatThrownBy(chunk::payload).isInstanceOf(IllegalStateException.class);
        chunk.close(); // released already: nothing

        StreamChunk last = delivery.acquire(FOREVER);
        assertThat(last.isEndOfStream()).isTrue();
        assertThat(delivery.isEndOfStream()).isFalse();
        last.close();
        assertThat(delivery.isEndOfStream()).isTrue();
    }

    @Test
    void closingWhileAChunkIsHeldGivesTheSourceBack() throws IOException {
        ScriptedSource source = new ScriptedSource(clock).chunks(3, 5, t0);
        ChunkDelivery delivery = delivery(source, 0, 0, 1);
        StreamChunk chunk = delivery.acquire(FOREVER);

        delivery.close();

        assertThat(source.closed).isTrue();
        chunk.release(); // after close: the slot went with the subscription
        assertThatThrownBy(() -> delivery.acquire(FOREVER))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the reader is closed");
    }

    @Test
    void aRateBelowOneByteASecondIsRefused() {
        assertThatThrownBy(() -> new Pacer(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("rate must be at least 1 byte/s, got 0");
    }
}
