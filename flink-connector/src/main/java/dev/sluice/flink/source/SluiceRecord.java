package dev.sluice.flink.source;

import dev.sluice.client.segment.RecordHeader;
import java.util.List;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.kafka.common.record.TimestampType;

/**
 * A Kafka record as a deserialization schema sees it, whether it came through shared memory (PUSH)
 * or a KafkaConsumer (PULL). Valid only during {@link SluiceDeserializationSchema#deserialize}: the
 * source reuses it for the next record.
 */
@PublicEvolving
public interface SluiceRecord {
    String topic();

    int partition();

    long offset();

    /** Milliseconds since the epoch. */
    long timestamp();

    /**
     * Whether {@link #timestamp} is the producer's ({@code CREATE_TIME}) or the broker's ({@code
     * LOG_APPEND_TIME}); {@code NO_TIMESTAMP_TYPE} when not known: in PUSH mode, whose records do
     * not carry it (docs/formats.md, Object schemas).
     */
    default TimestampType timestampType() {
        return TimestampType.NO_TIMESTAMP_TYPE;
    }

    /** A copy of the key, or null. */
    byte[] key();

    /** A copy of the value, or null. */
    byte[] value();

    List<RecordHeader> headers();

    /** Key and value bytes: what {@code numBytesIn} counts. */
    int sizeInBytes();
}
