package dev.sluice.flink.source.reader;

import dev.sluice.flink.source.SluiceRecord;
import dev.sluice.flink.source.split.SluiceSplit;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsChange;
import org.apache.kafka.common.TopicPartition;

/** PUSH: takes the reader's shares of the batches its TaskManager's hubs poll. */
final class PushSplitReader implements SplitReader<SluiceRecord, SluiceSplit> {
    private static final long WAIT_MS = 100;

    private final PushInbox inbox;
    private final Map<TopicPartition, Long> stops = new HashMap<>();
    // Partitions whose split ended at its stopping offset. The hub goes on routing their rows
    // until it has resubscribed without them, and batches already on their way hold some: rows of
    // a finished split must not reach Flink, which fails on records of a split it does not know.
    private final Set<TopicPartition> stopped = new HashSet<>();
    private Set<String> exhausted = new HashSet<>();

    PushSplitReader(PushInbox inbox) {
        this.inbox = inbox;
    }

    @Override
    public RecordsWithSplitIds<SluiceRecord> fetch() throws IOException {
        if (!exhausted.isEmpty()) {
            FinishedSplits finished = new FinishedSplits(exhausted);
            exhausted = new HashSet<>();
            return finished;
        }
        PushedRecords records;
        try {
            records = inbox.next(WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for records");
        } catch (PushInbox.PushFailedException e) {
            throw new IOException(e.getMessage(), e.getCause());
        }
        if (records == null) {
            return new FinishedSplits(new HashSet<>());
        }
        for (TopicPartition partition : stopped) {
            if (partition.topic().equals(records.topic())) {
                records.drop(partition.partition());
            }
        }
        // A bounded split ends with the last record before its stopping offset.
        for (var stop : Map.copyOf(stops).entrySet()) {
            TopicPartition partition = stop.getKey();
            if (stop.getValue() != SluiceSplit.NO_STOPPING_OFFSET
                    && partition.topic().equals(records.topic())
                    && records.truncate(partition.partition(), stop.getValue())) {
                stops.remove(partition);
                stopped.add(partition);
                records.member.hub.unassign(records.member, partition.partition());
                records.finish(SluiceSplit.splitId(partition));
            }
        }
        return records;
    }

    @Override
    public void handleSplitsChanges(SplitsChange<SluiceSplit> change) {
        if (!(change instanceof SplitsAddition)) {
            throw new UnsupportedOperationException(change + ": only additions are supported");
        }
        for (SluiceSplit split : change.splits()) {
            if (split.isExhausted()) {
                exhausted.add(split.splitId());
            } else {
                TopicPartition partition = split.partition();
                stopped.remove(partition);
                stops.put(partition, split.stoppingOffset());
                PushMember member = inbox.member(partition.topic());
                member.hub.assign(member, partition.partition(), split.startingOffset());
            }
        }
    }

    @Override
    public void wakeUp() {
        inbox.wakeUp();
    }

    @Override
    public void close() {
        // The inbox outlives this split reader; the source reader closes it.
    }
}
