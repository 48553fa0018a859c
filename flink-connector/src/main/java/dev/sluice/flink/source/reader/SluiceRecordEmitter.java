package dev.sluice.flink.source.reader;

import dev.sluice.flink.source.SluiceDeserializationSchema;
import dev.sluice.flink.source.SluiceRecord;
import dev.sluice.flink.source.split.SluiceSplitState;
import java.io.IOException;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.connector.base.source.reader.RecordEmitter;
import org.apache.flink.metrics.Counter;
import org.apache.flink.util.Collector;
import org.apache.kafka.common.TopicPartition;

/**
 * Deserializes a record into the output, stamped with its Kafka timestamp, and moves its split and
 * its partition's {@code currentOffset}.
 */
final class SluiceRecordEmitter<T> implements RecordEmitter<SluiceRecord, T, SluiceSplitState> {
    private final SluiceDeserializationSchema<T> deserializer;
    private final Counter bytesIn;
    private final SluiceSourceReaderMetrics metrics;
    private final OutputCollector<T> collector = new OutputCollector<>();
    // The offsets of the split emitted last: records come in runs of one split, so the metrics'
    // map is looked up once per run.
    private SluiceSplitState lastSplit;
    private SluiceSourceReaderMetrics.PartitionOffsets offsets;

    SluiceRecordEmitter(
            SluiceDeserializationSchema<T> deserializer,
            Counter bytesIn,
            SluiceSourceReaderMetrics metrics) {
        this.deserializer = deserializer;
        this.bytesIn = bytesIn;
        this.metrics = metrics;
    }

    @Override
    public void emitRecord(SluiceRecord record, SourceOutput<T> output, SluiceSplitState split)
            throws IOException {
        // Read once: each read of a pushed record's field is a read of its Arrow vector.
        long offset = record.offset();
        collector.output = output;
        collector.timestamp = record.timestamp();
        try {
            deserializer.deserialize(record, collector);
        } catch (IOException | RuntimeException e) {
            throw new IOException(
                    "deserializing the record at "
                            + record.topic()
                            + "-"
                            + record.partition()
                            + " offset "
                            + offset
                            + ": "
                            + e.getMessage(),
                    e);
        }
        split.emitted(offset);
        if (split != lastSplit) {
            lastSplit = split;
            offsets = metrics.partition(new TopicPartition(record.topic(), record.partition()));
        }
        offsets.emitted(offset);
        bytesIn.inc(record.sizeInBytes());
    }

    private static final class OutputCollector<T> implements Collector<T> {
        SourceOutput<T> output;
        long timestamp;

        @Override
        public void collect(T element) {
            output.collect(element, timestamp);
        }

        @Override
        public void close() {}
    }
}
