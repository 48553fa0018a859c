package dev.sluice.client.read;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The heap buffers a shared subscription copies paced readers' waiting chunks into ({@link
 * SharedChunkSubscription}), kept for the next chunks instead of left to the garbage collector.
 *
 * <p>Why a pool: a chunk copied into a fresh array at tens of MB/s lives until it is due, up to a
 * task's reading time, so it outlived the young collections that came meanwhile and each one copied
 * it again; their pauses (5–13 ms every few hundred milliseconds in a benchmark reader's JVM) were
 * most of the readers' lateness (docs/stream-reader.md, "Lateness and the start buffer"). Buffers
 * taken from here are allocated once and reused: a stream's chunks come in one or two sizes (the
 * chunk size, and the last chunk of a task), so buffers are kept per exact size.
 *
 * <p>Bounded: the bytes taken and the free buffers kept stay within {@code capacityBytes}; a take
 * that would pass it drops free buffers of other sizes first, and returns null when the bytes taken
 * alone would pass it. Thread-safe: the dispatcher takes, readers give back.
 */
final class HeapChunkPool {
    private final long capacityBytes;
    private final Map<Integer, ArrayDeque<ByteBuffer>> free = new HashMap<>();
    private long takenBytes;
    private long freeBytes;

    HeapChunkPool(long capacityBytes) {
        this.capacityBytes = capacityBytes;
    }

    /** A buffer of {@code size} bytes, position 0 and limit {@code size}; null if none fits. */
    synchronized ByteBuffer take(int size) {
        if (takenBytes + size > capacityBytes) {
            return null;
        }
        takenBytes += size;
        ArrayDeque<ByteBuffer> same = free.get(size);
        if (same != null && !same.isEmpty()) {
            freeBytes -= size;
            return same.pop().clear();
        }
        dropFreeBuffersUntilRoomFor(size);
        return ByteBuffer.allocate(size);
    }

    /** Gives back a buffer {@link #take} returned; it must not be used after. */
    synchronized void giveBack(ByteBuffer buffer) {
        int size = buffer.capacity();
        takenBytes -= size;
        freeBytes += size;
        free.computeIfAbsent(size, s -> new ArrayDeque<>()).push(buffer);
    }

    private void dropFreeBuffersUntilRoomFor(int size) {
        Iterator<ArrayDeque<ByteBuffer>> sizes = free.values().iterator();
        while (takenBytes + freeBytes > capacityBytes && sizes.hasNext()) {
            ArrayDeque<ByteBuffer> buffers = sizes.next();
            while (takenBytes + freeBytes > capacityBytes && !buffers.isEmpty()) {
                freeBytes -= buffers.pop().capacity();
            }
            if (buffers.isEmpty()) {
                sizes.remove();
            }
        }
    }

    /** The bytes of the buffers taken and not given back. */
    synchronized long takenBytes() {
        return takenBytes;
    }

    /** The bytes of the free buffers kept for reuse. */
    synchronized long freeBytes() {
        return freeBytes;
    }
}
