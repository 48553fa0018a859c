package dev.sluice.flink.source.reader;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The log ends pendingRecords counts to, asked of a real broker. */
class LogEndOffsetsIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static Properties source(String isolation) {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        return props;
    }

    /** The partition's end as one asker answers it. */
    private static long end(LogEndOffsets ends, TopicPartition partition) {
        Map<TopicPartition, Long> answered = new ConcurrentHashMap<>();
        return Await.untilNonNull(
                "the log end of " + partition,
                WAIT,
                () -> {
                    ends.ask(List.of(partition), answered::put);
                    return answered.get(partition);
                });
    }

    @Test
    void anOpenTransactionCountsUnderReadUncommittedOnly() throws Exception {
        String topic = KAFKA.createTopic(1);
        TopicPartition partition = new TopicPartition(topic, 0);
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "ends-" + topic);
        try (KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(
                                props, new ByteArraySerializer(), new ByteArraySerializer());
                LogEndOffsets committed = new LogEndOffsets(source("read_committed"));
                LogEndOffsets uncommitted = new LogEndOffsets(source("read_uncommitted"))) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, new byte[] {(byte) i}));
            }
            producer.commitTransaction();
            producer.beginTransaction();
            for (int i = 0; i < 5; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, new byte[] {(byte) i}));
            }
            producer.flush();
            // 10 records and their commit marker, then 5 of a transaction still open.
            assertThat(end(committed, partition)).as("the last stable offset").isEqualTo(11);
            assertThat(end(uncommitted, partition)).as("the high watermark").isEqualTo(16);
            producer.abortTransaction();
        }
    }

    @Test
    void questionsWithinTheIntervalAreNotAsked() throws Exception {
        String topic = KAFKA.createTopic(1);
        TopicPartition partition = new TopicPartition(topic, 0);
        AtomicInteger answers = new AtomicInteger();
        // The clock moves only when the test moves it, so "within the interval" is exact.
        AtomicLong now = new AtomicLong(System.nanoTime());
        long firstAskedAt = now.get();
        try (LogEndOffsets ends = new LogEndOffsets(source("read_uncommitted"), now::get)) {
            ends.ask(List.of(partition), (p, end) -> answers.incrementAndGet());
            Await.until("the first answer", WAIT, () -> answers.get() == 1);
            // Ten questions after it, the last one a nanosecond short of the interval.
            for (int i = 1; i <= 10; i++) {
                now.set(firstAskedAt + (LogEndOffsets.INTERVAL_NANOS - 1) * i / 10);
                ends.ask(List.of(partition), (p, end) -> answers.incrementAndGet());
            }
            now.set(firstAskedAt + LogEndOffsets.INTERVAL_NANOS);
            AtomicInteger laterAnswers = new AtomicInteger();
            ends.ask(List.of(partition), (p, end) -> laterAnswers.incrementAndGet());
            Await.until(
                    "an answer to the question an interval later",
                    WAIT,
                    () -> laterAnswers.get() == 1);
            // Kafka answers one connection's requests in order: any of the ten would be in.
            assertThat(answers.get()).as("the first question's, none of the ten's").isEqualTo(1);
        }
    }

    @Test
    @Timeout(30)
    void closingWithAQuestionInFlightReturns() {
        // No broker listens there: the question stays in flight until the close fails it.
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1");
        LogEndOffsets ends = new LogEndOffsets(props);
        AtomicInteger answers = new AtomicInteger();
        ends.ask(List.of(new TopicPartition("t", 0)), (p, end) -> answers.incrementAndGet());

        ends.close();

        assertThat(answers.get()).as("no end answered").isZero();
    }
}
