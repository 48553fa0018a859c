package dev.sluice.flink.source.reader.pull;

import dev.sluice.flink.source.SluiceRecord;
import dev.sluice.flink.source.split.SluiceSplit;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsChange;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** PULL: the reader's own KafkaConsumer, assigned its splits' partitions. */
@Internal
public final class PullSplitReader implements SplitReader<SluiceRecord, SluiceSplit> {
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(100);

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Map<TopicPartition, Long> stops = new HashMap<>();
    private Set<String> finished = new HashSet<>();

    public PullSplitReader(Properties kafkaProperties, String clientId) {
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        // The source's client id prefix names the consumer, as in KafkaSource; a client.id
        // property became that prefix when no prefix was set (docs/flink-source.md, "Client ids").
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        // Offsets go to Kafka when a checkpoint completes, never on the consumer's own schedule.
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        this.consumer =
                new KafkaConsumer<>(
                        props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    @Override
    public RecordsWithSplitIds<SluiceRecord> fetch() {
        PulledRecords out = new PulledRecords(takeFinished());
        if (stops.isEmpty()) {
            return out;
        }
        ConsumerRecords<byte[], byte[]> polled;
        try {
            polled = consumer.poll(POLL_TIMEOUT);
        } catch (WakeupException e) {
            return out;
        }
        for (TopicPartition partition : polled.partitions()) {
            long stop = stops.get(partition);
            List<ConsumerRecord<byte[], byte[]>> records = polled.records(partition);
            int limit = records.size();
            while (limit > 0 && records.get(limit - 1).offset() >= stop) {
                limit--;
            }
            out.add(partition, records, limit);
        }
        // A bounded split ends at its stopping offset, also when no record sits just before it
        // (a transaction marker, a compacted record).
        for (TopicPartition partition : List.copyOf(stops.keySet())) {
            long stop = stops.get(partition);
            if (stop != SluiceSplit.NO_STOPPING_OFFSET && consumer.position(partition) >= stop) {
                finish(partition);
            }
        }
        out.finishedSplits().addAll(takeFinished());
        return out;
    }

    private Set<String> takeFinished() {
        Set<String> taken = finished;
        finished = new HashSet<>();
        return taken;
    }

    private void finish(TopicPartition partition) {
        stops.remove(partition);
        consumer.assign(stops.keySet());
        finished.add(SluiceSplit.splitId(partition));
    }

    @Override
    public void handleSplitsChanges(SplitsChange<SluiceSplit> change) {
        if (!(change instanceof SplitsAddition)) {
            throw new UnsupportedOperationException(change + ": only additions are supported");
        }
        List<SluiceSplit> added = change.splits();
        for (SluiceSplit split : added) {
            if (split.isExhausted()) {
                finished.add(split.splitId());
            } else {
                stops.put(split.partition(), split.stoppingOffset());
            }
        }
        consumer.assign(stops.keySet());
        for (SluiceSplit split : added) {
            if (!split.isExhausted()) {
                consumer.seek(split.partition(), split.startingOffset());
            }
        }
    }

    @Override
    public void wakeUp() {
        consumer.wakeup();
    }

    @Override
    public void close() {
        consumer.close();
    }
}
