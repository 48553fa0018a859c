package dev.sluice.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The source benchmark's bound: a source that hands the job copies of the topic's values from
 * memory, with no broker, daemon or consumer behind it. Every real source does at least this (a
 * fresh {@code byte[]} per record), so the job's rate with it is the most any source can give the
 * job on this machine, with the producer on or off.
 */
final class MemoryValues implements GeneratorFunction<Long, byte[]> {
    /** Distinct values, enough that word count sees the topic's mix of words. */
    static final int POOL = 1 << 16;

    // Filled before the job runs; the MiniCluster's subtasks live in this JVM.
    private static byte[][] pool;

    /** A bounded source of {@code count} records over the first values of {@code topic}. */
    static Source<byte[], ?, ?> source(String bootstrap, String topic, long count) {
        pool = firstValues(bootstrap, topic);
        return new DataGeneratorSource<>(
                new MemoryValues(), count, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO);
    }

    @Override
    public byte[] map(Long index) {
        return pool[(int) (index % pool.length)].clone();
    }

    private static byte[][] firstValues(String bootstrap, String topic) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.putAll(SourceBenchmarkJob.CONSUMER_TUNING);
        List<byte[]> values = new ArrayList<>(POOL);
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(
                        properties, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition first = new TopicPartition(topic, 0);
            consumer.assign(List.of(first));
            consumer.seekToBeginning(List.of(first));
            long end = consumer.endOffsets(List.of(first)).get(first);
            long wanted = Math.min(POOL, end);
            while (values.size() < wanted) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofSeconds(1))) {
                    if (values.size() < wanted) {
                        values.add(record.value());
                    }
                }
            }
        }
        if (values.isEmpty()) {
            throw new IllegalStateException(topic + " holds no records to read from memory");
        }
        return values.toArray(new byte[0][]);
    }
}
