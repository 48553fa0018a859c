package dev.sluice.client.read;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class HeapChunkPoolTest {
    private final HeapChunkPool.Spares spares = new HeapChunkPool.Spares(1 << 20);

    @Test
    void aBufferGivenBackIsTheOneTheNextChunkOfItsSizeGets() {
        HeapChunkPool pool = new HeapChunkPool(1 << 20, spares);
        ByteBuffer first = pool.take(1000);
        first.put(new byte[600]).flip();
        pool.giveBack(first);

        ByteBuffer second = pool.take(1000);

        assertThat(second).isSameAs(first);
        assertThat(second.position()).isZero();
        assertThat(second.limit()).isEqualTo(1000);
        assertThat(pool.takenBytes()).isEqualTo(1000);
        assertThat(spares.freeBytes()).isZero();
    }

    @Test
    void aLaterPoolTakesTheBuffersAPoolThatEndedGaveBack() {
        HeapChunkPool endedJob = new HeapChunkPool(1 << 20, spares);
        ByteBuffer first = endedJob.take(1000);
        endedJob.giveBack(first);

        // The next job's subscription, with a pool of its own on the same spares.
        HeapChunkPool nextJob = new HeapChunkPool(1 << 20, spares);

        assertThat(nextJob.take(1000)).isSameAs(first);
        assertThat(nextJob.takenBytes()).isEqualTo(1000);
        assertThat(endedJob.takenBytes()).isZero();
    }

    @Test
    void aSizeNotKeptGetsABufferOfItsOwn() {
        HeapChunkPool pool = new HeapChunkPool(1 << 20, spares);
        ByteBuffer small = pool.take(100);
        pool.giveBack(small);

        ByteBuffer large = pool.take(200);

        assertThat(large).isNotSameAs(small);
        assertThat(large.capacity()).isEqualTo(200);
        assertThat(spares.freeBytes()).isEqualTo(100);
    }

    @Test
    void nothingIsTakenBeyondThePoolsCapacity() {
        HeapChunkPool pool = new HeapChunkPool(250, spares);
        assertThat(pool.take(100)).isNotNull();
        assertThat(pool.take(100)).isNotNull();

        assertThat(pool.take(100)).isNull();
        assertThat(pool.takenBytes()).isEqualTo(200);
        assertThat(pool.take(50)).isNotNull();
    }

    @Test
    void freeBuffersOfOtherSizesAreDroppedToKeepABufferGivenBack() {
        HeapChunkPool.Spares small = new HeapChunkPool.Spares(300);
        HeapChunkPool pool = new HeapChunkPool(1 << 20, small);
        ByteBuffer a = pool.take(100);
        ByteBuffer b = pool.take(100);
        ByteBuffer c = pool.take(250);
        pool.giveBack(a);
        pool.giveBack(b);
        assertThat(small.freeBytes()).isEqualTo(200);

        pool.giveBack(c);

        assertThat(small.freeBytes()).isEqualTo(250);
        assertThat(pool.take(250)).isSameAs(c);
    }

    @Test
    void aBufferBeyondTheSparesBoundIsDropped() {
        HeapChunkPool.Spares small = new HeapChunkPool.Spares(150);
        HeapChunkPool pool = new HeapChunkPool(1 << 20, small);
        ByteBuffer a = pool.take(100);
        ByteBuffer b = pool.take(100);
        pool.giveBack(a);

        pool.giveBack(b);

        assertThat(small.freeBytes()).isEqualTo(100);
        assertThat(pool.takenBytes()).isZero();
    }

    @Test
    void aCapacityOfZeroTakesNothing() {
        assertThat(new HeapChunkPool(0, spares).take(1)).isNull();
    }
}
