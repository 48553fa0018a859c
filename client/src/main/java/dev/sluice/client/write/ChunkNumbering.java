package dev.sluice.client.write;

import dev.sluice.client.annotation.Internal;

/**
 * Which chunk a writer of a stream fills next: its {@code seq}, its length, whether it ends the
 * stream. Logic without I/O, for {@link StreamWriter}.
 *
 * <p><b>A share of a sized stream</b> is numbered as the generation's producers number their tasks
 * (docs/generation.md, "Tasks and chunks"): the stream of {@code streamBytes} is cut into tasks of
 * {@code taskBytes} (the last shorter), task {@code t} sends its chunks from {@code seq = t ×
 * ⌈taskBytes / chunkBytes⌉}, only a task's last chunk may be shorter than {@code chunkBytes}, and
 * the last chunk of the last task carries {@code eos}. Writer {@code index} of {@code count} owns
 * the tasks {@code t} with {@code t % count == index}, in increasing order: the writers of a stream
 * own disjoint seqs, and together every seq up to the end.
 *
 * <p><b>An unbounded stream</b> has one writer and no tasks: chunks of {@code chunkBytes}, seqs 0,
 * 1, 2, ...; which one is the last the writer learns only when it is closed.
 */
@Internal
public final class ChunkNumbering {
    private final int chunkBytes;
    // Sized only: the stream's tasks and this writer's part of them.
    private final long streamBytes;
    private final long taskBytes;
    private final long tasks;
    private final long chunksPerTask;
    private final int count;
    private final long shareBytes;

    private long task;
    private long chunkInTask;
    private long seq;

    private ChunkNumbering(
            int chunkBytes, long streamBytes, long taskBytes, int index, int count, long seq) {
        this.chunkBytes = chunkBytes;
        this.streamBytes = streamBytes;
        this.taskBytes = taskBytes;
        this.count = count;
        this.task = index;
        this.seq = seq;
        if (streamBytes < 0) {
            this.tasks = 0;
            this.chunksPerTask = 0;
            this.shareBytes = Long.MAX_VALUE;
        } else {
            this.tasks = ceilDiv(streamBytes, taskBytes);
            this.chunksPerTask = chunksPerTask(taskBytes, chunkBytes);
            long own = index < tasks ? (tasks - 1 - index) / count + 1 : 0;
            boolean ownsLast = own > 0 && (tasks - 1) % count == index;
            this.shareBytes = own * taskBytes - (ownsLast ? taskBytes - taskLength(tasks - 1) : 0);
        }
    }

    /**
     * Writer {@code index} of {@code count} of a stream of {@code streamBytes} in tasks of {@code
     * taskBytes} and chunks of {@code chunkBytes}.
     *
     * @throws IllegalArgumentException if a size is not positive, the task is smaller than a chunk,
     *     or the index is not in {@code [0, count)}
     */
    static ChunkNumbering share(
            long streamBytes, long taskBytes, int chunkBytes, int index, int count) {
        if (streamBytes < 1 || chunkBytes < 1 || taskBytes < chunkBytes) {
            throw new IllegalArgumentException(
                    "stream "
                            + streamBytes
                            + " B, task "
                            + taskBytes
                            + " B, chunk "
                            + chunkBytes
                            + " B: all positive, a task at least a chunk");
        }
        if (count < 1 || index < 0 || index >= count) {
            throw new IllegalArgumentException(
                    "share " + index + " of " + count + ": the index from 0 to count - 1");
        }
        long firstTask = index;
        return new ChunkNumbering(
                chunkBytes,
                streamBytes,
                taskBytes,
                index,
                count,
                firstTask * chunksPerTask(taskBytes, chunkBytes));
    }

    /** The one writer of an unbounded stream in chunks of {@code chunkBytes}. */
    static ChunkNumbering unbounded(int chunkBytes) {
        if (chunkBytes < 1) {
            throw new IllegalArgumentException("chunk: at least 1 byte, got " + chunkBytes);
        }
        return new ChunkNumbering(chunkBytes, -1, 0, 0, 1, 0);
    }

    /** Whether the stream's length is known: a share of a sized stream. */
    boolean isSized() {
        return streamBytes >= 0;
    }

    /** The bytes this writer writes in all: its tasks' (sized), else {@link Long#MAX_VALUE}. */
    long shareBytes() {
        return shareBytes;
    }

    /** Whether a chunk is left to fill: false once a sized share is complete. */
    boolean hasChunk() {
        return !isSized() || task < tasks;
    }

    /** The seq of the chunk to fill. */
    long seq() {
        return seq;
    }

    /** The length of the chunk to fill: the chunk size, or less for a task's last chunk. */
    int length() {
        if (!isSized()) {
            return chunkBytes;
        }
        return (int) Math.min(chunkBytes, taskLength(task) - chunkInTask * chunkBytes);
    }

    /** Whether the chunk to fill is the last of a sized stream (the last of its last task). */
    boolean eos() {
        return isSized() && task == tasks - 1 && chunkInTask == chunksInTask(task) - 1;
    }

    /** The task of the chunk to fill (sized). */
    long task() {
        return task;
    }

    /** Moves to the next chunk: the task's next, or the first of this writer's next task. */
    void advance() {
        seq++;
        if (!isSized()) {
            return;
        }
        chunkInTask++;
        if (chunkInTask == chunksInTask(task)) {
            task += count;
            chunkInTask = 0;
            seq = task * chunksPerTask;
        }
    }

    /**
     * The payload bytes of the chunks that go out when {@code more} bytes follow the {@code filled}
     * bytes of the chunk to fill: the chunks they complete (sized), or the full chunks a byte
     * follows (unbounded: the last chunk waits, it may end the stream).
     */
    long bytesSentBy(int filled, long more) {
        if (!isSized()) {
            long total = filled + more;
            return total == 0 ? 0 : (total - 1) / chunkBytes * chunkBytes;
        }
        ChunkNumbering ahead = copy();
        long sent = 0;
        long left = more;
        long inChunk = filled;
        while (ahead.hasChunk() && left > 0 && left >= ahead.length() - inChunk) {
            left -= ahead.length() - inChunk;
            sent += ahead.length();
            inChunk = 0;
            ahead.advance();
        }
        return sent;
    }

    private ChunkNumbering copy() {
        ChunkNumbering copy =
                new ChunkNumbering(
                        chunkBytes, streamBytes, taskBytes, (int) (task % count), count, seq);
        copy.task = task;
        copy.chunkInTask = chunkInTask;
        return copy;
    }

    private long taskLength(long t) {
        return Math.min(taskBytes, streamBytes - t * taskBytes);
    }

    private long chunksInTask(long t) {
        return ceilDiv(taskLength(t), chunkBytes);
    }

    /**
     * How many seqs each task of a stream takes: task {@code t} starts at {@code t} times this. The
     * readers' progress finds the tasks' ends with it too.
     */
    public static long chunksPerTask(long taskBytes, long chunkBytes) {
        return ceilDiv(taskBytes, chunkBytes);
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
