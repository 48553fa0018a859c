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
 * <p>Why the free buffers are the process's ({@link Spares#PROCESS}), not the pool's: a shared
 * subscription reads one job and ends with it, so a pool of its own started every job empty, and
 * each job's first copies were fresh arrays again: 45 % of all that a benchmark reader's JVM
 * allocated (JFR, Fig. 6), in the middle of the paced reading.
 *
 * <p>Bounded: the bytes a pool has taken and not given back stay within its {@code capacityBytes},
 * a take that would pass it returns null; the free buffers kept stay within the spares' own bound.
 * Thread-safe: the dispatcher takes, readers give back.
 */
final class HeapChunkPool {
    private final long capacityBytes;
    private final Spares spares;
    private long takenBytes;

    /** A pool on the process's spares. */
    HeapChunkPool(long capacityBytes) {
        this(capacityBytes, Spares.PROCESS);
    }

    HeapChunkPool(long capacityBytes, Spares spares) {
        this.capacityBytes = capacityBytes;
        this.spares = spares;
    }

    /** A buffer of {@code size} bytes, position 0 and limit {@code size}; null if none fits. */
    ByteBuffer take(int size) {
        synchronized (this) {
            if (takenBytes + size > capacityBytes) {
                return null;
            }
            takenBytes += size;
        }
        return spares.take(size);
    }

    /** Gives back a buffer {@link #take} returned; it must not be used after. */
    void giveBack(ByteBuffer buffer) {
        synchronized (this) {
            takenBytes -= buffer.capacity();
        }
        spares.keep(buffer);
    }

    /** The bytes of the buffers taken and not given back. */
    synchronized long takenBytes() {
        return takenBytes;
    }

    /**
     * Free buffers by exact size, for every pool that draws on them. Bounded by {@code
     * capacityBytes}: a buffer given back beyond it drops free buffers of other sizes first (a
     * later job may chunk its streams otherwise), then itself.
     */
    static final class Spares {
        /**
         * The process's: as much as one subscription's default heap buffer ({@link
         * StreamReaderBuilder#heapBufferBytes}), so that a reader's process keeps at most what one
         * job could use, and only what some job did use.
         */
        static final Spares PROCESS = new Spares(StreamReaderBuilder.DEFAULT_HEAP_BUFFER_BYTES);

        private final long capacityBytes;
        private final Map<Integer, ArrayDeque<ByteBuffer>> free = new HashMap<>();
        private long freeBytes;

        Spares(long capacityBytes) {
            this.capacityBytes = capacityBytes;
        }

        private synchronized ByteBuffer take(int size) {
            ArrayDeque<ByteBuffer> same = free.get(size);
            if (same != null && !same.isEmpty()) {
                freeBytes -= size;
                return same.pop().clear();
            }
            return ByteBuffer.allocate(size);
        }

        private synchronized void keep(ByteBuffer buffer) {
            int size = buffer.capacity();
            Iterator<Map.Entry<Integer, ArrayDeque<ByteBuffer>>> sizes = free.entrySet().iterator();
            while (freeBytes + size > capacityBytes && sizes.hasNext()) {
                Map.Entry<Integer, ArrayDeque<ByteBuffer>> other = sizes.next();
                if (other.getKey() == size) {
                    continue;
                }
                ArrayDeque<ByteBuffer> buffers = other.getValue();
                while (freeBytes + size > capacityBytes && !buffers.isEmpty()) {
                    freeBytes -= buffers.pop().capacity();
                }
                if (buffers.isEmpty()) {
                    sizes.remove();
                }
            }
            if (freeBytes + size <= capacityBytes) {
                freeBytes += size;
                free.computeIfAbsent(size, s -> new ArrayDeque<>()).push(buffer);
            }
        }

        /** The bytes of the free buffers kept for reuse. */
        synchronized long freeBytes() {
            return freeBytes;
        }
    }
}
