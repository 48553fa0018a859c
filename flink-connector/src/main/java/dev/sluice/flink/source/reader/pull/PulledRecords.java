package dev.sluice.flink.source.reader.pull;

import dev.sluice.flink.source.SluiceRecord;
import dev.sluice.flink.source.split.SluiceSplit;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * One KafkaConsumer poll, partition by partition, read in place through one reused cursor; each
 * partition's records end where its split stops.
 */
final class PulledRecords implements RecordsWithSplitIds<SluiceRecord> {
    private final List<TopicPartition> partitions = new ArrayList<>();
    private final List<List<ConsumerRecord<byte[], byte[]>>> records = new ArrayList<>();
    private final List<Integer> limits = new ArrayList<>();
    private final Set<String> finished;
    private final PulledRecord cursor = new PulledRecord();
    private List<ConsumerRecord<byte[], byte[]>> current;
    private int limit;
    private int split = -1;
    private int next;

    PulledRecords(Set<String> finished) {
        this.finished = finished;
    }

    /** Adds a partition's records, the first {@code limit} of them. */
    void add(TopicPartition partition, List<ConsumerRecord<byte[], byte[]>> polled, int limit) {
        if (limit > 0) {
            partitions.add(partition);
            records.add(polled);
            limits.add(limit);
        }
    }

    @Override
    public String nextSplit() {
        if (++split >= partitions.size()) {
            current = null;
            return null;
        }
        current = records.get(split);
        limit = limits.get(split);
        next = 0;
        return SluiceSplit.splitId(partitions.get(split));
    }

    @Override
    public SluiceRecord nextRecordFromSplit() {
        return current != null && next < limit ? cursor.at(current.get(next++)) : null;
    }

    @Override
    public Set<String> finishedSplits() {
        return finished;
    }
}
