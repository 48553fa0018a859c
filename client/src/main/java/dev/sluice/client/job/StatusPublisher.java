package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;

/**
 * The scheduler's side of the status topic: publishes {@link JobStatus}es keyed by job id, so one
 * job's statuses stay in order. Which status may follow which is the caller's to respect ({@link
 * JobState#canMoveTo}); the scheduler is the one that knows a job's history across failovers.
 */
@PublicEvolving
public final class StatusPublisher implements AutoCloseable {

    private final String statusTopic;
    private final KafkaProducer<String, byte[]> producer;
    private final AtomicReference<Exception> failure = new AtomicReference<>();

    /**
     * @param clientProperties Kafka client properties, {@code bootstrap.servers} at least
     */
    public StatusPublisher(Properties clientProperties, String statusTopic) {
        this.statusTopic = Objects.requireNonNull(statusTopic);
        this.producer = KafkaClients.producer(clientProperties);
    }

    /**
     * Sends the status without waiting for the broker: a scheduler that waited for each
     * acknowledgement (milliseconds with {@code acks=all}) held a job's start back by one for its
     * ACCEPTED and one for its RUNNING. {@link #flush} waits for every status sent; a send that
     * failed is reported there, or by the next {@code send}.
     *
     * @throws KafkaException if an earlier send failed
     */
    public void send(JobStatus status) {
        throwFailure();
        producer.send(
                record(status),
                (metadata, error) -> {
                    if (error != null) {
                        failure.compareAndSet(null, error);
                    }
                });
    }

    /**
     * Waits until every status sent is acknowledged.
     *
     * @throws KafkaException naming the first status send that failed
     */
    public void flush() {
        producer.flush();
        throwFailure();
    }

    private void throwFailure() {
        Exception error = failure.get();
        if (error != null) {
            throw new KafkaException("could not write a job status to " + statusTopic, error);
        }
    }

    private ProducerRecord<String, byte[]> record(JobStatus status) {
        return new ProducerRecord<>(statusTopic, status.jobId(), JobStatusJson.write(status));
    }

    @Override
    public void close() {
        producer.close();
    }
}
