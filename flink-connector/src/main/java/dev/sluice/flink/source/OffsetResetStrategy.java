package dev.sluice.flink.source;

import org.apache.flink.annotation.PublicEvolving;

/**
 * Where a partition starts (or stops) when {@link SluiceOffsets} has no offset for it: the values
 * and meaning of Kafka's {@code OffsetResetStrategy}, which {@code KafkaSource}'s {@code
 * OffsetsInitializer} takes and kafka-clients 4 deprecates.
 */
@PublicEvolving
public enum OffsetResetStrategy {
    /** The partition's earliest offset. */
    EARLIEST,
    /** The partition's end offset: only records written from then on. */
    LATEST,
    /** None: the enumerator fails, naming the partition. */
    NONE
}
