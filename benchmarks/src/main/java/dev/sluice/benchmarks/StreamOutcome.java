package dev.sluice.benchmarks;

import dev.sluice.client.read.StreamReaderStats;
import java.util.Locale;

/**
 * One stream's delivery in a generation run, from its reader's {@link StreamReaderStats}
 * (docs/stream-reader.md): what the benchmark's tables report per stream. Lateness and the start
 * delay are 0 for an unpaced reader.
 *
 * @param achievedBytesPerSecond the rate the chunks were handed out at
 * @param starvationEvents chunks that were not there at their due time
 * @param latenessP50Nanos median of each chunk's handout time past its due time
 * @param latenessP99Nanos its 99th percentile
 * @param latenessMaxNanos the latest chunk's
 * @param startDelayNanos the start buffer the reader used
 */
record StreamOutcome(
        double achievedBytesPerSecond,
        long starvationEvents,
        long latenessP50Nanos,
        long latenessP99Nanos,
        long latenessMaxNanos,
        long startDelayNanos) {

    static StreamOutcome of(StreamReaderStats stats) {
        return new StreamOutcome(
                stats.achievedRateBytesPerSecond(),
                stats.starvationEvents(),
                stats.latenessP50Nanos(),
                stats.latenessP99Nanos(),
                stats.latenessMaxNanos(),
                stats.startDelayNanos());
    }

    /** The fields separated by colons, as {@link #parse} reads them: one token of a result line. */
    String token() {
        return String.format(
                Locale.ROOT,
                "%.0f:%d:%d:%d:%d:%d",
                achievedBytesPerSecond,
                starvationEvents,
                latenessP50Nanos,
                latenessP99Nanos,
                latenessMaxNanos,
                startDelayNanos);
    }

    static StreamOutcome parse(String token) {
        String[] fields = token.split(":");
        if (fields.length != 6) {
            throw new IllegalArgumentException(
                    "a stream's outcome has 6 fields separated by ':', got '" + token + "'");
        }
        return new StreamOutcome(
                Double.parseDouble(fields[0]),
                Long.parseLong(fields[1]),
                Long.parseLong(fields[2]),
                Long.parseLong(fields[3]),
                Long.parseLong(fields[4]),
                Long.parseLong(fields[5]));
    }
}
