package dev.sluice.flink.generation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.read.StreamChunk;
import dev.sluice.client.read.StreamReader;
import dev.sluice.embedded.junit.Await;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * Reads a stream of {@link PatternGenerator} to its end as its output location's consumer does,
 * checking that its chunks come in order, each once, and every byte: what a stream must look like
 * whatever way its chunks took and whatever failed on the way.
 */
final class PatternStreams {
    private PatternStreams() {}

    /** Reads {@code stream} to its end within {@code wait}; returns its length in bytes. */
    static long readAll(StreamReader reader, String stream, Duration wait) throws Exception {
        return readAll(reader, stream, new AtomicLong(), wait);
    }

    /** As above, counting the chunks read in {@code chunks} as it goes. */
    static long readAll(StreamReader reader, String stream, AtomicLong chunks, Duration wait)
            throws Exception {
        return readAll(reader, stream, chunks, () -> false, wait);
    }

    /**
     * As above, reading nothing while {@code hold} says so: a consumer that stops taking chunks for
     * a while, so that a test can fail a part while chunks wait undelivered.
     */
    static long readAll(
            StreamReader reader,
            String stream,
            AtomicLong chunks,
            BooleanSupplier hold,
            Duration wait)
            throws Exception {
        AtomicLong bytes = new AtomicLong();
        AtomicLong nextSeq = new AtomicLong();
        Await.until(
                stream + " ends",
                wait,
                () -> {
                    if (reader.isEndOfStream()) {
                        return true;
                    }
                    if (hold.getAsBoolean()) {
                        return false;
                    }
                    StreamChunk chunk = reader.acquire(Duration.ofMillis(200));
                    if (chunk != null) {
                        assertThat(chunk.seq())
                                .as(stream + " in order, once")
                                .isEqualTo(nextSeq.getAndIncrement());
                        ByteBuffer payload = chunk.payload();
                        while (payload.hasRemaining()) {
                            assertThat(payload.get())
                                    .isEqualTo(
                                            PatternGenerator.byteAt(
                                                    stream, bytes.getAndIncrement()));
                        }
                        chunk.release();
                        chunks.incrementAndGet();
                    }
                    return false;
                });
        return bytes.get();
    }
}
