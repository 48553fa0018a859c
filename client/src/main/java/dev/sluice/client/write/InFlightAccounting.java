package dev.sluice.client.write;

import dev.sluice.client.annotation.Internal;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.StreamDeliveryState;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * One sink writer's bytes in flight per stream: the payload bytes of the chunks it wrote that the
 * stream's readers have not been delivered yet, bounded by its share of the stream's cap.
 *
 * <p>A stream has been delivered up to the smallest {@code deliveredSeq} of its readers (a reader
 * not heard from counts as -1), and its delivered bytes are the sum of theirs (docs/formats.md,
 * "Delivery progress"), as {@link StreamDeliveryState} follows them. A writer sees only its own
 * chunks of a stream, so it counts by {@code seq}: its chunk {@code s} is in flight while {@code s}
 * is above the stream's delivered seq. Progress only grows: an older or repeated record changes
 * nothing, and the delivered seq never goes back, also when the stream's readers are replaced by a
 * different number of readers.
 *
 * <p>A chunk at or below the delivered seq is a duplicate (a replay after a restore) that the
 * daemon drops: it is never in flight. Once every reader reached the end of a stream, the stream is
 * forgotten, and its last seq remembered (the latest {@value #FINISHED_REMEMBERED} streams) so that
 * a late replay does not count either.
 *
 * <p>Not thread-safe: the writer's task thread owns it.
 */
@Internal
public final class InFlightAccounting {
    /**
     * The cap formula's tasks per producer: docs/sluice-sink.md ("Bounded buffering") wants a
     * reader's buffer to hold at least producers × chunk; here the unit is a task (what a producer
     * computes at once), four of them, so a producer goes on to its next tasks while the reader
     * works through the previous ones (docs/sluice-sink.md, "Bounded buffering").
     */
    public static final int TASKS_PER_PRODUCER = 4;

    /** The formula's upper bound on a stream's bytes in flight unless configured: 256 MiB. */
    public static final long DEFAULT_MAX_BYTES_PER_STREAM = 256L << 20;

    static final int FINISHED_REMEMBERED = 4096;

    private final long share;
    private final Map<String, StreamState> streams = new HashMap<>();
    private final Map<String, Long> finished =
            new LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
                    return size() > FINISHED_REMEMBERED;
                }
            };
    private long bytesInFlight;
    private int streamsInFlight;

    /**
     * @param share the bytes this writer may have in flight per stream: a chunk is admitted while
     *     it fits beside those already in flight, or when none are
     */
    public InFlightAccounting(long share) {
        if (share < 1) {
            throw new IllegalArgumentException("share: at least 1 byte, got " + share);
        }
        this.share = share;
    }

    /**
     * The cap on a stream's bytes in flight over {@code producers} writers by the formula: {@code
     * maxTaskSizeBytes × producers × }{@value #TASKS_PER_PRODUCER}, at most {@code maxCap}.
     */
    public static long capPerStream(long maxTaskSizeBytes, int producers, long maxCap) {
        long perProducer = maxTaskSizeBytes * TASKS_PER_PRODUCER;
        long formula =
                perProducer > Long.MAX_VALUE / producers ? Long.MAX_VALUE : perProducer * producers;
        return Math.min(formula, maxCap);
    }

    /** The key of a stream: {@code job/stream}, as on the progress topic. */
    public static String key(String job, String stream) {
        return job + "/" + stream;
    }

    public long share() {
        return share;
    }

    /**
     * Whether chunk {@code seq} of {@code bytes} may be written now: it fits in the stream's share
     * beside the bytes in flight, or nothing is in flight (a chunk larger than the share goes
     * alone), or it was delivered already.
     */
    public boolean admits(String key, long seq, long bytes) {
        if (isDelivered(key, seq)) {
            return true;
        }
        StreamState state = streams.get(key);
        long inFlight = state == null ? 0 : state.pendingBytes;
        return inFlight == 0 || inFlight + bytes <= share;
    }

    /** Counts chunk {@code seq} of {@code bytes} as in flight unless it was delivered already. */
    public void written(String key, long seq, long bytes) {
        if (isDelivered(key, seq)) {
            return;
        }
        StreamState state = streams.computeIfAbsent(key, k -> new StreamState());
        Long before = state.pending.put(seq, bytes);
        if (state.pending.size() == 1 && before == null) {
            streamsInFlight++;
        }
        long delta = bytes - (before == null ? 0 : before);
        state.pendingBytes += delta;
        bytesInFlight += delta;
    }

    /** Applies a reader's progress: what it frees is no longer in flight. */
    public void progress(DeliveryProgress progress) {
        String key = progress.key();
        if (finished.containsKey(key)) {
            return;
        }
        StreamState state = streams.computeIfAbsent(key, k -> new StreamState());
        if (state.delivery.update(progress)) {
            NavigableMap<Long, Long> done =
                    state.pending.headMap(state.delivery.deliveredSeq(), true);
            if (!done.isEmpty()) {
                long freed = 0;
                for (long bytes : done.values()) {
                    freed += bytes;
                }
                done.clear();
                state.pendingBytes -= freed;
                bytesInFlight -= freed;
                if (state.pending.isEmpty()) {
                    streamsInFlight--;
                }
            }
        }
        if (state.delivery.allEnded()) {
            // Nothing above the last seq is ever delivered: a chunk written past the end is not
            // the stream's (the daemon dead-letters it), so nothing of the stream counts anymore.
            if (!state.pending.isEmpty()) {
                bytesInFlight -= state.pendingBytes;
                streamsInFlight--;
            }
            streams.remove(key);
            finished.put(key, state.delivery.deliveredSeq());
        }
    }

    /**
     * Drops the stream's chunks in flight, bytes and count, and keeps what is known of its
     * delivery: they were lost on their way (a local channel's daemon went away before taking
     * them), not delivered, and the generation scheduler computes their tasks again
     * (docs/generation.md, "Recovery"). Without this, a writer whose share is full of lost chunks
     * would wait forever for progress that never comes.
     */
    public void forget(String key) {
        StreamState state = streams.get(key);
        if (state == null || state.pending.isEmpty()) {
            return;
        }
        bytesInFlight -= state.pendingBytes;
        streamsInFlight--;
        state.pending.clear();
        state.pendingBytes = 0;
    }

    private boolean isDelivered(String key, long seq) {
        if (finished.containsKey(key)) {
            return true;
        }
        StreamState state = streams.get(key);
        return state != null && seq <= state.delivery.deliveredSeq();
    }

    /** This writer's bytes in flight, all streams. */
    public long bytesInFlight() {
        return bytesInFlight;
    }

    /** This writer's bytes in flight of one stream. */
    public long bytesInFlight(String key) {
        StreamState state = streams.get(key);
        return state == null ? 0 : state.pendingBytes;
    }

    /** The seq up to which the stream has been delivered: -1 before the first, or unheard of. */
    public long deliveredSeq(String key) {
        Long last = finished.get(key);
        if (last != null) {
            return last;
        }
        StreamState state = streams.get(key);
        return state == null ? -1 : state.delivery.deliveredSeq();
    }

    /** The payload bytes the stream's readers have been delivered, summed over the readers. */
    public long deliveredBytes(String key) {
        StreamState state = streams.get(key);
        return state == null ? 0 : state.delivery.deliveredBytes();
    }

    /** Whether every reader of the stream reached its end. */
    public boolean isFinished(String key) {
        return finished.containsKey(key);
    }

    /** Streams with chunks in flight. */
    public int streamsInFlight() {
        return streamsInFlight;
    }

    /** Streams followed: written to or heard of, and not finished. */
    public int streamsTracked() {
        return streams.size();
    }

    private static final class StreamState {
        // This writer's chunks above the delivered seq: seq → payload bytes.
        final TreeMap<Long, Long> pending = new TreeMap<>();
        long pendingBytes;
        final StreamDeliveryState delivery = new StreamDeliveryState();
    }
}
