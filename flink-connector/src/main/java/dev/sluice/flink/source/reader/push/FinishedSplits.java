package dev.sluice.flink.source.reader.push;

import dev.sluice.flink.source.SluiceRecord;
import java.util.Set;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;

/** A fetch with no records: only the splits it finished, perhaps none. */
final class FinishedSplits implements RecordsWithSplitIds<SluiceRecord> {
    private final Set<String> finished;

    FinishedSplits(Set<String> finished) {
        this.finished = finished;
    }

    @Override
    public String nextSplit() {
        return null;
    }

    @Override
    public SluiceRecord nextRecordFromSplit() {
        return null;
    }

    @Override
    public Set<String> finishedSplits() {
        return finished;
    }
}
