package dev.sluice.flink.source.reader;

import dev.sluice.flink.source.split.SluiceSplit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ObjLongConsumer;
import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.SourceReaderMetricGroup;
import org.apache.kafka.common.TopicPartition;

/**
 * The reader's metrics under {@code KafkaSource}'s names, in PUSH and PULL mode alike
 * (docs/flink-source.md, "Metrics"): the group {@code KafkaSourceReader} with the counters {@code
 * commitsSucceeded} and {@code commitsFailed}, per partition {@code
 * KafkaSourceReader.topic.<topic>.partition.<p>.currentOffset} (the offset of the last record
 * emitted) and {@code .committedOffset} (the last offset committed to the group), both {@code -1}
 * until known, and the standard {@code pendingRecords}: per partition being read, the records from
 * the next one to emit to the log end (the last stable offset under {@code read_committed}), or to
 * the split's stopping offset when it comes first.
 *
 * <p>The offsets are written by the reader's task thread and read by the reporters' threads. The
 * log ends are asked of Kafka ({@link LogEnds}) when {@code pendingRecords} is read, which answers
 * with the ends learned so far: a partition whose end is not known yet counts nothing.
 */
@Internal
public final class SluiceSourceReaderMetrics {
    /** {@code KafkaSourceReaderMetrics}'s group, so that a dashboard for KafkaSource finds them. */
    public static final String GROUP = "KafkaSourceReader";

    public static final String TOPIC_GROUP = "topic";
    public static final String PARTITION_GROUP = "partition";
    public static final String CURRENT_OFFSET = "currentOffset";
    public static final String COMMITTED_OFFSET = "committedOffset";
    public static final String COMMITS_SUCCEEDED = "commitsSucceeded";
    public static final String COMMITS_FAILED = "commitsFailed";

    /** An offset not known yet, as {@code KafkaSourceReaderMetrics.INITIAL_OFFSET}. */
    public static final long UNKNOWN = -1;

    /** One partition's offsets. */
    public static final class PartitionOffsets {
        private final long start;
        private final long stop;
        // Set once per record: a release store, not a volatile one, costs nothing on the emit path.
        private final AtomicLong current = new AtomicLong(UNKNOWN);
        private volatile long committed = UNKNOWN;
        private volatile long end = UNKNOWN;
        private volatile boolean reading = true;

        private PartitionOffsets(long start, long stop) {
            this.start = start;
            this.stop = stop;
        }

        /** A record of the partition at {@code offset} was emitted. */
        void emitted(long offset) {
            current.lazySet(offset);
        }

        long current() {
            return current.get();
        }

        long committed() {
            return committed;
        }

        /** Records left to emit, or 0 while the log end is not known or the split finished. */
        long pending() {
            long logEnd = end;
            if (!reading || logEnd == UNKNOWN) {
                return 0;
            }
            long last = current.get();
            long next = last == UNKNOWN ? start : last + 1;
            return Math.max(0, Math.min(logEnd, stop) - next);
        }
    }

    private final MetricGroup group;
    private final Counter commitsSucceeded;
    private final Counter commitsFailed;
    private final Map<TopicPartition, PartitionOffsets> partitions = new ConcurrentHashMap<>();
    private final LogEnds askForEnds;

    /** Where the log ends come from ({@link LogEndOffsets}). */
    @FunctionalInterface
    public interface LogEnds {
        /**
         * Asks for the log ends of these partitions, which {@code answer} takes as they come. Must
         * not block: a reporter's thread calls it.
         */
        void ask(Collection<TopicPartition> partitions, ObjLongConsumer<TopicPartition> answer);
    }

    public SluiceSourceReaderMetrics(SourceReaderMetricGroup metrics, LogEnds askForEnds) {
        this.group = metrics.addGroup(GROUP);
        this.commitsSucceeded = group.counter(COMMITS_SUCCEEDED);
        this.commitsFailed = group.counter(COMMITS_FAILED);
        this.askForEnds = askForEnds;
        metrics.setPendingRecordsGauge(this::pendingRecords);
    }

    /** The reader got the split: its partition's gauges, the first time. */
    void reading(SluiceSplit split) {
        TopicPartition partition = split.partition();
        PartitionOffsets offsets =
                new PartitionOffsets(split.startingOffset(), split.stoppingOffset());
        if (partitions.put(partition, offsets) == null) {
            MetricGroup partitionGroup =
                    group.addGroup(TOPIC_GROUP, partition.topic())
                            .addGroup(PARTITION_GROUP, String.valueOf(partition.partition()));
            partitionGroup.gauge(CURRENT_OFFSET, () -> partitions.get(partition).current());
            partitionGroup.gauge(COMMITTED_OFFSET, () -> partitions.get(partition).committed());
        }
    }

    /** The partition's offsets, which the emitter moves; null for a partition not read here. */
    PartitionOffsets partition(TopicPartition partition) {
        return partitions.get(partition);
    }

    /** The split reached its stopping offset: nothing of its partition is pending any more. */
    void finished(TopicPartition partition) {
        PartitionOffsets offsets = partitions.get(partition);
        if (offsets != null) {
            offsets.reading = false;
        }
    }

    /** The log end of a partition, as Kafka answered. */
    void logEnd(TopicPartition partition, long end) {
        PartitionOffsets offsets = partitions.get(partition);
        if (offsets != null) {
            offsets.end = end;
        }
    }

    /** A commit of these offsets succeeded. */
    void committed(Map<TopicPartition, Long> offsets) {
        offsets.forEach(
                (partition, offset) -> {
                    PartitionOffsets known = partitions.get(partition);
                    if (known != null) {
                        known.committed = offset;
                    }
                });
        commitsSucceeded.inc();
    }

    void commitFailed() {
        commitsFailed.inc();
    }

    private long pendingRecords() {
        long pending = 0;
        List<TopicPartition> read = new ArrayList<>();
        for (var entry : partitions.entrySet()) {
            PartitionOffsets offsets = entry.getValue();
            if (offsets.reading) {
                read.add(entry.getKey());
                pending += offsets.pending();
            }
        }
        if (!read.isEmpty()) {
            askForEnds.ask(read, this::logEnd);
        }
        return pending;
    }
}
