package dev.sluice.client.job;

import dev.sluice.client.Limits;
import dev.sluice.client.annotation.PublicEvolving;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The user's side of the job topics: puts {@link JobCommand}s on the jobs topic, keyed by job id so
 * one job's commands stay in order, and reads {@link JobStatus}es back from the status topic.
 *
 * <pre>{@code
 * try (JobClient jobs = JobClient.builder().bootstrapServers("broker:9092").build()) {
 *     jobs.submit(JobSpecJson.parse(Files.readString(path)));
 *     jobs.awaitStatus(id, s -> s.state().isTerminal(), Duration.ofMinutes(10));
 * }
 * }</pre>
 */
@PublicEvolving
public final class JobClient implements AutoCloseable {

    public static final String DEFAULT_JOBS_TOPIC = "sluice-jobs";
    public static final String DEFAULT_STATUS_TOPIC = "sluice-job-status";

    private static final Logger LOG = LoggerFactory.getLogger(JobClient.class);
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration POLL = Duration.ofMillis(200);

    private final Properties clientProperties;
    private final String jobsTopic;
    private final String statusTopic;
    private final KafkaProducer<String, byte[]> producer;

    private JobClient(Builder builder) {
        this.clientProperties = builder.properties();
        this.jobsTopic = builder.jobsTopic;
        this.statusTopic = builder.statusTopic;
        this.producer = KafkaClients.producer(clientProperties);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Puts the job on the jobs topic; returns once the broker has acknowledged it. */
    public void submit(JobSpec spec) {
        send(new JobCommand.Submit(spec));
    }

    /**
     * Asks the scheduler to cancel the job; returns once the broker has acknowledged the request.
     */
    public void cancel(String jobId) {
        send(new JobCommand.Cancel(jobId));
    }

    /** Every status on the status topic now, each job's in the order they were published. */
    public List<JobStatus> statuses() {
        List<JobStatus> statuses = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> record : readAll(statusTopic)) {
            decode(record).ifPresent(statuses::add);
        }
        return statuses;
    }

    /**
     * Whether a job of this id exists: a status of it is on the status topic, or its submission is
     * on the jobs topic, not answered yet. The scheduler ignores a second submission of an id
     * (docs/generation.md, "The scheduler"), so a user asking for one is told instead.
     */
    public boolean exists(String jobId) {
        if (!statuses(jobId).isEmpty()) {
            return true;
        }
        byte[] key = jobId.getBytes(StandardCharsets.UTF_8);
        for (ConsumerRecord<byte[], byte[]> record : readAll(jobsTopic)) {
            if (Arrays.equals(record.key(), key) && isSubmission(record.value())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Which of the jobs and status topics the cluster does not have, in name order: a submission to
     * a missing jobs topic waits for it until it times out, and the status of a job is on a topic
     * that is not there. The generation job creates both when it starts.
     */
    public Set<String> missingTopics() {
        try (KafkaConsumer<byte[], byte[]> consumer = KafkaClients.consumer(clientProperties)) {
            Set<String> missing = new TreeSet<>(List.of(jobsTopic, statusTopic));
            missing.removeAll(consumer.listTopics().keySet());
            return missing;
        }
    }

    /** The job's statuses on the status topic now, in the order they were published. */
    public List<JobStatus> statuses(String jobId) {
        return statuses().stream().filter(s -> s.jobId().equals(jobId)).toList();
    }

    /**
     * Waits for the first status of the job, published before or after this call, that matches.
     *
     * @throws TimeoutException if none did within the timeout
     */
    public JobStatus awaitStatus(String jobId, Predicate<JobStatus> predicate, Duration timeout)
            throws TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KafkaConsumer<byte[], byte[]> consumer = KafkaClients.consumer(clientProperties)) {
            List<TopicPartition> partitions = List.of();
            while (System.nanoTime() < deadline) {
                if (partitions.isEmpty()) {
                    // The scheduler may create the status topic after the user started waiting.
                    partitions = KafkaClients.partitions(consumer, statusTopic);
                    if (partitions.isEmpty()) {
                        LockSupport.parkNanos(POLL.toNanos());
                        continue;
                    }
                    consumer.assign(partitions);
                    consumer.seekToBeginning(partitions);
                    continue;
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                    var status = decode(record);
                    if (status.isPresent()
                            && status.get().jobId().equals(jobId)
                            && predicate.test(status.get())) {
                        return status.get();
                    }
                }
            }
        }
        throw new TimeoutException(
                "no matching status of job " + jobId + " on " + statusTopic + " in " + timeout);
    }

    @Override
    public void close() {
        producer.close();
    }

    private void send(JobCommand command) {
        KafkaClients.sendAndWait(
                producer,
                new ProducerRecord<>(jobsTopic, command.jobId(), JobCommandJson.write(command)));
    }

    /** Every record of a topic now, from its beginning; none while the topic does not exist. */
    private List<ConsumerRecord<byte[], byte[]>> readAll(String topic) {
        try (KafkaConsumer<byte[], byte[]> consumer = KafkaClients.consumer(clientProperties)) {
            List<TopicPartition> partitions = KafkaClients.partitions(consumer, topic);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            return KafkaClients.readToEnd(consumer, READ_TIMEOUT);
        }
    }

    /** A malformed command submits nothing: the scheduler refuses it and the id stays free. */
    private static boolean isSubmission(byte[] command) {
        try {
            return JobCommandJson.parse(command) instanceof JobCommand.Submit;
        } catch (JobSpecException e) {
            return false;
        }
    }

    /**
     * A bad status is the scheduler's bug, not the user's: it is logged and the rest still read.
     */
    private static Optional<JobStatus> decode(ConsumerRecord<byte[], byte[]> record) {
        try {
            return Optional.of(JobStatusJson.parse(record.value()));
        } catch (JobSpecException e) {
            LOG.warn(
                    "skipping malformed status at {}-{} offset {}: {}",
                    record.topic(),
                    record.partition(),
                    record.offset(),
                    e.getMessage());
            return Optional.empty();
        }
    }

    /** Settings of a {@link JobClient}; only the bootstrap servers are required. */
    @PublicEvolving
    public static final class Builder {

        private String bootstrapServers;
        private String jobsTopic = DEFAULT_JOBS_TOPIC;
        private String statusTopic = DEFAULT_STATUS_TOPIC;
        private final Properties extra = new Properties();

        private Builder() {}

        /** {@code host:port[,host:port...]} of the Kafka cluster. */
        public Builder bootstrapServers(String bootstrapServers) {
            this.bootstrapServers = bootstrapServers;
            return this;
        }

        public Builder jobsTopic(String jobsTopic) {
            this.jobsTopic = jobsTopic;
            return this;
        }

        public Builder statusTopic(String statusTopic) {
            this.statusTopic = statusTopic;
            return this;
        }

        /**
         * A Kafka client property (security, timeouts...) given to both the producer and the
         * consumers. Serializers, {@code acks} and idempotence are fixed by the client.
         */
        public Builder property(String key, String value) {
            extra.setProperty(Objects.requireNonNull(key), Objects.requireNonNull(value));
            return this;
        }

        public Builder properties(Map<String, String> properties) {
            properties.forEach(this::property);
            return this;
        }

        /**
         * @throws IllegalArgumentException if the bootstrap servers are missing, a topic name is
         *     not a valid Kafka topic name, or both topics are the same
         */
        public JobClient build() {
            if (bootstrapServers == null || bootstrapServers.isBlank()) {
                throw new IllegalArgumentException("bootstrap servers are required");
            }
            checkTopic("jobs topic", jobsTopic);
            checkTopic("status topic", statusTopic);
            if (jobsTopic.equals(statusTopic)) {
                throw new IllegalArgumentException(
                        "the jobs and status topics must differ, both are '" + jobsTopic + "'");
            }
            return new JobClient(this);
        }

        private Properties properties() {
            Properties props = new Properties();
            props.putAll(extra);
            props.setProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
            return props;
        }

        private static void checkTopic(String what, String topic) {
            if (!Limits.isTopicName(topic)) {
                throw new IllegalArgumentException(
                        what
                                + " must be a Kafka topic name ([A-Za-z0-9._-], 1 to 249), got '"
                                + topic
                                + "'");
            }
        }
    }
}
