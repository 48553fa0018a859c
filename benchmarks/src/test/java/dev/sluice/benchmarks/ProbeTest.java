package dev.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

class ProbeTest {
    /** The digest as sluice-kafka-tool defines it: words, then the tail's signed bytes. */
    private static long reference(byte[] bytes, int offset, int length) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long sum = 0;
        int i = offset;
        for (; i + 8 <= offset + length; i += 8) {
            sum += buffer.getLong(i);
        }
        for (; i < offset + length; i++) {
            sum += bytes[i];
        }
        return sum;
    }

    @Test
    void theUnrolledSumIsTheDigestForEveryLengthAndOffsetInAnArrayAndOffHeap() {
        byte[] bytes = new byte[300];
        new Random(7).nextBytes(bytes);
        ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length).put(bytes).flip();
        // Off-heap is the readers' case (mapped memory); an array is the Aeron assembler's.
        for (UnsafeBuffer buffer :
                new UnsafeBuffer[] {new UnsafeBuffer(bytes), new UnsafeBuffer(direct)}) {
            for (int offset = 0; offset < 9; offset++) {
                for (int length = 0; offset + length <= bytes.length; length++) {
                    assertThat(Probe.sum(buffer, offset, length))
                            .as(
                                    "%s offset %d length %d",
                                    buffer.byteArray() == null ? "off-heap" : "array",
                                    offset,
                                    length)
                            .isEqualTo(reference(bytes, offset, length));
                }
            }
        }
    }
}
