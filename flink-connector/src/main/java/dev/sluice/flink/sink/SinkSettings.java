package dev.sluice.flink.sink;

import java.io.Serializable;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.annotation.Internal;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * What a {@link SluiceSink} was built with, checked by {@link SluiceSinkBuilder#build()}.
 *
 * @param producer the producer's properties, serializers and {@code acks} included
 * @param consumer the progress consumer's properties (connection and security), group-less
 * @param progressTopic where stream readers publish their delivery progress
 * @param fixedCapPerStream the in-flight cap of a stream over all writers; 0: by the formula
 * @param maxTaskSizeBytes the largest task size of the jobs, for the formula
 * @param maxCapPerStream the formula's upper bound
 * @param partitioning which partition a chunk goes to
 * @param progressPartitionRefresh how often the progress consumer looks for new partitions
 */
@Internal
public record SinkSettings(
        Properties producer,
        Properties consumer,
        String progressTopic,
        long fixedCapPerStream,
        long maxTaskSizeBytes,
        long maxCapPerStream,
        ChunkPartitioning partitioning,
        Duration progressPartitionRefresh)
        implements Serializable {

    /** The formula's factor: seed 001 §4.3 wants at least producers × chunk; 4 tasks each. */
    public static final int TASKS_PER_PRODUCER = 4;

    /**
     * The in-flight cap of a stream over the sink's {@code producers} writers: the fixed cap if one
     * was set, else {@code maxTaskSizeBytes × producers × 4} bounded by {@code maxCapPerStream}.
     */
    public long capPerStream(int producers) {
        if (fixedCapPerStream > 0) {
            return fixedCapPerStream;
        }
        long perProducer = maxTaskSizeBytes * TASKS_PER_PRODUCER;
        long formula =
                perProducer > Long.MAX_VALUE / producers ? Long.MAX_VALUE : perProducer * producers;
        return Math.min(formula, maxCapPerStream);
    }

    /** What one of {@code producers} writers may hold of a stream: its equal part of the cap. */
    public long sharePerStream(int producers) {
        return Math.max(1, capPerStream(producers) / producers);
    }

    /** The producer's properties parsed by Kafka's own rules (defaults filled in). */
    public Map<String, Object> parsedProducerConfig() {
        return parse(producer);
    }

    static Map<String, Object> parse(Properties producer) {
        Properties withSerializers = new Properties();
        withSerializers.putAll(producer);
        withSerializers.put(
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        withSerializers.put(
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return ProducerConfig.configDef().parse(withSerializers);
    }
}
