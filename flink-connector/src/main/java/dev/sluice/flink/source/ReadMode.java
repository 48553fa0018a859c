package dev.sluice.flink.source;

import org.apache.flink.annotation.PublicEvolving;

/** How a source reader gets its records. */
@PublicEvolving
public enum ReadMode {
    /**
     * From the {@code sluice-brokerd} on the reader's host, through shared memory: all readers of a
     * source in one TaskManager share one subscription per topic.
     */
    PUSH,
    /** From the brokers with a KafkaConsumer of the reader's own, as Flink's KafkaSource does. */
    PULL,
    /** PUSH where a daemon answers on the reader's host, else PULL; decided per reader, logged. */
    AUTO
}
