package dev.sluice.flink.source.reader;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.function.LongSupplier;
import java.util.function.ObjLongConsumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks Kafka for the log end of the reader's partitions, which {@code pendingRecords} needs
 * (docs/flink-source.md, "Metrics"): one ListOffsets request through an Admin client of the
 * reader's own, made at the first question, at the source's {@code isolation.level} (so the last
 * stable offset under {@code read_committed}, as a consumer's lag counts). A question never blocks:
 * the request goes out and its answer is handed over when it comes. At most one is in flight, and
 * at most one goes out a second, so a reporter that reads the metric often costs Kafka nothing
 * more.
 *
 * <p>The same in both modes: a PUSH reader has no consumer whose lag it could read, and the daemon
 * does not send its readers its fetch responses' high watermarks.
 */
final class LogEndOffsets implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogEndOffsets.class);

    /** The least time from one request to the next. */
    static final long INTERVAL_NANOS = Duration.ofSeconds(1).toNanos();

    private final Properties properties;
    private final ListOffsetsOptions options;
    private final LongSupplier nanoClock;
    private Admin admin;
    private boolean inFlight;
    private long askedAt;
    private boolean failing;
    private boolean closed;

    /**
     * @param kafkaProperties the source's, with the admin client's {@code client.id}
     */
    LogEndOffsets(Properties kafkaProperties) {
        this(kafkaProperties, System::nanoTime);
    }

    /**
     * @param nanoClock the time questions are asked at, on the {@link System#nanoTime()} scale
     */
    LogEndOffsets(Properties kafkaProperties, LongSupplier nanoClock) {
        this.properties = kafkaProperties;
        this.options =
                new ListOffsetsOptions(
                        "read_committed"
                                        .equals(
                                                kafkaProperties.getProperty(
                                                        ConsumerConfig.ISOLATION_LEVEL_CONFIG))
                                ? IsolationLevel.READ_COMMITTED
                                : IsolationLevel.READ_UNCOMMITTED);
        this.nanoClock = nanoClock;
        this.askedAt = nanoClock.getAsLong() - INTERVAL_NANOS;
    }

    /**
     * Asks for the partitions' ends, unless a question is in flight or was asked a moment ago;
     * {@code answer} takes each partition's end as it comes, on the Admin client's thread.
     */
    synchronized void ask(
            Collection<TopicPartition> partitions, ObjLongConsumer<TopicPartition> answer) {
        long now = nanoClock.getAsLong();
        if (closed || inFlight || now - askedAt < INTERVAL_NANOS) {
            return;
        }
        if (admin == null) {
            admin = Admin.create(properties);
        }
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        partitions.forEach(partition -> latest.put(partition, OffsetSpec.latest()));
        inFlight = true;
        askedAt = now;
        admin.listOffsets(latest, options)
                .all()
                .whenComplete(
                        (ends, error) -> {
                            if (ends != null) {
                                ends.forEach(
                                        (partition, end) -> answer.accept(partition, end.offset()));
                            }
                            answered(partitions, error);
                        });
    }

    private synchronized void answered(Collection<TopicPartition> partitions, Throwable error) {
        inFlight = false;
        // Once per stretch of failures: the metric keeps the ends of the last answer meanwhile.
        if (error != null && !failing && !closed) {
            LOG.warn(
                    "asking the log end of {} for pendingRecords failed: {}",
                    partitions,
                    error.toString());
        }
        failing = error != null;
    }

    /**
     * Closes the Admin client outside this object's lock: closing it fails the question in flight
     * on the client's thread, whose answer takes the lock, and the close waits for that thread.
     * Held, the lock deadlocked a source whose task ended while a reporter's read of {@code
     * pendingRecords} had a question out.
     */
    @Override
    public void close() {
        Admin closing;
        synchronized (this) {
            closed = true;
            closing = admin;
        }
        if (closing != null) {
            closing.close(Duration.ZERO);
        }
    }
}
