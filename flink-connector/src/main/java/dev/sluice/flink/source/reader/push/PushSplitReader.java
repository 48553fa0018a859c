package dev.sluice.flink.source.reader.push;

import dev.sluice.flink.source.SluiceRecord;
import dev.sluice.flink.source.reader.StoppingOffsetProbe;
import dev.sluice.flink.source.split.SluiceSplit;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.flink.annotation.Internal;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsChange;
import org.apache.kafka.common.TopicPartition;

/** PUSH: takes the reader's shares of the batches its TaskManager's shared subscriptions poll. */
@Internal
public final class PushSplitReader implements SplitReader<SluiceRecord, SluiceSplit> {
    private static final long WAIT_MS = 100;
    // A bounded split that got no rows for this long may have nothing deliverable left before its
    // stop; Kafka is asked then, and at most this often, so that a split merely waiting for the
    // daemon costs a short poll a second, not a busy loop.
    private static final long IDLE_BEFORE_PROBE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long PROBE_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** A bounded split: where it stops and the next offset it has not seen. */
    private static final class Bounded {
        final long stop;
        long next;
        long lastRowsAt = System.nanoTime();

        Bounded(long start, long stop) {
            this.next = start;
            this.stop = stop;
        }
    }

    private final PushInbox inbox;
    private final StoppingOffsetProbe probe;
    private final Map<TopicPartition, Bounded> bounded = new HashMap<>();
    // Partitions whose split ended at its stopping offset. The shared subscription goes on routing
    // their rows until it has resubscribed without them, and batches already on their way hold
    // some: rows of a finished split must not reach Flink, which fails on records of a split it
    // does not know.
    private final Set<TopicPartition> stopped = new HashSet<>();
    private Set<String> exhausted = new HashSet<>();
    private long probedAt = System.nanoTime() - PROBE_INTERVAL_NANOS;

    public PushSplitReader(PushInbox inbox, StoppingOffsetProbe probe) {
        this.inbox = inbox;
        this.probe = probe;
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
        if (records != null) {
            route(records);
        }
        probeIdleSplits();
        return records != null ? records : new FinishedSplits(new HashSet<>());
    }

    private void route(PushedRecords records) {
        for (TopicPartition partition : stopped) {
            if (partition.topic().equals(records.topic())) {
                records.drop(partition.partition());
            }
        }
        long now = System.nanoTime();
        // A bounded split ends with the last record before its stopping offset.
        for (var entry : List.copyOf(bounded.entrySet())) {
            TopicPartition partition = entry.getKey();
            Bounded split = entry.getValue();
            if (!partition.topic().equals(records.topic())) {
                continue;
            }
            if (records.truncate(partition.partition(), split.stop)) {
                stop(partition);
                records.finish(SluiceSplit.splitId(partition));
                continue;
            }
            long last = records.lastOffset(partition.partition());
            if (last >= 0) {
                split.next = last + 1;
                split.lastRowsAt = now;
            }
        }
    }

    /**
     * Bounded splits without rows for a while: the offsets left before their stop may hold no
     * record the daemon pushes (a transaction marker, an aborted transaction's records under
     * read_committed, records compacted away). Those the probe finds so end with the next fetch.
     */
    private void probeIdleSplits() {
        long now = System.nanoTime();
        if (bounded.isEmpty() || now - probedAt < PROBE_INTERVAL_NANOS) {
            return;
        }
        Map<TopicPartition, Long> next = new HashMap<>();
        Map<TopicPartition, Long> stops = new HashMap<>();
        bounded.forEach(
                (partition, split) -> {
                    if (now - split.lastRowsAt >= IDLE_BEFORE_PROBE_NANOS) {
                        next.put(partition, split.next);
                        stops.put(partition, split.stop);
                    }
                });
        if (next.isEmpty()) {
            return;
        }
        probedAt = now;
        for (TopicPartition partition : probe.reachedStop(next, stops)) {
            stop(partition);
            exhausted.add(SluiceSplit.splitId(partition));
        }
    }

    /**
     * The split reached its stop: the shared subscription stops routing its rows, and those on
     * their way drop.
     */
    private void stop(TopicPartition partition) {
        bounded.remove(partition);
        stopped.add(partition);
        PushMember member = inbox.member(partition.topic());
        member.subscription.unassign(member, partition.partition());
        if (bounded.isEmpty()) {
            probe.close();
        }
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
                if (split.isBounded()) {
                    bounded.put(
                            partition, new Bounded(split.startingOffset(), split.stoppingOffset()));
                }
                PushMember member = inbox.member(partition.topic());
                member.subscription.assign(member, partition.partition(), split.startingOffset());
            }
        }
    }

    @Override
    public void wakeUp() {
        inbox.wakeUp();
        probe.wakeUp();
    }

    @Override
    public void close() {
        // The inbox outlives this split reader; the source reader closes it.
        probe.close();
    }
}
