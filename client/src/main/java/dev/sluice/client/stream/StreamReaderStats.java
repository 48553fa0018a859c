package dev.sluice.client.stream;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A snapshot of a {@link StreamReader}'s delivery, safe to take from any thread.
 *
 * @param chunks chunks handed out to the application
 * @param bytes payload bytes of those chunks
 * @param starvationEvents paced readers: chunks that were not there yet at their due time (seed 001
 *     §2.4's starvation); always 0 unpaced
 * @param starvedNanos paced readers: the time those chunks came late, summed (from each one's due
 *     time until it came)
 * @param targetRateBytesPerSecond the pacing rate, empty when the reader is not paced
 * @param achievedRateBytesPerSecond the rate the chunks were handed out at: the bytes of every
 *     chunk before the latest, over the time from the first handout to the latest. A chunk is
 *     consumed in the interval after its handout, so at a kept schedule this is the target rate; 0
 *     before the second chunk
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
        boolean endOfStream,
        long gapsReported,
        Optional<ChunkGap> currentGap,
        long progressRecordsSent,
        long progressSendFailures) {}
