package dev.sluice.benchmarks;

import dev.sluice.examples.source.CountJob;
import dev.sluice.examples.source.FilterJob;
import dev.sluice.examples.source.ValueBytes;
import dev.sluice.examples.source.WindowedWordCountJob;
import dev.sluice.examples.source.WordCountJob;
import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.SluiceOffsets;
import dev.sluice.flink.source.SluiceSource;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One run of the source benchmark, in a JVM of its own: an example job (count, filter, word count,
 * windowed word count, of {@code dev.sluice.examples.source}) reading a topic on a MiniCluster
 * through one of the three sources (or from memory, the bound), with 2 source and 2 map subtasks.
 * Prints the measured window ({@link SourceWindow}) as its last line.
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
        // No operator holds or changes a value: without reuse Flink copies every byte[] once per
        // chained operator, a cost of Flink's that every source pays alike (benchmarks/README.md,
        // Source).
        env.getConfig().enableObjectReuse();
        DataStream<byte[]> values =
                env.fromSource(
                        source(system, bootstrap, topic, perPartition, socket),
                        WatermarkStrategy.noWatermarks(),
                        system);
        // The example jobs' pipelines as they are (examples/README.md).
        DataStream<byte[]> measured = values.map(new Measured()).name("measure");
        switch (job) {
            case "count" -> CountJob.count(measured).sinkTo(new DiscardingSink<>());
            case "filter" ->
                    FilterJob.filter(measured, SourceBenchmark.FILTER_WORD)
                            .sinkTo(new DiscardingSink<>());
            case "wordcount" -> WordCountJob.wordCount(measured).sinkTo(new DiscardingSink<>());
            case "windowed-wordcount" ->
                    WindowedWordCountJob.windowedWordCount(
                                    measured, WindowedWordCountJob.SIZE, WindowedWordCountJob.SLIDE)
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

    /**
     * Before the job's own pipeline, chained to the source: counts the records into the measured
     * window, and passes them on as they are.
     */
    static final class Measured extends RichMapFunction<byte[], byte[]> {
        private transient SourceWindow.Counter counter;

        @Override
        public void open(OpenContext context) {
            counter = new SourceWindow.Counter();
        }

        @Override
        public byte[] map(byte[] value) {
            counter.record();
            return value;
        }

        @Override
        public void close() {
            counter.close();
        }
    }
}
