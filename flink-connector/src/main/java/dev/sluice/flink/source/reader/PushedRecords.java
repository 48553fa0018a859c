package dev.sluice.flink.source.reader;

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
    final PushHub.SharedBatch shared;
    final PushMember member;
    private final String topic;
    private final PushedRecord cursor;
    private int[] partitions = new int[4];
    private int[][] rows = new int[4][];
    private int[] counts = new int[4];
    private int partitionCount;
    private final Set<String> finished = new HashSet<>();
    private int split = -1;
    private int next;
    boolean released;

    PushedRecords(PushHub.SharedBatch shared, String topic, PushMember member) {
        this.shared = shared;
        this.member = member;
        this.topic = topic;
        this.cursor = new PushedRecord(topic, shared.batch);
    }

    String topic() {
        return topic;
    }

    /**
     * Appends a row; a batch holds each partition's rows in runs, so the last list usually fits.
     */
    void add(int partition, int row) {
        int i = partitionCount - 1;
        if (i < 0 || partitions[i] != partition) {
            i = indexOf(partition);
            if (i < 0) {
                i = partitionCount++;
                if (i == partitions.length) {
                    partitions = Arrays.copyOf(partitions, i * 2);
                    rows = Arrays.copyOf(rows, i * 2);
                    counts = Arrays.copyOf(counts, i * 2);
                }
                partitions[i] = partition;
                rows[i] = new int[16];
            }
        }
        if (counts[i] == rows[i].length) {
            rows[i] = Arrays.copyOf(rows[i], rows[i].length * 2);
        }
        rows[i][counts[i]++] = row;
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
        if (i < 0) {
            return false;
        }
        int kept = 0;
        while (kept < counts[i] && shared.batch.offset(rows[i][kept]) < stop) {
            kept++;
        }
        boolean reached = kept < counts[i] || shared.batch.offset(rows[i][kept - 1]) + 1 >= stop;
        counts[i] = kept;
        return reached;
    }

    /** Leaves out every row of the partition. */
    void drop(int partition) {
        int i = indexOf(partition);
        if (i >= 0) {
            counts[i] = 0;
        }
    }

    void finish(String splitId) {
        finished.add(splitId);
    }

    @Override
    public String nextSplit() {
        do {
            split++;
        } while (split < partitionCount && counts[split] == 0);
        next = 0;
        return split < partitionCount
                ? SluiceSplit.splitId(new TopicPartition(topic, partitions[split]))
                : null;
    }

    @Override
    public SluiceRecord nextRecordFromSplit() {
        if (split >= partitionCount || next >= counts[split]) {
            return null;
        }
        return cursor.at(rows[split][next++]);
    }

    @Override
    public Set<String> finishedSplits() {
        return finished;
    }

    @Override
    public void recycle() {
        shared.hub.recycle(this);
    }
}
