package dev.sluice.client.write;

import dev.sluice.client.Limits;
import dev.sluice.client.annotation.Internal;
import dev.sluice.client.job.ChunkTopics;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.AbstractRecords;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.utils.ByteUtils;
import org.apache.kafka.common.utils.Utils;

/**
 * A chunk as a chunk record (docs/formats.md, "Chunk record"): value = payload, key = the stream's
 * name, headers {@code sluice.job}, {@code sluice.stream}, {@code sluice.seq} (decimal ASCII) and
 * {@code sluice.eos} ({@code true}, on the last chunk only), on the topic of the chunk's output
 * location, and the partition it goes to. What every writer of chunks shares: the Flink sink and
 * the plain {@code StreamWriter}.
 */
@Internal
public final class ChunkRecords {
    public static final String JOB = "sluice.job";
    public static final String STREAM = "sluice.stream";
    public static final String SEQ = "sluice.seq";
    public static final String EOS = "sluice.eos";

    private static final byte[] TRUE = "true".getBytes(StandardCharsets.US_ASCII);

    private ChunkRecords() {}

    /** How a chunk is named in messages: {@code job/stream#seq (eos) 1024 B to outputLocation}. */
    public static String describe(
            String job,
            String stream,
            String outputLocation,
            long seq,
            boolean eos,
            long payloadBytes) {
        return job
                + "/"
                + stream
                + "#"
                + seq
                + (eos ? " (eos)" : "")
                + " "
                + payloadBytes
                + " B to "
                + outputLocation;
    }

    /**
     * The record of chunk {@code seq} of {@code job/stream} for {@code partition} of {@code topic}.
     *
     * @throws IllegalArgumentException if the job or stream is not a name (1 to 128 characters of
     *     {@code [A-Za-z0-9._-]}): readers could not report its progress
     */
    public static ProducerRecord<byte[], byte[]> record(
            String topic,
            int partition,
            String job,
            String stream,
            long seq,
            boolean eos,
            byte[] payload) {
        checkName(job, stream, seq, "job", job);
        checkName(job, stream, seq, "stream", stream);
        return new ProducerRecord<>(
                topic,
                partition,
                null,
                stream.getBytes(StandardCharsets.UTF_8),
                payload,
                Arrays.asList(headers(job, stream, seq, eos)));
    }

    /**
     * Checks that a chunk's job, stream and output location are names (1 to 128 characters of
     * {@code [A-Za-z0-9._-]}), as the headers, the topic and the progress records need.
     *
     * @throws IllegalArgumentException naming the chunk and the field if not
     */
    public static void checkNames(String job, String stream, String outputLocation, long seq) {
        checkName(job, stream, seq, "job", job);
        checkName(job, stream, seq, "stream", stream);
        checkName(job, stream, seq, "outputLocation", outputLocation);
    }

    /** The chunk topic of an output location, {@code sluice.chunks.<outputLocation>}. */
    public static String topic(String outputLocation) {
        return ChunkTopics.forOutputLocation(outputLocation);
    }

    /** The four (or three) {@code sluice.*} headers of a chunk, in the format's order. */
    public static Header[] headers(String job, String stream, long seq, boolean eos) {
        Header jobHeader = new RecordHeader(JOB, job.getBytes(StandardCharsets.UTF_8));
        Header streamHeader = new RecordHeader(STREAM, stream.getBytes(StandardCharsets.UTF_8));
        Header seqHeader =
                new RecordHeader(SEQ, Long.toString(seq).getBytes(StandardCharsets.US_ASCII));
        return eos
                ? new Header[] {jobHeader, streamHeader, seqHeader, new RecordHeader(EOS, TRUE)}
                : new Header[] {jobHeader, streamHeader, seqHeader};
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

    /**
     * The size, as {@link #serializedSizeUpperBound} counts it, of the largest record of a stream
     * in chunks of {@code chunkSizeBytes}: a full chunk, the longest seq, with the end header. What
     * a topic's {@code max.message.bytes} and a producer's {@code max.request.size} must take.
     */
    public static int largestRecordBytes(String job, String stream, int chunkSizeBytes) {
        // Without a buffer of the chunk's size: Kafka's bound grows with the value by its bytes and
        // its length's varint only (ChunkRecordsTest checks it against real records).
        int emptyValue =
                AbstractRecords.estimateSizeInBytesUpperBound(
                        RecordBatch.CURRENT_MAGIC_VALUE,
                        CompressionType.NONE,
                        stream.getBytes(StandardCharsets.UTF_8),
                        new byte[0],
                        headers(job, stream, Long.MAX_VALUE, true));
        return emptyValue
                + chunkSizeBytes
                + ByteUtils.sizeOfVarint(chunkSizeBytes)
                - ByteUtils.sizeOfVarint(0);
    }

    /**
     * The stream's home partition among {@code partitions}: Kafka's default partitioner's choice
     * for the key {@code job/stream}, so that the streams of a topic start on different partitions
     * (docs/sluice-sink.md, "Partitioning").
     */
    public static int homePartition(String job, String stream, int partitions) {
        checkPartitions(partitions);
        byte[] key = (job + "/" + stream).getBytes(StandardCharsets.UTF_8);
        return Utils.toPositive(Utils.murmur2(key)) % partitions;
    }

    /**
     * The partition chunk {@code seq} is spread to: {@code (home + seq) % partitions}, consecutive
     * chunks of a stream on consecutive partitions.
     */
    public static int spreadPartition(String job, String stream, long seq, int partitions) {
        int home = homePartition(job, stream, partitions);
        return (int) ((home + seq % partitions) % partitions);
    }

    private static void checkPartitions(int partitions) {
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions: at least 1, got " + partitions);
        }
    }

    private static void checkName(String job, String stream, long seq, String field, String value) {
        if (!Limits.isName(value)) {
            throw new IllegalArgumentException(
                    "chunk "
                            + job
                            + "/"
                            + stream
                            + "#"
                            + seq
                            + ": "
                            + field
                            + " '"
                            + value
                            + "' is not 1 to 128 characters of [A-Za-z0-9._-]");
        }
    }
}
