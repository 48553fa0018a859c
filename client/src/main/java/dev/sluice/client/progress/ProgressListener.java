package dev.sluice.client.progress;

import dev.sluice.client.annotation.Internal;
import dev.sluice.client.thread.SluiceThreads;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the progress topic on a thread of its own, every partition from its start, and hands each
 * decoded {@link DeliveryProgress} to the writer. From the start, because progress records are sent
 * only when a reader moves: the latest record of an idle reader may be old, and a writer
 * (re)started after it must still learn it. A record that is not a progress record is counted and
 * logged with its partition and offset, never applied.
 *
 * <p>The thread blocks in {@code poll}; {@link #close()} wakes it and waits until it ended
 * (docs/architecture.md, "Threads"). Every chunk writer bounds its bytes in flight with one: the
 * Flink sink's writers and the plain {@code StreamWriter}.
 */
@Internal
public final class ProgressListener implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProgressListener.class);
    private static final Duration POLL = Duration.ofSeconds(1);
    // What the progress consumer copies from the chunk producer's properties: where the cluster is
    // and how to talk to it, not how to produce.
    private static final Pattern CONNECTION_PROPERTY =
            Pattern.compile(
                    "bootstrap\\.servers|client\\.dns\\.lookup|security\\.protocol|(ssl|sasl)\\..*"
                            + "|(socket\\.connection\\.setup|reconnect\\.backoff|retry\\.backoff"
                            + "|request\\.timeout|metadata\\.max\\.age)\\..*");

    private final org.apache.kafka.clients.consumer.Consumer<byte[], byte[]> consumer;
    private final String topic;
    private final long refreshNanos;
    private final Consumer<List<DeliveryProgress>> onProgress;
    private final Consumer<Exception> onFailure;
    private final Set<TopicPartition> assigned = new HashSet<>();
    private final AtomicLong records = new AtomicLong();
    private final AtomicLong malformed = new AtomicLong();
    private final Thread thread;
    private volatile boolean running = true;
    private boolean started;

    /**
     * @param onProgress gets the decoded records of each poll, on the listener's thread
     * @param onFailure gets what stopped the listener (the consumer failed), on its thread
     * @param threadName the name of the listener's thread
     */
    public ProgressListener(
            org.apache.kafka.clients.consumer.Consumer<byte[], byte[]> consumer,
            String topic,
            Duration partitionRefresh,
            Consumer<List<DeliveryProgress>> onProgress,
            Consumer<Exception> onFailure,
            String threadName) {
        this.consumer = consumer;
        this.topic = topic;
        this.refreshNanos = partitionRefresh.toNanos();
        this.onProgress = onProgress;
        this.onFailure = onFailure;
        this.thread = SluiceThreads.newThread(threadName, this::run);
    }

    /**
     * Assigns the topic's partitions from their start and starts the thread.
     *
     * @throws IOException if the progress topic has no partitions (it does not exist)
     */
    public void start() throws IOException {
        assignNewPartitions();
        if (assigned.isEmpty()) {
            throw new IOException(
                    "progress topic "
                            + topic
                            + " not found: create it (stream readers publish their delivery"
                            + " progress there, and chunk writers bound their bytes in flight by"
                            + " it)");
        }
        started = true;
        thread.start();
    }

    private void assignNewPartitions() {
        List<PartitionInfo> infos = consumer.partitionsFor(topic);
        if (infos == null) {
            return;
        }
        List<TopicPartition> fresh = new ArrayList<>();
        for (PartitionInfo info : infos) {
            TopicPartition partition = new TopicPartition(topic, info.partition());
            if (!assigned.contains(partition)) {
                fresh.add(partition);
            }
        }
        if (!fresh.isEmpty()) {
            assigned.addAll(fresh);
            consumer.assign(new ArrayList<>(assigned));
            consumer.seekToBeginning(fresh);
        }
    }

    private void run() {
        long nextRefresh = System.nanoTime() + refreshNanos;
        try {
            while (running) {
                if (System.nanoTime() - nextRefresh >= 0) {
                    assignNewPartitions();
                    nextRefresh = System.nanoTime() + refreshNanos;
                }
                List<DeliveryProgress> batch = new ArrayList<>();
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                    try {
                        batch.add(DeliveryProgressCodec.decode(record.key(), record.value()));
                        records.incrementAndGet();
                    } catch (IllegalArgumentException e) {
                        malformed(record, e);
                    }
                }
                if (!batch.isEmpty()) {
                    onProgress.accept(batch);
                }
            }
        } catch (WakeupException e) {
            if (running) {
                onFailure.accept(e);
            }
        } catch (Exception e) {
            if (running) {
                LOG.error("the delivery progress consumer of {} failed", topic, e);
                onFailure.accept(e);
            }
        } finally {
            consumer.close(Duration.ZERO);
        }
    }

    private void malformed(ConsumerRecord<byte[], byte[]> record, IllegalArgumentException e) {
        // One bad record per reader bug can repeat at the progress rate: log the first and every
        // 100th.
        if (malformed.getAndIncrement() % 100 == 0) {
            LOG.warn(
                    "not a delivery progress record at {}-{} offset {} ({} so far): {}",
                    record.topic(),
                    record.partition(),
                    record.offset(),
                    malformed.get(),
                    e.getMessage());
        }
    }

    /** Progress records read and applied. */
    public long records() {
        return records.get();
    }

    /** Records of the progress topic that were not progress records. */
    public long malformed() {
        return malformed.get();
    }

    /**
     * The progress consumer's properties: the connection and security ones of the chunk producer's
     * ({@code bootstrap.servers}, {@code security.*}, {@code ssl.*}, {@code sasl.*}, connection
     * timeouts), then {@code own} over them.
     *
     * @throws IllegalStateException if they hold a {@code group.id}: the consumer reads every
     *     partition from the start without a group
     */
    public static Properties consumerProperties(Properties producer, Properties own) {
        Properties consumer = new Properties();
        for (Map.Entry<Object, Object> e : producer.entrySet()) {
            if (CONNECTION_PROPERTY.matcher(e.getKey().toString()).matches()) {
                consumer.put(e.getKey(), e.getValue());
            }
        }
        consumer.putAll(own);
        if (consumer.containsKey(ConsumerConfig.GROUP_ID_CONFIG)) {
            throw new IllegalStateException(
                    "progress consumer group.id: the consumer reads every partition from the"
                            + " start without a group; leave it out");
        }
        return consumer;
    }

    /**
     * A progress consumer of these properties: no commits, bytes in, {@code clientId} unless set,
     * and {@link BrokerLossTimeouts} unless they set their own.
     */
    public static KafkaConsumer<byte[], byte[]> newConsumer(
            Properties properties, String clientId) {
        // A lost broker is told in seconds (BrokerLossTimeouts): the writers' caps wait on this.
        Properties props = BrokerLossTimeouts.withDefaults(properties);
        props.putIfAbsent(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        if (!started) {
            consumer.close(Duration.ZERO);
            return;
        }
        consumer.wakeup();
        thread.join(Duration.ofSeconds(10).toMillis());
    }
}
