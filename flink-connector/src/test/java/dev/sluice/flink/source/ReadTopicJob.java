package dev.sluice.flink.source;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.RestartStrategyUtils;

/**
 * {@code ReadTopicJob BOOTSTRAP TOPIC SOCKET MODE}: reads a topic to its current end with a
 * SluiceSource on a MiniCluster in this JVM, restarting without end as a job on a misconfigured
 * TaskManager would, and prints {@code read N} (exit 0) or {@code failed: MESSAGES} (exit 1). Run
 * in a JVM of its own by {@link PushRequirementsIT}: that JVM's options are the TaskManager's.
 */
public final class ReadTopicJob {
    // The MiniCluster runs in this JVM. Not Flink's collect sink: chained to a source that fails
    // as it starts, its close fails the whole TaskManager (Flink 2.2), and the job waits for one.
    private static final AtomicLong COUNT = new AtomicLong();

    private ReadTopicJob() {}

    /** Counts what reaches it. */
    private static final class CountingSink implements Sink<String> {
        private static final long serialVersionUID = 1L;

        @Override
        public SinkWriter<String> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(String element, Context context) {
                    COUNT.incrementAndGet();
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }

    public static void main(String[] args) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        RestartStrategyUtils.configureFixedDelayRestartStrategy(
                env, Integer.MAX_VALUE, Duration.ofMillis(100));
        SluiceSource<String> source =
                SluiceSource.<String>builder()
                        .setBootstrapServers(args[0])
                        .setTopics(args[1])
                        .setBrokerdSocket(Path.of(args[2]))
                        .setReadMode(ReadMode.valueOf(args[3]))
                        .setBounded(SluiceOffsets.latest())
                        .setValueOnlyDeserializer(new SimpleStringSchema())
                        .build();
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "sluice")
                .sinkTo(new CountingSink());
        try {
            env.execute();
        } catch (Exception e) {
            System.out.println("failed: " + PushRequirementsIT.messages(e));
            System.exit(1);
        }
        System.out.println("read " + COUNT.get());
        System.exit(0);
    }
}
