package dev.sluice.flink.source.reader.pull;

import dev.sluice.client.segment.RecordHeader;
import dev.sluice.flink.source.SluiceRecord;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;

/** A cursor over the records a KafkaConsumer fetched (PULL). */
final class PulledRecord implements SluiceRecord {
    private ConsumerRecord<byte[], byte[]> record;

    PulledRecord at(ConsumerRecord<byte[], byte[]> record) {
        this.record = record;
        return this;
    }

    @Override
    public String topic() {
        return record.topic();
    }

    @Override
    public int partition() {
        return record.partition();
    }

    @Override
    public long offset() {
        return record.offset();
    }

    @Override
    public long timestamp() {
        return record.timestamp();
    }

    @Override
    public TimestampType timestampType() {
        return record.timestampType();
    }

    @Override
    public byte[] key() {
        return record.key();
    }

    @Override
    public byte[] value() {
        return record.value();
    }

    @Override
    public List<RecordHeader> headers() {
        List<RecordHeader> headers = new ArrayList<>();
        for (Header header : record.headers()) {
            headers.add(new RecordHeader(header.key(), header.value()));
        }
        return headers;
    }

    @Override
    public int sizeInBytes() {
        return Math.max(0, record.serializedKeySize()) + Math.max(0, record.serializedValueSize());
    }
}
