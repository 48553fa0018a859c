package dev.sluice.flink.source.reader;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * PUSH: asks Kafka whether a bounded split that has stopped getting rows has anything deliverable
 * left before its stopping offset. The daemon pushes records only, so a split whose last offsets
 * hold a transaction marker, an aborted transaction's records under read_committed, or records
 * compacted away would otherwise wait forever for a row at {@code stop - 1} (docs/flink-source.md,
 * "Bounded PUSH splits end also where no record precedes the stop").
 *
 * <p>A consumer of the reader's own, made on the first question and with the source's properties
 * (so its {@code isolation.level}) but no group, reads from the split's next offset: it skips what
 * is not deliverable, as PULL's consumer does. Only its evidence ends a split: no record below the
 * stop and a position at or past it. Records below the stop mean the daemon is behind and will push
 * them. Between questions it keeps its positions, so a long stretch of aborted records is crossed
 * over several questions, not read again each time.
 */
@Internal
public final class StoppingOffsetProbe implements AutoCloseable {
    // Short: the fetcher thread waits this long, also when the reader's other splits have rows.
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(100);
    // Enough to step over a few batches of markers or aborted records per fetch, without pulling
    // megabytes of records that the daemon is about to push anyway.
    private static final int FETCH_BYTES = 64 << 10;

    private final Properties properties;
    // Made and used on the fetcher thread; woken up from Flink's.
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    // Per partition asked about: the highest offset below its stop of a record the consumer
    // returned since its last seek (-1: none). The consumer has read everything from that seek to
    // its position.
    private final Map<TopicPartition, Long> lastDeliverable = new HashMap<>();

    public StoppingOffsetProbe(Properties kafkaProperties, String clientId) {
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, String.valueOf(FETCH_BYTES));
        props.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, String.valueOf(FETCH_BYTES));
        this.properties = props;
    }

    /**
     * The partitions of {@code next} (partition: the next offset its split has not seen) with
     * nothing deliverable from there to their stop in {@code stops}; waits a short poll at most.
     */
    public Set<TopicPartition> reachedStop(
            Map<TopicPartition, Long> next, Map<TopicPartition, Long> stops) {
        KafkaConsumer<byte[], byte[]> c = consumer();
        if (!c.assignment().equals(next.keySet())) {
            c.assign(next.keySet());
            lastDeliverable.clear();
        }
        for (var entry : next.entrySet()) {
            TopicPartition partition = entry.getKey();
            long from = entry.getValue();
            Long found = lastDeliverable.get(partition);
            // Seek again when the split moved past where the consumer is, or when a record the
            // consumer found may still lie ahead of the split.
            if (found == null || found >= from || c.position(partition) < from) {
                c.seek(partition, from);
                c.resume(Set.of(partition));
                lastDeliverable.put(partition, -1L);
            }
        }
        ConsumerRecords<byte[], byte[]> polled;
        try {
            polled = c.poll(POLL_TIMEOUT);
        } catch (WakeupException e) {
            return Set.of();
        }
        for (TopicPartition partition : polled.partitions()) {
            long stop = stops.get(partition);
            for (ConsumerRecord<byte[], byte[]> record : polled.records(partition)) {
                if (record.offset() < stop) {
                    lastDeliverable.merge(partition, record.offset(), Math::max);
                }
            }
            if (lastDeliverable.get(partition) >= 0) {
                // The daemon will push it; reading on would only fetch what it pushes.
                c.pause(Set.of(partition));
            }
        }
        Set<TopicPartition> reached = new HashSet<>();
        for (TopicPartition partition : next.keySet()) {
            if (lastDeliverable.get(partition) < 0
                    && c.position(partition) >= stops.get(partition)) {
                reached.add(partition);
            }
        }
        return reached;
    }

    private KafkaConsumer<byte[], byte[]> consumer() {
        if (consumer == null) {
            consumer =
                    new KafkaConsumer<>(
                            properties, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        }
        return consumer;
    }

    public void wakeUp() {
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
    }

    /** Closes the consumer, if any; the next question makes a new one. */
    @Override
    public void close() {
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            consumer = null;
            lastDeliverable.clear();
            c.close();
        }
    }
}
