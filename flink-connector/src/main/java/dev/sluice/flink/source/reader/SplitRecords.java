package dev.sluice.flink.source.reader;

import dev.sluice.flink.source.SluiceRecord;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;

/**
 * Records split by split, with the splits they finished: a KafkaConsumer poll (PULL), or just
 * finished splits.
 */
final class SplitRecords implements RecordsWithSplitIds<SluiceRecord> {
    private final List<String> splitIds = new ArrayList<>();
    private final List<List<SluiceRecord>> records = new ArrayList<>();
    private final Set<String> finished;
    private int split = -1;
    private Iterator<SluiceRecord> current;

    SplitRecords(Set<String> finished) {
        this.finished = finished;
    }

    void add(String splitId, List<SluiceRecord> splitRecords) {
        splitIds.add(splitId);
        records.add(splitRecords);
    }

    @Override
    public String nextSplit() {
        if (++split >= splitIds.size()) {
            current = null;
            return null;
        }
        current = records.get(split).iterator();
        return splitIds.get(split);
    }

    @Override
    public SluiceRecord nextRecordFromSplit() {
        return current != null && current.hasNext() ? current.next() : null;
    }

    @Override
    public Set<String> finishedSplits() {
        return finished;
    }
}
