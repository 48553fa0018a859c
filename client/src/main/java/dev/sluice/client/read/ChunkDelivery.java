package dev.sluice.client.read;

import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.protocol.StreamGap;
import dev.sluice.client.time.NanoClock;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;

/**
 * The reader's logic over a {@link ChunkSource}, apart from any I/O: which chunks are this reader's
 * (its residue class of {@code seq} when the stream is shared), when each is due (pacing),
 * starvation, the holes the daemon reported, the end of the stream, and the delivery progress.
 * Single-threaded, like the reader; only {@link #stats} may be called from another thread.
 */
final class ChunkDelivery {
    private final String job;
    private final String stream;
    private final ChunkSource source;
    private final NanoClock clock;
    private final Pacer pacer;
    private final int readerIndex;
    private final int readerCount;
    private final Consumer<DeliveryProgress> progressListener;

    // The seq the source must give next: the stream is walked in order, without holes.
    private long expectedSeq;
    // The highest seq this reader is done with, every one below it too: -1 before the first.
    private long deliveredSeq = -1;
    private long deliveredBytes;
    private boolean ended;
    private boolean sourceClosed;
    private boolean closed;
    private StreamChunk held;

    // Holes the daemon reported, not told yet: each is thrown once this reader has got to it.
    private final ArrayDeque<StreamGap> gaps = new ArrayDeque<>();
    // The hole told last, until a chunk past it comes.
    private StreamGap currentGap;

    // Silence: how long a stream that began may bring no chunk while the reader waits before it
    // is told (0: never), since when it has waited with nothing to take (-1: it has not), and
    // whether this silence was told. Counted from the reader's wait, not the last chunk's
    // arrival: an application that paused finds the chunks that came meanwhile first.
    private final long silenceNanos;
    private long dryNanos = -1;
    private boolean silenceTold;

    // Pacing: the chunk being waited for was not there at its due time. Its starvation counts from
    // then, or from the acquire that found it missing when the application came later: the
    // application's own pause is lateness, not starvation (docs/stream-reader.md, "Starvation").
    private boolean starving;
    private long starvingDueNanos;
    private long starvingSinceNanos;
    // Pacing: the first chunk, held back until the start delay after it came.
    private final long startDelayNanos;
    private ChunkSource.Chunk first;
    private long firstDueNanos;
    private long startBufferBytes;
    // Pacing: this reader's chunks in hand after the one handed out last, at that handout.
    private long bufferedBytes;
    // Pacing: each chunk's handout time past its due time. Guarded by itself: stats() reads it
    // from other threads.
    private final LatenessHistogram lateness = new LatenessHistogram();

    // Counters, published as one snapshot for other threads.
    private long chunks;
    private long bytes;
    private long starvationEvents;
    private long starvedNanos;
    private long firstHandoutNanos;
    private long latestHandoutNanos;
    private long bytesBeforeLatest;
    private long latestSize;
    private long gapsReported;
    private volatile StreamReaderStats snapshot;

    ChunkDelivery(
            String job,
            String stream,
            ChunkSource source,
            NanoClock clock,
            long rateBytesPerSecond,
            long startDelayNanos,
            long silenceNanos,
            int readerIndex,
            int readerCount,
            Consumer<DeliveryProgress> progressListener) {
        this.job = job;
        this.silenceNanos = silenceNanos;
        this.stream = stream;
        this.source = source;
        this.clock = clock;
        this.pacer = rateBytesPerSecond > 0 ? new Pacer(rateBytesPerSecond) : null;
        this.startDelayNanos = pacer == null ? 0 : startDelayNanos;
        this.readerIndex = readerIndex;
        this.readerCount = readerCount;
        this.progressListener = progressListener;
        publishStats();
        progressListener.accept(progress());
    }

    String job() {
        return job;
    }

    String stream() {
        return stream;
    }

    /**
     * This reader's next chunk, once it is due; null if the wait ran out first or the stream ended.
     *
     * @throws StreamGapException once per hole the daemon reported, when this reader waits at it
     * @throws StreamSilentException once per silence of the stream, begun and not ended, past the
     *     silence timeout
     */
    StreamChunk acquire(long timeoutNanos) throws IOException {
        if (closed) {
            throw new IllegalStateException("the reader is closed");
        }
        if (held != null) {
            throw new IllegalStateException(
                    "release chunk " + held.seq() + " before acquiring the next");
        }
        if (ended) {
            return null;
        }
        long now = clock.nanoTime();
        long deadline = now + Math.max(0, timeoutNanos);
        if (startDelayNanos > 0 && !pacer.started()) {
            return acquireFirst(now, deadline);
        }
        if (pacer != null && pacer.started() && !starving) {
            long due = pacer.nextDueNanos();
            if (!parkUntil(due, deadline)) {
                return null;
            }
            // Due: is it there?
            ChunkSource.Chunk chunk = nextOwn(0);
            if (chunk != null) {
                return handOut(chunk, clock.nanoTime());
            }
            if (ended) {
                return null;
            }
            starving = true;
            starvingDueNanos = due;
            starvingSinceNanos = Math.max(due, now);
            starvationEvents++;
            publishStats();
        }
        ChunkSource.Chunk chunk = nextOwn(deadline - clock.nanoTime());
        return chunk == null ? null : handOut(chunk, clock.nanoTime());
    }

    /**
     * The first chunk, handed out the start delay after it came: the schedule then starts with what
     * came meanwhile in hand, as a player fills its buffer before it plays.
     */
    private StreamChunk acquireFirst(long now, long deadline) throws IOException {
        if (first == null) {
            first = nextOwn(deadline - now);
            if (first == null) {
                return null;
            }
            firstDueNanos = clock.nanoTime() + startDelayNanos;
        }
        if (!parkUntil(firstDueNanos, deadline)) {
            return null;
        }
        ChunkSource.Chunk chunk = first;
        first = null;
        return handOut(chunk, clock.nanoTime());
    }

    /** Parks until {@code due}; false if {@code deadline} comes first. */
    private boolean parkUntil(long due, long deadline) {
        long now = clock.nanoTime();
        while (due - now > 0) {
            if (deadline - now <= 0) {
                return false;
            }
            clock.parkNanos(Math.min(due - now, deadline - now));
            now = clock.nanoTime();
        }
        return true;
    }

    /**
     * Walks the stream up to this reader's next chunk, passing the other readers' chunks; null if
     * it did not come within {@code timeoutNanos} or the stream ended.
     */
    private ChunkSource.Chunk nextOwn(long timeoutNanos) throws IOException {
        long deadline = clock.nanoTime() + Math.max(0, timeoutNanos);
        while (true) {
            tellGap();
            long waitStart = clock.nanoTime();
            long wait = deadline - waitStart;
            if (watchesSilence()) {
                // Wakes when the silence is due to be told, if the caller's wait is longer.
                long dry = dryNanos >= 0 ? dryNanos : waitStart;
                wait = Math.min(wait, dry + silenceNanos - waitStart);
            }
            ChunkSource.Chunk chunk = source.next(Math.max(0, wait));
            if (chunk == null) {
                if (dryNanos < 0) {
                    dryNanos = waitStart;
                }
                if (takeGaps()) {
                    // A report woke the wait: told above if this reader is at its hole.
                    continue;
                }
                tellSilence();
                if (watchesSilence() && deadline - clock.nanoTime() > 0) {
                    continue;
                }
                return null;
            }
            dryNanos = -1;
            silenceTold = false;
            if (chunk.seq() != expectedSeq) {
                long seq = chunk.seq();
                chunk.done();
                throw new IOException(
                        "stream "
                                + job
                                + "/"
                                + stream
                                + ": chunk "
                                + Long.toUnsignedString(seq)
                                + " came where "
                                + Long.toUnsignedString(expectedSeq)
                                + " was due; the daemon delivers every stream in seq order from 0");
            }
            expectedSeq++;
            if (currentGap != null
                    && Long.compareUnsigned(expectedSeq, currentGap.missingTo()) > 0) {
                // The hole is filled.
                currentGap = null;
                publishStats();
            }
            if (Long.remainderUnsigned(chunk.seq(), readerCount) == readerIndex) {
                return chunk;
            }
            // Another reader's: passed by.
            boolean last = chunk.isEndOfStream();
            deliveredSeq = chunk.seq();
            chunk.done();
            if (last) {
                end();
                return null;
            }
            progressListener.accept(progress());
        }
    }

    /** Whether a silence may still be told: the stream began, has not ended, was not told. */
    private boolean watchesSilence() {
        return silenceNanos > 0 && expectedSeq > 0 && !ended && !silenceTold;
    }

    /**
     * Throws once when the stream, begun and not ended, brought no chunk while the reader waited
     * for the silence timeout: its writer may be gone, with no later chunk for the daemon to report
     * a gap by.
     */
    private void tellSilence() throws StreamSilentException {
        long silent = clock.nanoTime() - dryNanos;
        if (watchesSilence() && dryNanos >= 0 && silent >= silenceNanos) {
            silenceTold = true;
            throw new StreamSilentException(job, stream, expectedSeq, silent);
        }
    }

    /** Moves the source's gap reports here; whether there was one. */
    private boolean takeGaps() {
        boolean took = false;
        for (StreamGap gap; (gap = source.takeGap()) != null; ) {
            gaps.add(gap);
            took = true;
        }
        return took;
    }

    /**
     * Throws the oldest reported hole once this reader waits at it. Every reader of the stream
     * walks every {@code seq}, so each one waits at the hole, whichever residue class the missing
     * chunks are in. A report that came before the chunks below its hole waits for them; one whose
     * hole was filled before it came is dropped, as no reader waits there anymore.
     */
    private void tellGap() throws StreamGapException {
        for (StreamGap gap; (gap = gaps.peek()) != null; ) {
            if (Long.compareUnsigned(expectedSeq, gap.missingFrom()) < 0) {
                return;
            }
            gaps.poll();
            if (Long.compareUnsigned(expectedSeq, gap.missingTo()) <= 0) {
                currentGap = gap;
                gapsReported++;
                publishStats();
                throw new StreamGapException(gap);
            }
        }
    }

    private StreamChunk handOut(ChunkSource.Chunk chunk, long now) {
        int size = chunk.size();
        if (pacer != null) {
            if (starving) {
                starvedNanos += Math.max(0, now - starvingSinceNanos);
            }
            bufferedBytes = source.bytesWaiting(readerIndex, readerCount);
            recordLateness(chunk, now);
            pacer.handedOut(size, now, starving);
        }
        starving = false;
        if (chunks == 0) {
            firstHandoutNanos = now;
        } else {
            bytesBeforeLatest += latestSize;
        }
        latestHandoutNanos = now;
        latestSize = size;
        chunks++;
        bytes += size;
        held = new StreamChunk(this, chunk);
        publishStats();
        return held;
    }

    /**
     * Records how late {@code chunk} is handed out at {@code now}: past its due time on the
     * schedule, or for the first chunk past the end of the start delay (its arrival without one).
     * Called before the pacer moves on to the next due time, once {@code bufferedBytes} is the
     * bytes in hand behind {@code chunk}.
     */
    private void recordLateness(ChunkSource.Chunk chunk, long now) {
        long due;
        if (!pacer.started()) {
            due = startDelayNanos > 0 ? firstDueNanos : now;
            startBufferBytes = chunk.size() + bufferedBytes;
        } else if (starving) {
            due = starvingDueNanos;
        } else {
            due = pacer.nextDueNanos();
        }
        synchronized (lateness) {
            lateness.record(now - due);
        }
    }

    void release(StreamChunk chunk, ChunkSource.Chunk sourceChunk) throws IOException {
        if (chunk != held) {
            throw new IllegalStateException("chunk " + chunk.seq() + " is not held");
        }
        held = null;
        deliveredSeq = sourceChunk.seq();
        deliveredBytes += sourceChunk.size();
        boolean last = sourceChunk.isEndOfStream();
        sourceChunk.done();
        if (last) {
            end();
        } else {
            progressListener.accept(progress());
        }
    }

    private void end() throws IOException {
        ended = true;
        publishStats();
        progressListener.accept(progress());
        // Nothing more will come: give the daemon its subscription back now.
        closeSource();
    }

    boolean isEndOfStream() {
        return ended;
    }

    boolean isClosed() {
        return closed;
    }

    DeliveryProgress progress() {
        return new DeliveryProgress(
                job, stream, readerIndex, readerCount, deliveredSeq, deliveredBytes, ended);
    }

    /** The delivery counters, with the progress reporter's. */
    StreamReaderStats stats(long progressRecordsSent, long progressSendFailures) {
        StreamReaderStats s = snapshot;
        long p50;
        long p99;
        long max;
        // A walk of the histogram's buckets, at most about a thousand: light enough for a progress
        // bar's every call, and nothing per chunk.
        synchronized (lateness) {
            p50 = lateness.percentile(50);
            p99 = lateness.percentile(99);
            max = lateness.max();
        }
        return new StreamReaderStats(
                s.chunks(),
                s.bytes(),
                s.starvationEvents(),
                s.starvedNanos(),
                s.targetRateBytesPerSecond(),
                s.achievedRateBytesPerSecond(),
                p50,
                p99,
                max,
                s.startDelayNanos(),
                s.startBufferBytes(),
                s.bufferedBytes(),
                s.endOfStream(),
                s.gapsReported(),
                s.currentGap(),
                progressRecordsSent,
                progressSendFailures);
    }

    private void publishStats() {
        long elapsed = latestHandoutNanos - firstHandoutNanos;
        double achieved = chunks < 2 || elapsed <= 0 ? 0 : bytesBeforeLatest * 1e9 / elapsed;
        snapshot =
                new StreamReaderStats(
                        chunks,
                        bytes,
                        starvationEvents,
                        starvedNanos,
                        pacer == null
                                ? OptionalLong.empty()
                                : OptionalLong.of(pacer.rateBytesPerSecond()),
                        achieved,
                        0,
                        0,
                        0,
                        startDelayNanos,
                        startBufferBytes,
                        bufferedBytes,
                        ended,
                        gapsReported,
                        Optional.ofNullable(currentGap),
                        0,
                        0);
    }

    /** Releases a held chunk and closes the source; idempotent. */
    void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        held = null;
        closeSource();
    }

    private void closeSource() throws IOException {
        if (!sourceClosed) {
            sourceClosed = true;
            source.close();
        }
    }
}
