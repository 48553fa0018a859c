package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.Objects;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The scheduler's side of the status topic: publishes {@link JobStatus}es keyed by job id, so one
 * job's statuses stay in order. Which status may follow which is the caller's to respect ({@link
 * JobState#canMoveTo}); the scheduler is the one that knows a job's history across failovers.
 */
@PublicEvolving
public final class StatusPublisher implements AutoCloseable {

    private final String statusTopic;
    private final KafkaProducer<String, byte[]> producer;

    /**
     * @param clientProperties Kafka client properties, {@code bootstrap.servers} at least
     */
    public StatusPublisher(Properties clientProperties, String statusTopic) {
        this.statusTopic = Objects.requireNonNull(statusTopic);
        this.producer = KafkaClients.producer(clientProperties);
    }

    /** Publishes the status; returns once the broker has acknowledged it. */
    public void publish(JobStatus status) {
        KafkaClients.sendAndWait(
                producer,
                new ProducerRecord<>(statusTopic, status.jobId(), JobStatusJson.write(status)));
    }

    @Override
    public void close() {
        producer.close();
    }
}
