package dev.sluice.flink.source;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.RestartStrategyUtils;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} of the daemon under a running PUSH job: the daemon is killed once the job has
 * delivered its first records, the second half of the topic is written while it is down, it is
 * started again on the same socket, and the job ends with every record of the topic exactly once,
 * the second half necessarily through the restarted daemon. That is what the source promises across
 * a daemon restart without a Flink failover (docs/flink-source.md, "Membership changes
 * resubscribe": the client resumes, each partition from the next offset it has not routed, and rows
 * below it are dropped), so the job runs without restarts and a failed task fails the test. Real
 * broker, real daemon, real MiniCluster.
 */
class SluiceSourceDaemonKillIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static final int PARTITIONS = 3;
    private static final int PER_PARTITION = 10_000;
    private static final int VALUE_SIZE = 200;
    // Records the test takes from the job before the kill: the job has started reading. It may
    // have read the whole first half ahead (the collect sink's buffer, Flink's network buffers,
    // the segment); the second half is written after the kill.
    private static final int READ_BEFORE_KILL = 3_000;

    @TempDir Path dir;
    private BrokerdProcess daemon;

    @AfterEach
    void stopDaemon() throws InterruptedException {
        if (daemon != null) {
            daemon.close();
        }
    }

    /** Value "PARTITION:SEQ", padded: record SEQ of its partition, so a reader can check each. */
    private static String value(int partition, int seq) {
        return String.format("%-" + VALUE_SIZE + "s", partition + ":" + seq);
    }

    /** Records {@code from} to {@code to} (exclusive) of every partition. */
    private static void produce(String topic, int from, int to) {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int seq = from; seq < to; seq++) {
                for (int partition = 0; partition < PARTITIONS; partition++) {
                    producer.send(
                            new ProducerRecord<>(
                                    topic,
                                    partition,
                                    null,
                                    value(partition, seq).getBytes(StandardCharsets.UTF_8)));
                }
            }
        }
    }

    // A source that never resumed would leave the job, and the iterator below, waiting forever;
    // the collect iterator does not heed an interrupt, so the timeout runs the test apart.
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aKilledDaemonRestartedOnItsSocketLosesAndRepeatsNothing() throws Exception {
        String topic = KAFKA.createTopic(PARTITIONS);
        // Half the records now; the other half while the daemon is down, so that only the
        // restarted daemon can deliver them, however far ahead the job had read.
        produce(topic, 0, PER_PARTITION / 2);
        Map<TopicPartition, Long> ends = new HashMap<>();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            ends.put(new TopicPartition(topic, partition), (long) PER_PARTITION);
        }
        daemon =
                BrokerdProcess.start(
                        BrokerdProcess.defaultBinary(),
                        KAFKA.bootstrapServers(),
                        dir.resolve("brokerd.sock"),
                        Map.of());
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(100);
        RestartStrategyUtils.configureNoRestartStrategy(env);
        SluiceSource<String> source =
                SluiceSource.<String>builder()
                        .setBootstrapServers(KAFKA.bootstrapServers())
                        .setTopics(topic)
                        .setReadMode(ReadMode.PUSH)
                        .setBrokerdSocket(daemon.socket())
                        .setBounded(SluiceOffsets.of(ends))
                        .setSlots(8, 64 * 1024, 2)
                        .setValueOnlyDeserializer(new SimpleStringSchema())
                        .build();
        Map<String, Integer> seen = new HashMap<>();
        try (CloseableIterator<String> results =
                env.fromSource(source, WatermarkStrategy.noWatermarks(), "sluice")
                        .executeAndCollect()) {
            for (int i = 0; i < READ_BEFORE_KILL; i++) {
                assertThat(results.hasNext()).as("record %d before the kill", i).isTrue();
                seen.merge(results.next().trim(), 1, Integer::sum);
            }
            long killed = daemon.pid();
            daemon.kill();
            produce(topic, PER_PARTITION / 2, PER_PARTITION);
            daemon.restart();
            assertThat(daemon.pid()).isNotEqualTo(killed);
            results.forEachRemaining(value -> seen.merge(value.trim(), 1, Integer::sum));
        }

        List<String> missing = new ArrayList<>();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            for (int seq = 0; seq < PER_PARTITION; seq++) {
                String expected = partition + ":" + seq;
                if (!seen.containsKey(expected)) {
                    missing.add(expected);
                }
            }
        }
        assertThat(missing).as("records lost").isEmpty();
        assertThat(seen).as("every record read").hasSize(PARTITIONS * PER_PARTITION);
        assertThat(seen.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey))
                .as("records read more than once")
                .isEmpty();
        // Counted after each pump round, not per record: the last round's may come later.
        Await.until(
                "the restarted daemon counts records it pushed",
                Duration.ofSeconds(60),
                () -> daemon.metric("sluice_records_out_total") > 0);
    }
}
