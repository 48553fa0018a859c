package dev.sluice.flink.source.reader.push;

import dev.sluice.client.brokerd.RecordBatch;
import dev.sluice.client.shared.SharedBatch;
import dev.sluice.flink.source.SluiceRecord;
import dev.sluice.flink.source.split.SluiceSplit;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;
import org.apache.kafka.common.TopicPartition;

/**
 * One reader's share of a batch in shared memory: its rows, partition by partition. The batch's
 * slot is released once every reader that got a share recycled it.
 */
final class PushedRecords implements RecordsWithSplitIds<SluiceRecord> {
    final SharedBatch<RecordBatch> shared;
    final PushMember member;
    private final String topic;
    private final PushedRecord cursor;
    private int[] partitions = new int[4];
    private RowRuns[] rows = new RowRuns[4];
    private int partitionCount;
    private final Set<String> finished = new HashSet<>();
    private int split = -1;
    private int run;
    private int row;
    boolean released;

    PushedRecords(SharedBatch<RecordBatch> shared, String topic, PushMember member) {
        this.shared = shared;
        this.member = member;
        this.topic = topic;
        this.cursor = new PushedRecord(topic, shared.batch());
    }

    String topic() {
        return topic;
    }

    /** Appends the rows {@code [start, end)} of a partition, which follow its rows so far. */
    void add(int partition, int start, int end) {
        int i = partitionCount - 1;
        if (i < 0 || partitions[i] != partition) {
            i = indexOf(partition);
            if (i < 0) {
                i = partitionCount++;
                if (i == partitions.length) {
                    partitions = Arrays.copyOf(partitions, i * 2);
                    rows = Arrays.copyOf(rows, i * 2);
                }
                partitions[i] = partition;
                rows[i] = new RowRuns();
            }
        }
        rows[i].add(start, end);
    }

    private int indexOf(int partition) {
        for (int i = 0; i < partitionCount; i++) {
            if (partitions[i] == partition) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Leaves out the rows from {@code stop} on and returns true when the partition reached it: the
     * last row before {@code stop} is here.
     */
    boolean truncate(int partition, long stop) {
        int i = indexOf(partition);
        return i >= 0 && rows[i].truncate(shared.batch()::offset, stop);
    }

    /** The offset of the partition's last row here, or -1 when it has none. */
    long lastOffset(int partition) {
        int i = indexOf(partition);
        return i < 0 || rows[i].isEmpty()
                ? -1
                : shared.batch().offset(rows[i].end(rows[i].runs() - 1) - 1);
    }

    /** Leaves out every row of the partition. */
    void drop(int partition) {
        int i = indexOf(partition);
        if (i >= 0) {
            rows[i].clear();
        }
    }

    void finish(String splitId) {
        finished.add(splitId);
    }

    @Override
    public String nextSplit() {
        do {
            split++;
        } while (split < partitionCount && rows[split].isEmpty());
        if (split >= partitionCount) {
            return null;
        }
        run = 0;
        row = rows[split].start(0);
        return SluiceSplit.splitId(new TopicPartition(topic, partitions[split]));
    }

    @Override
    public SluiceRecord nextRecordFromSplit() {
        if (split >= partitionCount) {
            return null;
        }
        RowRuns runs = rows[split];
        if (run >= runs.runs()) {
            return null;
        }
        int at = row++;
        if (row == runs.end(run) && ++run < runs.runs()) {
            row = runs.start(run);
        }
        return cursor.at(at);
    }

    @Override
    public Set<String> finishedSplits() {
        return finished;
    }

    @Override
    public void recycle() {
        member.subscription.recycle(this);
    }
}
