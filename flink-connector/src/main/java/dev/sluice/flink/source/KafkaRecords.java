package dev.sluice.flink.source;

import dev.sluice.client.segment.RecordHeader;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/** A {@link SluiceRecord} as kafka-clients' types, for deserializers written against Kafka's. */
final class KafkaRecords {
    private KafkaRecords() {}

    /**
     * The record as a KafkaConsumer would return it: topic, partition, offset, timestamp and its
     * type, key and value (their sizes; -1 for null) and headers; no leader epoch.
     */
    static ConsumerRecord<byte[], byte[]> consumerRecord(SluiceRecord record) {
        byte[] key = record.key();
        byte[] value = record.value();
        return new ConsumerRecord<>(
                record.topic(),
                record.partition(),
                record.offset(),
                record.timestamp(),
                record.timestampType(),
                key == null ? ConsumerRecord.NULL_SIZE : key.length,
                value == null ? ConsumerRecord.NULL_SIZE : value.length,
                key,
                value,
                headers(record),
                Optional.empty());
    }

    static Headers headers(SluiceRecord record) {
        RecordHeaders headers = new RecordHeaders();
        for (RecordHeader header : record.headers()) {
            headers.add(header.key(), header.value());
        }
        return headers;
    }
}
