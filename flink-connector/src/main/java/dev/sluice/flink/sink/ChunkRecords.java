package dev.sluice.flink.sink;

import dev.sluice.client.stream.ChunkTopics;
import dev.sluice.flink.generation.Chunk;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.regex.Pattern;
import org.apache.flink.annotation.Internal;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.AbstractRecords;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.RecordBatch;

/**
 * A {@link Chunk} as a chunk record (docs/formats.md, "Chunk record"): value = payload, key = the
 * stream's name, headers {@code sluice.job}, {@code sluice.stream}, {@code sluice.seq} (decimal
 * ASCII) and {@code sluice.eos} ({@code true}, on the last chunk only), on the topic of the chunk's
 * output location.
 */
@Internal
public final class ChunkRecords {
    public static final String JOB = "sluice.job";
    public static final String STREAM = "sluice.stream";
    public static final String SEQ = "sluice.seq";
    public static final String EOS = "sluice.eos";

    private static final byte[] TRUE = "true".getBytes(StandardCharsets.US_ASCII);
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");

    private ChunkRecords() {}

    /** The chunk topic of the chunk's output location, {@code sluice.chunks.<outputLocation>}. */
    public static String topic(Chunk chunk) {
        return ChunkTopics.forOutputLocation(chunk.outputLocation());
    }

    /**
     * The record of {@code chunk} for {@code partition}.
     *
     * @throws IllegalArgumentException if the job, stream or output location is not a name (1 to
     *     128 characters of {@code [A-Za-z0-9._-]}): readers could not report its progress
     */
    public static ProducerRecord<byte[], byte[]> record(Chunk chunk, int partition) {
        checkNames(chunk);
        return new ProducerRecord<>(
                topic(chunk),
                partition,
                null,
                chunk.stream().getBytes(StandardCharsets.UTF_8),
                chunk.payload(),
                Arrays.asList(headers(chunk)));
    }

    /**
     * Checks that the chunk's job, stream and output location are names (1 to 128 characters of
     * {@code [A-Za-z0-9._-]}), as the headers, the topic and the progress records need.
     *
     * @throws IllegalArgumentException naming the chunk and the field if not
     */
    public static void checkNames(Chunk chunk) {
        checkName(chunk, "job", chunk.job());
        checkName(chunk, "stream", chunk.stream());
        checkName(chunk, "outputLocation", chunk.outputLocation());
    }

    /** The four (or three) {@code sluice.*} headers of {@code chunk}, in the format's order. */
    public static Header[] headers(Chunk chunk) {
        Header job = new RecordHeader(JOB, chunk.job().getBytes(StandardCharsets.UTF_8));
        Header stream = new RecordHeader(STREAM, chunk.stream().getBytes(StandardCharsets.UTF_8));
        Header seq =
                new RecordHeader(
                        SEQ, Long.toString(chunk.seq()).getBytes(StandardCharsets.US_ASCII));
        return chunk.eos()
                ? new Header[] {job, stream, seq, new RecordHeader(EOS, TRUE)}
                : new Header[] {job, stream, seq};
    }

    /**
     * What the producer counts against {@code max.request.size} for this record: the upper bound
     * {@code KafkaProducer} itself checks before sending.
     */
    public static int serializedSizeUpperBound(
            ProducerRecord<byte[], byte[]> record, CompressionType compression) {
        return AbstractRecords.estimateSizeInBytesUpperBound(
                RecordBatch.CURRENT_MAGIC_VALUE,
                compression,
                record.key(),
                record.value(),
                record.headers().toArray());
    }

    private static void checkName(Chunk chunk, String field, String value) {
        if (!NAME.matcher(value).matches()) {
            throw new IllegalArgumentException(
                    "chunk "
                            + chunk
                            + ": "
                            + field
                            + " '"
                            + value
                            + "' is not 1 to 128 characters of [A-Za-z0-9._-]");
        }
    }
}
