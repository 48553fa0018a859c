package dev.sluice.client.progress;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.read.StreamReader;
import dev.sluice.client.read.StreamReaderBuilder;

/**
 * How far one reader of a stream has got: what the generation side needs to bound the bytes it has
 * in flight for the stream. {@link StreamReader} publishes it on the progress topic (default
 * {@value #DEFAULT_TOPIC}) keyed by {@code job/stream}; {@link DeliveryProgressCodec} writes and
 * reads the bytes, specified in docs/formats.md, "Delivery progress".
 *
 * <p>A stream read by {@code readerCount} readers ({@link StreamReaderBuilder#share}) gets one
 * record per reader; the stream has been delivered up to the smallest {@code deliveredSeq} of its
 * readers, and its delivered bytes are the sum of theirs (each chunk belongs to one reader).
 *
 * @param job the job's id
 * @param stream the stream's name within the job
 * @param readerIndex which of the stream's readers this is, from 0
 * @param readerCount how many readers share the stream, at least 1
 * @param deliveredSeq the highest {@code seq} such that this reader is done with every chunk up to
 *     it: its own chunks handed out and released, the other readers' chunks passed by; -1 before
 *     the first
 * @param deliveredBytes payload bytes of this reader's own chunks released so far
 * @param endOfStream whether this reader has reached the end of the stream: {@code deliveredSeq} is
 *     then the stream's last {@code seq}
 * @param resubscribed whether the reader's daemon subscription was renewed since its previous
 *     record (the daemon went away and came back, or ended the subscription): chunks that reached
 *     the daemon only through shared memory and were not delivered are lost, and the scheduler
 *     hands out their tasks again (docs/formats.md, "Delivery progress", version 2)
 */
@PublicEvolving
public record DeliveryProgress(
        String job,
        String stream,
        int readerIndex,
        int readerCount,
        long deliveredSeq,
        long deliveredBytes,
        boolean endOfStream,
        boolean resubscribed) {

    /**
     * The progress topic unless configured otherwise; dashed as the job topics are, and {@code
     * sluice.progress} before (docs/formats.md, "Upgrading from sluice.progress").
     */
    public static final String DEFAULT_TOPIC = "sluice-progress";

    /** Checks every field as {@link DeliveryProgressCodec#decode} does. */
    public DeliveryProgress {
        DeliveryProgressCodec.check(
                job, stream, readerIndex, readerCount, deliveredSeq, deliveredBytes, endOfStream);
    }

    /** A record without {@code resubscribed}: what every record of version 1 is. */
    public DeliveryProgress(
            String job,
            String stream,
            int readerIndex,
            int readerCount,
            long deliveredSeq,
            long deliveredBytes,
            boolean endOfStream) {
        this(
                job,
                stream,
                readerIndex,
                readerCount,
                deliveredSeq,
                deliveredBytes,
                endOfStream,
                false);
    }

    /** This record with {@code resubscribed} set or cleared, every other field the same. */
    public DeliveryProgress withResubscribed(boolean resubscribed) {
        return new DeliveryProgress(
                job,
                stream,
                readerIndex,
                readerCount,
                deliveredSeq,
                deliveredBytes,
                endOfStream,
                resubscribed);
    }

    /** The record's key: {@code job/stream}, so a stream's records stay in order on a partition. */
    public String key() {
        return job + "/" + stream;
    }
}
