package dev.sluice.flink.generation.scheduler;

import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobCommand;
import dev.sluice.client.job.JobCommandReader;
import dev.sluice.client.job.JobStatus;
import dev.sluice.client.job.MalformedCommand;
import dev.sluice.client.job.StatusPublisher;
import dev.sluice.client.progress.BrokerLossTimeouts;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.DeliveryProgressCodec;
import dev.sluice.client.thread.SluiceThreads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.flink.annotation.Internal;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane on Kafka topics: commands from the jobs topic and delivery progress from the
 * progress topic, read by one consumer from their start (or the checkpointed positions), so that a
 * poll returns as soon as either has a record; statuses to the status topic. Creates the three
 * topics when they are missing (one partition each, the cluster's default replication). Moves the
 * chunk topics' leadership back to their preferred brokers when asked ({@link
 * PreferredLeaderElection}).
 */
@Internal
public final class KafkaControlPlane implements ControlPlane {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaControlPlane.class);

    // How long the check of a submission's chunk topics waits for the cluster.
    private static final Duration TOPICS_TIMEOUT = Duration.ofSeconds(5);

    private final Properties properties;
    private final String jobsTopic;
    private final String statusTopic;
    private final String progressTopic;
    private final KafkaConsumer<byte[], byte[]> consumer;
    // The control topics whose partitions the consumer reads; a topic created a moment ago may not
    // be in the broker's metadata yet.
    private final Set<String> assignedTopics = new HashSet<>();
    private final JobCommandReader commands;
    private final List<MalformedCommand> malformed = new ArrayList<>();
    private final StatusPublisher statuses;
    // Read positions to resume at, "topic-partition" → offset, applied when partitions are
    // assigned.
    private Map<String, Long> restored = Map.of();
    private boolean closed;
    private final KafkaProducer<byte[], byte[]> progressProducer;
    // Asks which chunk topics exist, on the scheduler's thread (the consumer is the poll's), and
    // elects the chunk topics' preferred leaders on the elections' thread.
    private final Admin admin;
    private final PreferredLeaderElection leaders;
    // The elections' thread: its Admin calls wait for the cluster, and no poll waits for them.
    private final ScheduledExecutorService leaderElections;

    public KafkaControlPlane(
            Properties clientProperties,
            String jobsTopic,
            String statusTopic,
            String progressTopic) {
        // Every client here reads or writes the control topics, whose leader a host fault may take
        // away: it must not keep the scheduler deaf for Kafka's 30 s request timeout. Only these
        // properties are used below, by the status and progress producers too.
        this.properties = BrokerLossTimeouts.withDefaults(clientProperties);
        this.jobsTopic = jobsTopic;
        this.statusTopic = statusTopic;
        this.progressTopic = progressTopic;
        createMissingTopics();
        this.consumer = consumer();
        this.commands = new JobCommandReader(consumer, malformed::add);
        this.statuses = new StatusPublisher(properties, statusTopic);
        this.progressProducer =
                new KafkaProducer<>(
                        properties, new ByteArraySerializer(), new ByteArraySerializer());
        this.admin = Admin.create(properties);
        this.leaders = new PreferredLeaderElection(admin);
        this.leaderElections =
                Executors.newSingleThreadScheduledExecutor(
                        SluiceThreads.factory("sluice-preferred-leaders"));
    }

    @Override
    public Set<String> missingTopics(Set<String> topics) {
        try {
            Set<String> existing =
                    admin.listTopics()
                            .names()
                            .get(TOPICS_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            Set<String> missing = new HashSet<>(topics);
            missing.removeAll(existing);
            return missing;
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("could not tell whether the topics {} exist: {}", topics, e.toString());
            return Set.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Set.of();
        }
    }

    @Override
    public Map<String, Integer> maxMessageBytes(Set<String> topics) {
        List<ConfigResource> resources = new ArrayList<>();
        topics.forEach(
                topic -> resources.add(new ConfigResource(ConfigResource.Type.TOPIC, topic)));
        Map<String, Integer> limits = new HashMap<>();
        try {
            admin.describeConfigs(resources)
                    .all()
                    .get(TOPICS_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .forEach(
                            (resource, config) -> {
                                ConfigEntry entry =
                                        config.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
                                if (entry != null && entry.value() != null) {
                                    limits.put(resource.name(), Integer.parseInt(entry.value()));
                                }
                            });
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("could not read the max.message.bytes of {}: {}", topics, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return limits;
    }

    private KafkaConsumer<byte[], byte[]> consumer() {
        Properties props = new Properties();
        props.putAll(properties);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private void createMissingTopics() {
        try (Admin admin = Admin.create(properties)) {
            Set<String> existing = admin.listTopics().names().get();
            List<NewTopic> missing = new ArrayList<>();
            for (String topic : List.of(jobsTopic, statusTopic, progressTopic)) {
                if (!existing.contains(topic)) {
                    // One partition: one ordered log; the cluster's default replication.
                    missing.add(new NewTopic(topic, Optional.of(1), Optional.empty()));
                }
            }
            if (!missing.isEmpty()) {
                admin.createTopics(missing).all().get();
                LOG.info("created {}", missing);
            }
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new IllegalStateException("creating the control topics", e.getCause());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted creating the control topics", e);
        }
    }

    /**
     * Adds the partitions of the control topics that are in the broker's metadata now and were not
     * read yet, from their start or the restored positions; whether any topic is read.
     */
    private boolean assignKnownTopics() {
        List<TopicPartition> added = new ArrayList<>();
        for (String topic : List.of(jobsTopic, progressTopic)) {
            if (assignedTopics.contains(topic)) {
                continue;
            }
            List<PartitionInfo> infos = consumer.partitionsFor(topic);
            if (infos == null || infos.isEmpty()) {
                continue;
            }
            assignedTopics.add(topic);
            for (PartitionInfo info : infos) {
                added.add(new TopicPartition(topic, info.partition()));
            }
        }
        if (!added.isEmpty()) {
            // Partitions assigned before keep their positions.
            List<TopicPartition> all = new ArrayList<>(consumer.assignment());
            all.addAll(added);
            consumer.assign(all);
            consumer.seekToBeginning(added);
            for (TopicPartition partition : added) {
                Long offset = restored.get(partition.toString());
                if (offset != null) {
                    consumer.seek(partition, offset);
                }
            }
        }
        return !assignedTopics.isEmpty();
    }

    @Override
    public Set<String> knownJobs() {
        Map<String, String> others = toMap(properties);
        String servers = others.remove(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        try (JobClient client =
                JobClient.builder()
                        .bootstrapServers(servers)
                        .properties(others)
                        .jobsTopic(jobsTopic)
                        .statusTopic(statusTopic)
                        .build()) {
            Set<String> known = new HashSet<>();
            client.statuses().forEach(status -> known.add(status.jobId()));
            return known;
        }
    }

    private static Map<String, String> toMap(Properties properties) {
        Map<String, String> map = new HashMap<>();
        properties.forEach((k, v) -> map.put(k.toString(), v.toString()));
        return map;
    }

    @Override
    public void seek(Map<String, Long> positions) {
        restored = Map.copyOf(positions);
    }

    /** Runs on a worker thread; {@link #close} waits for it, from the scheduler's thread. */
    @Override
    public synchronized Batch poll(Duration timeout) {
        if (closed || !assignKnownTopics()) {
            return new Batch(List.of(), List.of(), List.of(), Map.of());
        }
        ConsumerRecords<byte[], byte[]> records = consumer.poll(timeout);
        List<JobCommand> polledCommands = commands.decode(records.records(jobsTopic));
        List<MalformedCommand> bad = List.copyOf(malformed);
        malformed.clear();
        List<DeliveryProgress> progress = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> record : records.records(progressTopic)) {
            try {
                progress.add(DeliveryProgressCodec.decode(record.key(), record.value()));
            } catch (IllegalArgumentException e) {
                LOG.warn(
                        "skipping a malformed progress record at {}-{} offset {}: {}",
                        record.topic(),
                        record.partition(),
                        record.offset(),
                        e.getMessage());
            }
        }
        Map<String, Long> positions = new HashMap<>();
        for (TopicPartition partition : consumer.assignment()) {
            positions.put(partition.toString(), consumer.position(partition));
        }
        return new Batch(polledCommands, bad, progress, positions);
    }

    @Override
    public void restorePreferredLeaders(Supplier<Set<String>> chunkTopics, Duration interval) {
        leaderElections.scheduleWithFixedDelay(
                () -> leaders.run(chunkTopics.get()),
                interval.toMillis(),
                interval.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    @Override
    public void publish(JobStatus status) {
        statuses.send(status);
        LOG.info(
                "job {}: {}{}",
                status.jobId(),
                status.state(),
                status.reason().map(r -> " (" + r + ")").orElse(""));
    }

    @Override
    public void flush() {
        statuses.flush();
    }

    @Override
    public void release(List<DeliveryProgress> ends) {
        for (DeliveryProgress end : ends) {
            progressProducer.send(
                    new ProducerRecord<>(
                            progressTopic,
                            DeliveryProgressCodec.key(end),
                            DeliveryProgressCodec.encode(end)));
        }
        progressProducer.flush();
    }

    @Override
    public synchronized void close() {
        closed = true;
        leaderElections.shutdownNow();
        consumer.close();
        statuses.close();
        progressProducer.close();
        admin.close();
    }
}
