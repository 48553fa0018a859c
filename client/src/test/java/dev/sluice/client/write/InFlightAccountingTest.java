package dev.sluice.client.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.progress.DeliveryProgress;
import org.junit.jupiter.api.Test;

class InFlightAccountingTest {
    private static final String CYAN = "job-1/cyan";

    private static DeliveryProgress single(long seq, long bytes) {
        return new DeliveryProgress("job-1", "cyan", 0, 1, seq, bytes, false);
    }

    private static DeliveryProgress reader(
            int index, int count, long seq, long bytes, boolean end) {
        return new DeliveryProgress("job-1", "cyan", index, count, seq, bytes, end);
    }

    /** Writes what is admitted, in seq order from {@code from}; returns the next seq. */
    private static long writeWhileAdmitted(InFlightAccounting a, long from, long bytes) {
        long seq = from;
        while (a.admits(CYAN, seq, bytes)) {
            a.written(CYAN, seq, bytes);
            seq++;
        }
        return seq;
    }

    @Test
    void aStreamHoldsItsShareThenWaitsForOneReadersProgress() {
        InFlightAccounting a = new InFlightAccounting(300);
        assertThat(writeWhileAdmitted(a, 0, 100)).isEqualTo(3);
        assertThat(a.bytesInFlight(CYAN)).isEqualTo(300);
        assertThat(a.admits(CYAN, 3, 100)).isFalse();
        // A smaller chunk does not fit either: 300 + 1 > 300.
        assertThat(a.admits(CYAN, 3, 1)).isFalse();

        a.progress(single(1, 200));
        assertThat(a.deliveredSeq(CYAN)).isEqualTo(1);
        assertThat(a.deliveredBytes(CYAN)).isEqualTo(200);
        assertThat(a.bytesInFlight(CYAN)).isEqualTo(100);
        assertThat(writeWhileAdmitted(a, 3, 100)).isEqualTo(5);
        assertThat(a.bytesInFlight()).isEqualTo(300);
        assertThat(a.streamsInFlight()).isEqualTo(1);

        a.progress(single(4, 500));
        assertThat(a.bytesInFlight()).isZero();
        assertThat(a.streamsInFlight()).isZero();
    }

    @Test
    void streamsAreCountedApart() {
        InFlightAccounting a = new InFlightAccounting(100);
        a.written(CYAN, 0, 100);
        assertThat(a.admits(CYAN, 1, 10)).isFalse();
        assertThat(a.admits("job-1/magenta", 0, 100)).isTrue();
        a.written("job-1/magenta", 0, 100);
        assertThat(a.bytesInFlight()).isEqualTo(200);
        assertThat(a.streamsInFlight()).isEqualTo(2);
        a.progress(new DeliveryProgress("job-1", "magenta", 0, 1, 0, 100, false));
        assertThat(a.bytesInFlight()).isEqualTo(100);
        assertThat(a.admits(CYAN, 1, 10)).isFalse();
    }

    @Test
    void aChunkLargerThanTheShareGoesAloneOnly() {
        InFlightAccounting a = new InFlightAccounting(100);
        assertThat(a.admits(CYAN, 0, 250)).isTrue();
        a.written(CYAN, 0, 250);
        assertThat(a.admits(CYAN, 1, 1)).isFalse();
        a.progress(single(0, 250));
        assertThat(a.admits(CYAN, 1, 250)).isTrue();
    }

    @Test
    void aSharedStreamIsDeliveredUpToItsSlowestReaderAndItsBytesAreSummed() {
        InFlightAccounting a = new InFlightAccounting(1_000);
        for (long seq = 0; seq < 10; seq++) {
            a.written(CYAN, seq, 100);
        }
        // Reader 0 of 2 is far ahead, reader 1 not heard from: it counts as -1.
        a.progress(reader(0, 2, 8, 500, false));
        assertThat(a.deliveredSeq(CYAN)).isEqualTo(-1);
        assertThat(a.bytesInFlight(CYAN)).isEqualTo(1_000);
        assertThat(a.deliveredBytes(CYAN)).isEqualTo(500);

        a.progress(reader(1, 2, 5, 300, false));
        assertThat(a.deliveredSeq(CYAN)).isEqualTo(5);
        assertThat(a.deliveredBytes(CYAN)).isEqualTo(800);
        assertThat(a.bytesInFlight(CYAN)).isEqualTo(400);

        a.progress(reader(1, 2, 9, 500, false));
        assertThat(a.deliveredSeq(CYAN)).isEqualTo(8);
        assertThat(a.bytesInFlight(CYAN)).isEqualTo(100);
    }

    @Test
    void olderAndRepeatedProgressChangesNothing() {
        InFlightAccounting a = new InFlightAccounting(1_000);
        for (long seq = 0; seq < 6; seq++) {
            a.written(CYAN, seq, 100);
        }
        a.progress(reader(0, 2, 4, 300, false));
        a.progress(reader(1, 2, 3, 200, false));
        assertThat(a.deliveredSeq(CYAN)).isEqualTo(3);
        // An older record of reader 1 (records of a stream share a partition, but a reader may be
        // restarted and report from its start) and a repeat of reader 0's.
        a.progress(reader(1, 2, 1, 100, false));
        a.progress(reader(0, 2, 4, 300, false));
        assertThat(a.deliveredSeq(CYAN)).isEqualTo(3);
        assertThat(a.deliveredBytes(CYAN)).isEqualTo(500);
        assertThat(a.bytesInFlight(CYAN)).isEqualTo(200);
    }

    @Test
    void deliveredNeverGoesBackWhenTheStreamGetsOtherReaders() {
        InFlightAccounting a = new InFlightAccounting(1_000);
        for (long seq = 0; seq < 6; seq++) {
            a.written(CYAN, seq, 100);
        }
        a.progress(single(3, 400));
        assertThat(a.bytesInFlight(CYAN)).isEqualTo(200);
        // Now two readers, the second not heard from: what was delivered stays delivered.
        a.progress(reader(0, 2, 4, 100, false));
        assertThat(a.deliveredSeq(CYAN)).isEqualTo(3);
        assertThat(a.bytesInFlight(CYAN)).isEqualTo(200);
        a.progress(reader(1, 2, 5, 100, false));
        assertThat(a.deliveredSeq(CYAN)).isEqualTo(4);
        assertThat(a.bytesInFlight(CYAN)).isEqualTo(100);
    }

    @Test
    void chunksAtOrBelowTheDeliveredSeqAreReplaysAndNeverInFlight() {
        InFlightAccounting a = new InFlightAccounting(100);
        // Progress heard before this writer wrote anything (a writer restored from a checkpoint).
        a.progress(single(9, 1_000));
        for (long seq = 0; seq < 10; seq++) {
            assertThat(a.admits(CYAN, seq, 100)).isTrue();
            a.written(CYAN, seq, 100);
        }
        assertThat(a.bytesInFlight()).isZero();
        a.written(CYAN, 10, 100);
        assertThat(a.bytesInFlight()).isEqualTo(100);
        // The same chunk written twice by this writer counts once.
        a.written(CYAN, 10, 100);
        assertThat(a.bytesInFlight()).isEqualTo(100);
    }

    @Test
    void theEndOfEveryReaderFinishesTheStream() {
        InFlightAccounting a = new InFlightAccounting(1_000);
        for (long seq = 0; seq < 5; seq++) {
            a.written(CYAN, seq, 100);
        }
        a.progress(reader(0, 2, 4, 300, true));
        assertThat(a.streamsInFlight()).isEqualTo(1);
        assertThat(a.isFinished(CYAN)).isFalse();
        assertThat(a.deliveredSeq(CYAN)).isEqualTo(-1);
        assertThat(a.bytesInFlight(CYAN)).isEqualTo(500);

        a.progress(reader(1, 2, 4, 200, true));
        assertThat(a.isFinished(CYAN)).isTrue();
        assertThat(a.deliveredSeq(CYAN)).isEqualTo(4);
        assertThat(a.bytesInFlight()).isZero();
        assertThat(a.streamsTracked()).isZero();
        // A late replay of a finished stream is not in flight, nor is later progress applied.
        a.written(CYAN, 2, 100);
        a.progress(reader(0, 2, 4, 300, true));
        assertThat(a.bytesInFlight()).isZero();
        assertThat(a.streamsTracked()).isZero();
    }

    @Test
    void aStreamThatEndedWithChunksWrittenPastItsEndHoldsNothing() {
        InFlightAccounting a = new InFlightAccounting(1_000);
        for (long seq = 0; seq < 5; seq++) {
            a.written(CYAN, seq, 100);
        }
        // The stream ended at seq 3: chunk 4 is past its end (the daemon dead-letters it).
        a.progress(reader(0, 1, 3, 400, true));
        assertThat(a.isFinished(CYAN)).isTrue();
        assertThat(a.bytesInFlight()).isZero();
        assertThat(a.streamsInFlight()).isZero();
    }

    @Test
    void forgettingAStreamFreesItsShareAndKeepsItsDelivery() {
        InFlightAccounting a = new InFlightAccounting(300);
        a.written("job-1/magenta", 0, 50);
        assertThat(writeWhileAdmitted(a, 0, 100)).isEqualTo(3);
        a.progress(single(0, 100));
        assertThat(writeWhileAdmitted(a, 3, 100)).isEqualTo(4);
        assertThat(a.admits(CYAN, 4, 100)).isFalse();

        // Chunks 1-3 were lost: no longer in flight, the stream's share admits again.
        a.forget(CYAN);
        assertThat(a.bytesInFlight(CYAN)).isZero();
        assertThat(a.bytesInFlight()).isEqualTo(50);
        assertThat(a.streamsInFlight()).isEqualTo(1);
        assertThat(a.admits(CYAN, 4, 100)).isTrue();
        // What was delivered stays: a replay of chunk 0 is still not in flight.
        assertThat(a.deliveredSeq(CYAN)).isZero();
        assertThat(a.deliveredBytes(CYAN)).isEqualTo(100);
        a.written(CYAN, 0, 100);
        assertThat(a.bytesInFlight(CYAN)).isZero();
        // Their tasks computed again count anew, and progress frees them as before.
        a.written(CYAN, 1, 100);
        assertThat(a.streamsInFlight()).isEqualTo(2);
        a.progress(single(1, 200));
        assertThat(a.bytesInFlight(CYAN)).isZero();
        assertThat(a.streamsInFlight()).isEqualTo(1);

        // Forgetting a stream with nothing in flight, or unheard of, changes nothing.
        a.forget(CYAN);
        a.forget("job-2/yellow");
        assertThat(a.bytesInFlight()).isEqualTo(50);
        assertThat(a.streamsInFlight()).isEqualTo(1);
    }

    @Test
    void theShareIsPositive() {
        assertThatThrownBy(() -> new InFlightAccounting(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("share");
    }
}
