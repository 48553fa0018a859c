package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.OptionalLong;

/**
 * One output stream of a job: an ordered run of bytes with a start and an end, delivered to one
 * output-location node.
 *
 * @param name the stream's name within its job; it is the {@code sluice.stream} header of its
 *     chunks
 * @param outputLocation the id of the node that reads the stream (where the printer driver runs)
 * @param split which part of the job's output the stream carries
 * @param sizeBytes the stream's length. Known up front (a raster's size follows from sheet size and
 *     resolution), it lets the scheduler cut tasks progressively and know when the stream is done
 * @param rateBytesPerSecond the constant speed the reader consumes at, if the job sets one
 * @param chunkSizeBytes the largest chunk record of the stream
 */
@PublicEvolving
public record StreamSpec(
        String name,
        String outputLocation,
        SplitRule split,
        long sizeBytes,
        OptionalLong rateBytesPerSecond,
        int chunkSizeBytes) {

    /**
     * 512 KiB: a chunk of 1 MiB is 1 MiB and its headers as a record, above a stock Kafka's limits
     * (the producer's {@code max.request.size}, 1048576 bytes, and the topic's {@code
     * max.message.bytes}, 1048588), while 512 KiB with the longest names still fits, and divides
     * the default task (docs/formats.md, "Job spec").
     */
    public static final int DEFAULT_CHUNK_SIZE_BYTES = 512 << 10;

    public static final int MIN_CHUNK_SIZE_BYTES = 1 << 10;
    public static final int MAX_CHUNK_SIZE_BYTES = 64 << 20;

    public StreamSpec {
        Names.check("name", name);
        Names.check("outputLocation", outputLocation);
        if (split == null) {
            throw new JobSpecException("split", "is required");
        }
        if (sizeBytes < 1) {
            throw new JobSpecException("sizeBytes", "must be positive, got " + sizeBytes);
        }
        if (rateBytesPerSecond == null) {
            throw new JobSpecException("rateBytesPerSecond", "is required, possibly empty");
        }
        if (rateBytesPerSecond.isPresent() && rateBytesPerSecond.getAsLong() < 1) {
            throw new JobSpecException(
                    "rateBytesPerSecond",
                    "must be positive, got " + rateBytesPerSecond.getAsLong());
        }
        if (chunkSizeBytes < MIN_CHUNK_SIZE_BYTES || chunkSizeBytes > MAX_CHUNK_SIZE_BYTES) {
            throw new JobSpecException(
                    "chunkSizeBytes",
                    "must be between "
                            + MIN_CHUNK_SIZE_BYTES
                            + " and "
                            + MAX_CHUNK_SIZE_BYTES
                            + ", got "
                            + chunkSizeBytes);
        }
    }

    /** A stream without a rate, in chunks of the default size. */
    public StreamSpec(String name, String outputLocation, SplitRule split, long sizeBytes) {
        this(
                name,
                outputLocation,
                split,
                sizeBytes,
                OptionalLong.empty(),
                DEFAULT_CHUNK_SIZE_BYTES);
    }
}
