package dev.sluice.benchmarks;

import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.SluiceDeserializationSchema;
import dev.sluice.flink.source.SluiceOffsets;
import dev.sluice.flink.source.SluiceRecord;
import dev.sluice.flink.source.SluiceSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One run of the source benchmark, in a JVM of its own: a seed-003 job (count, filter, word count)
 * reading a topic on a MiniCluster through one of the three sources (or from memory, the bound),
 * with 2 source and 2 map subtasks. Prints the measured window ({@link SourceWindow}) as its last
 * line.
 *
 * <p>Arguments: system (push, pull, kafka-source, memory), job, bootstrap servers, topic, record
 * count, records per partition to read (-1: to the end), daemon socket, daemon pid, broker pid.
 */
public final class SourceBenchmarkJob {
    static final int PARALLELISM = 2;

    /**
     * The consumer tuning every pulling system gets alike: large fetches, as for the anchors of the
     * ingest benchmark.
     */
    static final Map<String, String> CONSUMER_TUNING =
            Map.of(
                    "fetch.max.bytes", "52428800",
                    "max.partition.fetch.bytes", "8388608",
                    "max.poll.records", "10000");

    private SourceBenchmarkJob() {}

    public static void main(String[] args) throws Exception {
        String system = args[0];
        String job = args[1];
        String bootstrap = args[2];
        String topic = args[3];
        SourceWindow.expected = Long.parseLong(args[4]);
        long perPartition = Long.parseLong(args[5]);
        Path socket = Path.of(args[6]);
        SourceWindow.daemonPid = Long.parseLong(args[7]);
        SourceWindow.brokerPid = Long.parseLong(args[8]);

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARALLELISM);
        DataStream<byte[]> values =
                env.fromSource(
                        source(system, bootstrap, topic, perPartition, socket),
                        WatermarkStrategy.noWatermarks(),
                        system);
        switch (job) {
            case "count" -> values.flatMap(new Count()).sinkTo(new DiscardingSink<>());
            case "filter" -> values.flatMap(new Filter()).sinkTo(new DiscardingSink<>());
            case "wordcount" ->
                    values.flatMap(new Tokenizer())
                            .keyBy(word -> word.f0)
                            .sum(1)
                            .sinkTo(new DiscardingSink<>());
            default -> throw new IllegalArgumentException("job " + job);
        }
        env.execute(job + " " + system);
        if (SourceWindow.total() != SourceWindow.expected) {
            throw new IllegalStateException(
                    system + " read " + SourceWindow.total() + " of " + SourceWindow.expected);
        }
        System.out.printf(
                Locale.ROOT,
                "records=%d seconds=%.6f cpu_s=%.3f daemon_cpu_s=%.3f broker_cpu_s=%.3f"
                        + " source_threads=%d%n",
                SourceWindow.endRecords - SourceWindow.startRecords,
                (SourceWindow.endNanos - SourceWindow.startNanos) / 1e9,
                SourceWindow.endCpu - SourceWindow.startCpu,
                SourceWindow.endDaemonCpu - SourceWindow.startDaemonCpu,
                SourceWindow.endBrokerCpu - SourceWindow.startBrokerCpu,
                SourceWindow.sourceThreads);
        // A split fetcher blocked for good after the job (FLINK-40660) would keep this JVM up.
        System.exit(0);
    }

    private static Source<byte[], ?, ?> source(
            String system, String bootstrap, String topic, long perPartition, Path socket) {
        if (system.equals("memory")) {
            return MemoryValues.source(bootstrap, topic, SourceWindow.expected);
        }
        String group = "bench-" + system + "-" + System.nanoTime();
        Map<TopicPartition, Long> ends = new HashMap<>();
        for (int p = 0; p < SourceBenchmark.PARTITIONS; p++) {
            ends.put(new TopicPartition(topic, p), perPartition);
        }
        if (system.equals("kafka-source")) {
            return KafkaSource.<byte[]>builder()
                    .setBootstrapServers(bootstrap)
                    .setTopics(topic)
                    .setGroupId(group)
                    .setStartingOffsets(OffsetsInitializer.earliest())
                    .setBounded(
                            perPartition < 0
                                    ? OffsetsInitializer.latest()
                                    : OffsetsInitializer.offsets(ends))
                    .setDeserializer(
                            KafkaRecordDeserializationSchema.valueOnly(ByteArrayDeserializer.class))
                    .setProperty("commit.offsets.on.checkpoint", "false")
                    .setProperties(properties())
                    .build();
        }
        return SluiceSource.<byte[]>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(topic)
                .setGroupId(group)
                .setReadMode(system.equals("push") ? ReadMode.PUSH : ReadMode.PULL)
                .setBrokerdSocket(socket)
                .setBounded(perPartition < 0 ? SluiceOffsets.latest() : SluiceOffsets.of(ends))
                .setProperties(properties())
                .setDeserializer(new ValueBytes())
                .build();
    }

    private static java.util.Properties properties() {
        java.util.Properties properties = new java.util.Properties();
        properties.putAll(CONSUMER_TUNING);
        return properties;
    }

    /** The record's value as it is. */
    static final class ValueBytes implements SluiceDeserializationSchema<byte[]> {
        @Override
        public void deserialize(SluiceRecord record, Collector<byte[]> out) {
            out.collect(record.value());
        }

        @Override
        public TypeInformation<byte[]> getProducedType() {
            return PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO;
        }
    }

    /** Seed 003's RTLogger: counts the records, emits nothing. */
    static final class Count extends Measured<Void> {
        @Override
        public void flatMap(byte[] value, Collector<Void> out) {
            counter.record();
        }
    }

    /** Seed 003's filter: the values, as strings, that hold a word. */
    static final class Filter extends Measured<String> {
        @Override
        public void flatMap(byte[] value, Collector<String> out) {
            counter.record();
            String text = new String(value, StandardCharsets.UTF_8);
            if (text.contains("sluice")) {
                out.collect(text);
            }
        }
    }

    /** Seed 003's word count tokenizer: (word, 1) for every word of the value. */
    static final class Tokenizer extends Measured<Tuple2<String, Integer>> {
        @Override
        public void flatMap(byte[] value, Collector<Tuple2<String, Integer>> out) {
            counter.record();
            for (String word : new String(value, StandardCharsets.UTF_8).split(" ")) {
                if (!word.isEmpty()) {
                    out.collect(Tuple2.of(word, 1));
                }
            }
        }
    }

    /** The first operator after the source: where every job counts the records it reads. */
    abstract static class Measured<O> extends RichFlatMapFunction<byte[], O> {
        transient SourceWindow.Counter counter;

        @Override
        public void open(OpenContext context) {
            counter = new SourceWindow.Counter();
        }

        @Override
        public void close() {
            counter.close();
        }
    }
}
