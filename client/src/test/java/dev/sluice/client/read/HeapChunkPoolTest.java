package dev.sluice.client.read;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class HeapChunkPoolTest {

    @Test
    void aBufferGivenBackIsTheOneTheNextChunkOfItsSizeGets() {
        HeapChunkPool pool = new HeapChunkPool(1 << 20);
        ByteBuffer first = pool.take(1000);
        first.put(new byte[600]).flip();
        pool.giveBack(first);

        ByteBuffer second = pool.take(1000);

        assertThat(second).isSameAs(first);
        assertThat(second.position()).isZero();
        assertThat(second.limit()).isEqualTo(1000);
        assertThat(pool.takenBytes()).isEqualTo(1000);
        assertThat(pool.freeBytes()).isZero();
    }

    @Test
    void aSizeNotKeptGetsABufferOfItsOwn() {
        HeapChunkPool pool = new HeapChunkPool(1 << 20);
        ByteBuffer small = pool.take(100);
        pool.giveBack(small);

        ByteBuffer large = pool.take(200);

        assertThat(large).isNotSameAs(small);
        assertThat(large.capacity()).isEqualTo(200);
        assertThat(pool.freeBytes()).isEqualTo(100);
    }

    @Test
    void nothingIsTakenBeyondTheCapacity() {
        HeapChunkPool pool = new HeapChunkPool(250);
        assertThat(pool.take(100)).isNotNull();
        assertThat(pool.take(100)).isNotNull();

        assertThat(pool.take(100)).isNull();
        assertThat(pool.takenBytes()).isEqualTo(200);
        assertThat(pool.take(50)).isNotNull();
    }

    @Test
    void freeBuffersOfOtherSizesAreDroppedToMakeRoom() {
        HeapChunkPool pool = new HeapChunkPool(300);
        ByteBuffer a = pool.take(100);
        ByteBuffer b = pool.take(100);
        pool.giveBack(a);
        pool.giveBack(b);
        assertThat(pool.freeBytes()).isEqualTo(200);

        assertThat(pool.take(250)).isNotNull();

        assertThat(pool.takenBytes()).isEqualTo(250);
        assertThat(pool.takenBytes() + pool.freeBytes()).isLessThanOrEqualTo(300);
    }

    @Test
    void aCapacityOfZeroTakesNothing() {
        assertThat(new HeapChunkPool(0).take(1)).isNull();
    }
}
