package dev.sluice.client.read;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.protocol.StreamGap;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A snapshot of a {@link StreamReader}'s delivery, safe to take from any thread.
 *
 * @param chunks chunks handed out to the application
 * @param bytes payload bytes of those chunks
 * @param starvationEvents paced readers: chunks that were not there yet at their due time
 *     (docs/stream-reader.md, "Constant speed"); always 0 unpaced
 * @param starvedNanos paced readers: the time the reader waited for those chunks, summed (from each
 *     one's due time, or the later call that found it missing, until it came: the application's own
 *     pauses are not counted)
 * @param targetRateBytesPerSecond the pacing rate, empty when the reader is not paced
 * @param achievedRateBytesPerSecond the rate the chunks were handed out at: the bytes of every
 *     chunk before the latest, over the time from the first handout to the latest. A chunk is
 *     consumed in the interval after its handout, so at a kept schedule this is the target rate; 0
 *     before the second chunk
 * @param latenessP50Nanos paced readers: the median of the chunks' lateness, each one's handout
 *     time past its due time (on the schedule; the first chunk's is the end of the start delay), 0
 *     if on time. It counts both a chunk that came after its due time and the reader's own wake-up
 *     overshoot: what the application experiences. Within 1/64 (docs/stream-reader.md, "Lateness
 *     and the start buffer"); 0 unpaced or before the first chunk
 * @param latenessP99Nanos paced readers: the 99th percentile of the chunks' lateness, as above
 * @param latenessMaxNanos paced readers: the largest lateness of a chunk, exact
 * @param startDelayNanos paced readers: the start buffer used, how long after it came the first
 *     chunk was handed out ({@link StreamReaderBuilder#startDelay}, by default one task of the
 *     stream at its rate when built from a job spec); 0 unpaced
 * @param startBufferBytes paced readers: the bytes of this reader's chunks that were there when its
 *     first chunk was handed out, that one included: what the start delay gathered in hand; 0
 *     unpaced or before the first chunk
 * @param bufferedBytes paced readers: the bytes of this reader's chunks in hand after the one
 *     handed out last, at that handout: how far the stream ran ahead of the application, which over
 *     the target rate is the seconds it can still go without a chunk coming before it starves; 0
 *     unpaced or before the first chunk
 * @param endOfStream whether the reader has reached the end of the stream
 * @param gapsReported holes in the stream the daemon reported and {@link StreamReader#acquire}
 *     threw as a {@link StreamGapException}, once each
 * @param currentGap the hole thrown last while the reader still waits for its missing chunks; empty
 *     once a chunk past it came, or if none was reported
 * @param progressRecordsSent delivery-progress records the broker acknowledged
 * @param progressSendFailures delivery-progress records that could not be sent (logged; the next
 *     one carries the same information, newer)
 */
@PublicEvolving
public record StreamReaderStats(
        long chunks,
        long bytes,
        long starvationEvents,
        long starvedNanos,
        OptionalLong targetRateBytesPerSecond,
        double achievedRateBytesPerSecond,
        long latenessP50Nanos,
        long latenessP99Nanos,
        long latenessMaxNanos,
        long startDelayNanos,
        long startBufferBytes,
        long bufferedBytes,
        boolean endOfStream,
        long gapsReported,
        Optional<StreamGap> currentGap,
        long progressRecordsSent,
        long progressSendFailures) {}
