package dev.sluice.flink.source.reader.push;

import dev.sluice.client.brokerd.RecordBatch;
import dev.sluice.client.segment.RecordHeader;
import dev.sluice.flink.source.SluiceRecord;
import java.util.List;

/** A cursor over the rows of a batch in shared memory (PUSH): moved, never copied. */
final class PushedRecord implements SluiceRecord {
    private final String topic;
    private final RecordBatch batch;
    private int row;

    PushedRecord(String topic, RecordBatch batch) {
        this.topic = topic;
        this.batch = batch;
    }

    PushedRecord at(int row) {
        this.row = row;
        return this;
    }

    @Override
    public String topic() {
        return topic;
    }

    @Override
    public int partition() {
        return batch.partition(row);
    }

    @Override
    public long offset() {
        return batch.offset(row);
    }

    @Override
    public long timestamp() {
        return batch.timestampMs(row);
    }

    @Override
    public byte[] key() {
        return batch.key(row);
    }

    @Override
    public byte[] value() {
        return batch.value(row);
    }

    @Override
    public List<RecordHeader> headers() {
        return batch.headers(row);
    }

    @Override
    public int sizeInBytes() {
        return batch.sizeInBytes(row);
    }
}
