package dev.sluice.client.progress;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StreamDeliveryStateTest {
    private final StreamDeliveryState state = new StreamDeliveryState();

    private boolean update(int reader, int count, long seq, long bytes, boolean end) {
        return state.update(new DeliveryProgress("j", "s", reader, count, seq, bytes, end));
    }

    @Test
    void aStreamIsDeliveredUpToItsSlowestReaderAndItsBytesAreTheReadersSum() {
        assertThat(state.deliveredSeq()).isEqualTo(-1);
        assertThat(state.readerCount()).isZero();
        assertThat(update(0, 2, 5, 600, false)).as("reader 1 not heard from: -1").isFalse();
        assertThat(state.deliveredSeq()).isEqualTo(-1);
        assertThat(update(1, 2, 3, 400, false)).isTrue();
        assertThat(state.deliveredSeq()).isEqualTo(3);
        assertThat(state.deliveredBytes()).isEqualTo(1000);
        assertThat(state.readerCount()).isEqualTo(2);
    }

    @Test
    void progressNeverGoesBackAlsoWhenTheReadersChange() {
        update(0, 1, 7, 800, false);
        assertThat(update(0, 1, 4, 500, false)).as("an older record").isFalse();
        assertThat(state.deliveredSeq()).isEqualTo(7);
        assertThat(state.deliveredBytes()).isEqualTo(800);

        // Now two readers: the new one at -1 until it reports; the stream stays at 7.
        assertThat(update(0, 2, 9, 100, false)).isFalse();
        assertThat(state.deliveredSeq()).isEqualTo(7);
        assertThat(update(1, 2, 8, 100, false)).isTrue();
        assertThat(state.deliveredSeq()).isEqualTo(8);
    }

    @Test
    void theStreamEndsWhenEveryReaderReachedItsEnd() {
        assertThat(state.allEnded()).as("no reader heard of").isFalse();
        update(0, 2, 9, 500, true);
        assertThat(state.hasEnded(0)).isTrue();
        assertThat(state.hasEnded(1)).isFalse();
        assertThat(state.allEnded()).isFalse();
        update(1, 2, 9, 500, true);
        assertThat(state.allEnded()).isTrue();
    }
}
