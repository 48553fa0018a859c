package dev.sluice.client.progress;

import dev.sluice.client.annotation.Internal;
import java.util.Arrays;

/**
 * How far a stream has been delivered, from its readers' progress records (docs/formats.md,
 * "Delivery progress"): each reader's latest {@code deliveredSeq}, bytes and end under the latest
 * reader count, the stream's delivered seq (the smallest of its readers', a reader not heard from
 * counting as -1), its delivered bytes (the sum of theirs) and whether every reader reached its
 * end.
 *
 * <p>Progress only grows: an older or repeated record changes nothing, and the delivered seq never
 * goes back, also when the stream's readers are replaced by a different number of readers (those
 * not heard from under the new count are at -1 until they report). The sink's writers and the
 * generation scheduler both follow streams with it.
 *
 * <p>Not thread-safe.
 */
@Internal
public final class StreamDeliveryState {
    private long deliveredSeq = -1;
    // Per reader, from the latest reader count heard; null before the first record.
    private long[] readerSeq;
    private long[] readerBytes;
    private boolean[] readerEnded;

    /** Applies one reader's record; returns whether the stream's delivered seq grew. */
    public boolean update(DeliveryProgress progress) {
        int count = progress.readerCount();
        if (readerSeq == null || readerSeq.length != count) {
            readerSeq = new long[count];
            Arrays.fill(readerSeq, -1);
            readerBytes = new long[count];
            readerEnded = new boolean[count];
        }
        int i = progress.readerIndex();
        readerSeq[i] = Math.max(readerSeq[i], progress.deliveredSeq());
        readerBytes[i] = Math.max(readerBytes[i], progress.deliveredBytes());
        readerEnded[i] |= progress.endOfStream();
        long min = Arrays.stream(readerSeq).min().orElseThrow();
        if (min > deliveredSeq) {
            deliveredSeq = min;
            return true;
        }
        return false;
    }

    /** The seq up to which every reader is done: -1 before that of the first chunk. */
    public long deliveredSeq() {
        return deliveredSeq;
    }

    /** The payload bytes delivered, summed over the readers. */
    public long deliveredBytes() {
        return readerBytes == null ? 0 : Arrays.stream(readerBytes).sum();
    }

    /** How many readers share the stream, by the latest record; 0 before the first. */
    public int readerCount() {
        return readerSeq == null ? 0 : readerSeq.length;
    }

    /** Whether reader {@code index} reached the stream's end. */
    public boolean hasEnded(int index) {
        return readerEnded != null && index < readerEnded.length && readerEnded[index];
    }

    /** Whether every reader reached the stream's end; false before the first record. */
    public boolean allEnded() {
        if (readerEnded == null) {
            return false;
        }
        for (boolean ended : readerEnded) {
            if (!ended) {
                return false;
            }
        }
        return true;
    }
}
