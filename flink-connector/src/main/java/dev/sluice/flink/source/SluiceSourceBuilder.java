package dev.sluice.flink.source;

import dev.sluice.client.Limits;
import dev.sluice.flink.source.enumerator.TopicSubscriber;
import dev.sluice.flink.source.reader.ReaderSettings;
import dev.sluice.flink.source.reader.push.PushSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a {@link SluiceSource}; {@link #build()} checks that the settings fit together. Kafka
 * client properties ({@link #setProperty}) reach the PULL consumers and the enumerator's admin
 * client as they are.
 */
@PublicEvolving
public final class SluiceSourceBuilder<T> {
    /** Where {@code sluice-brokerd} listens unless told otherwise. */
    public static final String DEFAULT_SOCKET = "/run/sluice/brokerd.sock";

    /** The slots of a PUSH subscription's segment unless {@link #setSlots} says otherwise. */
    public static final int DEFAULT_SLOT_COUNT = 64;

    /** The bytes of a slot unless {@link #setSlots} says otherwise. */
    public static final long DEFAULT_SLOT_SIZE = 1 << 20;

    /** The batches a TaskManager's readers hold at once unless {@link #setSlots} says otherwise. */
    public static final int DEFAULT_MAX_OPEN_BATCHES = 8;

    /**
     * The isolation level unless {@code setProperty("isolation.level", ...)} says otherwise: a
     * Kafka consumer's default, and so {@code KafkaSource}'s.
     */
    public static final String DEFAULT_ISOLATION_LEVEL = "read_uncommitted";

    /**
     * The property {@link #setClientIdPrefix} sets, {@code KafkaSourceOptions.CLIENT_ID_PREFIX}'s
     * key, so that properties written for a {@code KafkaSource} set it too.
     */
    public static final String CLIENT_ID_PREFIX = "client.id.prefix";

    private static final Logger LOG = LoggerFactory.getLogger(SluiceSourceBuilder.class);
    private static final String READ_COMMITTED = "read_committed";

    private final Properties kafka = new Properties();
    // Each topic-subscriber setter (topics, pattern, partitions) fills its own; build() checks that
    // exactly one was called.
    private List<String> topics;
    private Pattern topicPattern;
    private Set<TopicPartition> partitions;
    private String groupId = "";
    private SluiceOffsets startingOffsets = SluiceOffsets.earliest();
    private SluiceOffsets stoppingOffsets;
    private boolean bounded;
    private Duration discoveryInterval = Duration.ofSeconds(30);
    private ReadMode readMode = ReadMode.AUTO;
    private Path socket = Path.of(DEFAULT_SOCKET);
    private int slotCount = DEFAULT_SLOT_COUNT;
    private long slotSize = DEFAULT_SLOT_SIZE;
    private int maxOpenBatches = DEFAULT_MAX_OPEN_BATCHES;
    private Boolean commitOffsetsOnCheckpoint;
    private SluiceDeserializationSchema<T> deserializer;

    SluiceSourceBuilder() {}

    public SluiceSourceBuilder<T> setBootstrapServers(String servers) {
        return setProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, servers);
    }

    /**
     * Reads every partition of these topics, also partitions added later; call one of this, {@link
     * #setTopicPattern} and {@link #setPartitions}.
     */
    public SluiceSourceBuilder<T> setTopics(List<String> topics) {
        this.topics = new ArrayList<>(topics);
        return this;
    }

    public SluiceSourceBuilder<T> setTopics(String... topics) {
        return setTopics(Arrays.asList(topics));
    }

    /**
     * Reads every partition of the topics whose whole name matches {@code pattern}, including
     * topics created while the job runs: each partition discovery ({@link
     * #setPartitionDiscoveryInterval}) looks for new ones.
     */
    public SluiceSourceBuilder<T> setTopicPattern(Pattern pattern) {
        this.topicPattern = Objects.requireNonNull(pattern);
        return this;
    }

    /** Reads these partitions only; one that does not exist fails the job, naming it. */
    public SluiceSourceBuilder<T> setPartitions(Set<TopicPartition> partitions) {
        this.partitions = new HashSet<>(partitions);
        return this;
    }

    /** The consumer group: committed offsets as starts, and where checkpoints commit to. */
    public SluiceSourceBuilder<T> setGroupId(String groupId) {
        this.groupId = Objects.requireNonNull(groupId);
        return this;
    }

    /** Where partitions start when not restored from a checkpoint; the earliest by default. */
    public SluiceSourceBuilder<T> setStartingOffsets(SluiceOffsets offsets) {
        this.startingOffsets = Objects.requireNonNull(offsets);
        return this;
    }

    /**
     * Makes the source bounded: each partition ends before these offsets, resolved when it is
     * discovered, and the source ends when every partition has. Replaces {@link #setUnbounded}.
     */
    public SluiceSourceBuilder<T> setBounded(SluiceOffsets stoppingOffsets) {
        this.stoppingOffsets = Objects.requireNonNull(stoppingOffsets);
        this.bounded = true;
        return this;
    }

    /**
     * Each partition ends before these offsets, but the source stays unbounded ({@code
     * CONTINUOUS_UNBOUNDED}, as {@code KafkaSource}'s {@code setUnbounded}): it keeps discovering
     * partitions, and runs until cancelled. Replaces {@link #setBounded}.
     */
    public SluiceSourceBuilder<T> setUnbounded(SluiceOffsets stoppingOffsets) {
        this.stoppingOffsets = Objects.requireNonNull(stoppingOffsets);
        this.bounded = false;
        return this;
    }

    /** How often an unbounded source looks for new partitions (30 s); zero: only at start. */
    public SluiceSourceBuilder<T> setPartitionDiscoveryInterval(Duration interval) {
        this.discoveryInterval = Objects.requireNonNull(interval);
        return this;
    }

    public SluiceSourceBuilder<T> setReadMode(ReadMode mode) {
        this.readMode = Objects.requireNonNull(mode);
        return this;
    }

    /** The control socket of the {@code sluice-brokerd} on every TaskManager's host. */
    public SluiceSourceBuilder<T> setBrokerdSocket(Path socket) {
        this.socket = Objects.requireNonNull(socket);
        return this;
    }

    /**
     * PUSH: the segment of each subscription ({@code count} slots of {@code size} bytes, 64 × 1
     * MiB), and how many of its batches the TaskManager's readers may hold at once (8): the most a
     * reader buffers.
     */
    public SluiceSourceBuilder<T> setSlots(int count, long size, int maxOpenBatches) {
        this.slotCount = count;
        this.slotSize = size;
        this.maxOpenBatches = maxOpenBatches;
        return this;
    }

    /** Commit offsets to the group when a checkpoint completes: on whenever a group is set. */
    public SluiceSourceBuilder<T> setCommitOffsetsOnCheckpoint(boolean commit) {
        this.commitOffsetsOnCheckpoint = commit;
        return this;
    }

    /**
     * What the {@code client.id} of each of the source's Kafka clients starts with: {@code
     * <prefix>-<subtask>} for a reader's consumer, as {@code KafkaSource} names them. Unset, the
     * prefix is the {@code client.id} property if set, else the group id, else {@code
     * sluice-source-<random>}. Set with a {@code client.id} property, the prefix wins and {@link
     * #build} says so at WARN (docs/flink-source.md, "Client ids").
     */
    public SluiceSourceBuilder<T> setClientIdPrefix(String prefix) {
        return setProperty(CLIENT_ID_PREFIX, prefix);
    }

    public SluiceSourceBuilder<T> setDeserializer(SluiceDeserializationSchema<T> deserializer) {
        this.deserializer = Objects.requireNonNull(deserializer);
        return this;
    }

    public SluiceSourceBuilder<T> setValueOnlyDeserializer(DeserializationSchema<T> schema) {
        return setDeserializer(SluiceDeserializationSchema.valueOnly(schema));
    }

    /**
     * A Kafka client property, passed through to the consumers and the admin client. {@code
     * isolation.level} ({@code read_uncommitted}, the default, or {@code read_committed}) is the
     * source's in both modes: PUSH subscriptions read with it too.
     */
    public SluiceSourceBuilder<T> setProperty(String key, String value) {
        kafka.setProperty(Objects.requireNonNull(key), Objects.requireNonNull(value));
        return this;
    }

    public SluiceSourceBuilder<T> setProperties(Properties properties) {
        properties.forEach((k, v) -> setProperty(k.toString(), v.toString()));
        return this;
    }

    /** The one topic subscriber set, or what to call. */
    private TopicSubscriber topicSubscriber() {
        List<String> set = new ArrayList<>();
        if (topics != null) {
            set.add("setTopics");
        }
        if (topicPattern != null) {
            set.add("setTopicPattern");
        }
        if (partitions != null) {
            set.add("setPartitions");
        }
        if (set.isEmpty()) {
            throw new IllegalStateException(
                    "nothing to read: call setTopics, setTopicPattern or setPartitions");
        }
        if (set.size() > 1) {
            throw new IllegalStateException(
                    String.join(" and ", set)
                            + " were called: a source reads topics, a topic pattern or a set of"
                            + " partitions, call only one of them");
        }
        if (topics != null) {
            if (topics.isEmpty() || topics.stream().anyMatch(t -> t == null || t.isBlank())) {
                throw new IllegalStateException("topics " + topics + ": name one or more");
            }
            for (String topic : topics) {
                if (!Limits.isTopicName(topic)) {
                    throw new IllegalStateException(
                            "topic '" + topic + "': 1 to 249 characters of [A-Za-z0-9._-]");
                }
            }
            return new TopicSubscriber.Topics(topics);
        }
        if (topicPattern != null) {
            return new TopicSubscriber.TopicPattern(topicPattern);
        }
        if (partitions.isEmpty()) {
            throw new IllegalStateException("setPartitions with no partition: name one or more");
        }
        for (TopicPartition partition : partitions) {
            if (partition == null || partition.topic().isBlank() || partition.partition() < 0) {
                throw new IllegalStateException(
                        "setPartitions: " + partition + " is no partition (topic-number, ≥ 0)");
            }
        }
        return new TopicSubscriber.Partitions(partitions);
    }

    /**
     * Offsets given for partitions the source does not read are a mistake (a typo in a topic's
     * name), which would otherwise go unnoticed: those partitions start where the reset says.
     */
    private static void checkNamedPartitions(
            String which, SluiceOffsets offsets, TopicSubscriber topicSubscriber) {
        List<TopicPartition> foreign =
                offsets.namedPartitions().stream()
                        .filter(p -> !topicSubscriber.includes(p))
                        .sorted(Comparator.comparing(TopicPartition::toString))
                        .toList();
        if (!foreign.isEmpty()) {
            throw new IllegalStateException(
                    which
                            + " offsets name "
                            + foreign
                            + ", which the source does not read ("
                            + topicSubscriber
                            + "): name only partitions it reads");
        }
    }

    /** The client id prefix: see {@link #setClientIdPrefix}. */
    private String clientIdPrefix(String group, String sourceId) {
        String prefix = kafka.getProperty(CLIENT_ID_PREFIX);
        String clientId = kafka.getProperty(CommonClientConfigs.CLIENT_ID_CONFIG);
        if (prefix != null && prefix.isBlank()) {
            throw new IllegalStateException(
                    "client id prefix '" + prefix + "': call setClientIdPrefix with a name");
        }
        if (prefix != null && clientId != null) {
            LOG.warn(
                    "{} '{}' is not used: the source's clients are named after {} '{}'"
                            + " (<prefix>-<subtask>)",
                    CommonClientConfigs.CLIENT_ID_CONFIG,
                    clientId,
                    CLIENT_ID_PREFIX,
                    prefix);
        }
        if (prefix != null) {
            return prefix;
        }
        if (clientId != null && !clientId.isBlank()) {
            return clientId;
        }
        return group.isEmpty() ? "sluice-source-" + sourceId : group;
    }

    public SluiceSource<T> build() {
        if (kafka.getProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG) == null) {
            throw new IllegalStateException("no bootstrap servers: call setBootstrapServers");
        }
        TopicSubscriber topicSubscriber = topicSubscriber();
        if (deserializer == null) {
            throw new IllegalStateException("no deserializer: call setDeserializer");
        }
        String group =
                groupId.isEmpty() ? kafka.getProperty(ConsumerConfig.GROUP_ID_CONFIG, "") : groupId;
        if (startingOffsets.needsGroup() && group.isEmpty()) {
            throw new IllegalStateException(
                    "starting from committed offsets needs a group id: call setGroupId");
        }
        if (stoppingOffsets != null && stoppingOffsets.needsGroup() && group.isEmpty()) {
            throw new IllegalStateException(
                    "stopping at committed offsets needs a group id: call setGroupId");
        }
        checkNamedPartitions("starting", startingOffsets, topicSubscriber);
        if (stoppingOffsets != null) {
            checkNamedPartitions("stopping", stoppingOffsets, topicSubscriber);
        }
        if (Boolean.TRUE.equals(commitOffsetsOnCheckpoint) && group.isEmpty()) {
            throw new IllegalStateException("committing offsets on checkpoints needs a group id");
        }
        if (discoveryInterval.isNegative()) {
            throw new IllegalStateException("partition discovery interval " + discoveryInterval);
        }
        if (!Limits.isSlotCount(slotCount) || maxOpenBatches < 1 || maxOpenBatches > slotCount) {
            throw new IllegalStateException(
                    "slots: "
                            + slotCount
                            + " slots with "
                            + maxOpenBatches
                            + " open at most; need 1 ≤ open ≤ slots ≤ "
                            + Limits.MAX_SLOTS);
        }
        if (!Limits.isSlotSize(slotSize)) {
            throw new IllegalStateException(
                    "slot size " + slotSize + ": a multiple of 64 from 256 to 2^31 - 64");
        }
        if (socket.toString().isEmpty() || !socket.isAbsolute()) {
            throw new IllegalStateException(
                    "brokerd socket '"
                            + socket
                            + "': not absolute; set the absolute path of the daemon's control"
                            + " socket (its sluice.socket)");
        }
        String isolation =
                kafka.getProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, DEFAULT_ISOLATION_LEVEL);
        if (!isolation.equals(READ_COMMITTED) && !isolation.equals(DEFAULT_ISOLATION_LEVEL)) {
            throw new IllegalStateException(
                    ConsumerConfig.ISOLATION_LEVEL_CONFIG
                            + " '"
                            + isolation
                            + "': read_committed or read_uncommitted");
        }
        String sourceId = UUID.randomUUID().toString();
        String clientIdPrefix = clientIdPrefix(group, sourceId);
        Properties properties = new Properties();
        properties.putAll(kafka);
        properties.remove(ConsumerConfig.GROUP_ID_CONFIG);
        properties.remove(CLIENT_ID_PREFIX);
        properties.remove(CommonClientConfigs.CLIENT_ID_CONFIG);
        // Both modes read with one level: the PULL consumers by this property, PUSH
        // subscriptions by their SUBSCRIBE flag (docs/flink-source.md, "Transactions").
        properties.setProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        ReaderSettings reader =
                new ReaderSettings(
                        readMode,
                        new PushSettings(
                                socket.toString(),
                                slotCount,
                                slotSize,
                                maxOpenBatches,
                                isolation.equals(DEFAULT_ISOLATION_LEVEL)),
                        properties,
                        group,
                        commitOffsetsOnCheckpoint == null || commitOffsetsOnCheckpoint,
                        sourceId,
                        clientIdPrefix,
                        topicSubscriber);
        return new SluiceSource<>(
                topicSubscriber,
                startingOffsets,
                stoppingOffsets,
                bounded,
                discoveryInterval.toMillis(),
                reader,
                deserializer);
    }
}
