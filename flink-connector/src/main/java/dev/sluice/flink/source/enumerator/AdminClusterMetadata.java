package dev.sluice.flink.source.enumerator;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.flink.annotation.Internal;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** {@link ClusterMetadata} through a Kafka Admin client. */
@Internal
public final class AdminClusterMetadata implements ClusterMetadata {
    private final Admin admin;
    private final String groupId;

    public AdminClusterMetadata(Properties kafkaProperties, String groupId) {
        this.admin = Admin.create(kafkaProperties);
        this.groupId = groupId;
    }

    @Override
    public Set<String> topics() {
        return get(admin.listTopics().names());
    }

    @Override
    public List<PartitionLeader> partitions(Collection<String> topics) {
        Set<String> existing = new HashSet<>(topics());
        List<String> wanted = topics.stream().filter(existing::contains).toList();
        if (wanted.isEmpty()) {
            return List.of();
        }
        Map<String, TopicDescription> described = get(admin.describeTopics(wanted).allTopicNames());
        return described.values().stream()
                .flatMap(
                        d ->
                                d.partitions().stream()
                                        .map(
                                                p ->
                                                        new PartitionLeader(
                                                                new TopicPartition(
                                                                        d.name(), p.partition()),
                                                                p.leader() == null
                                                                        ? ""
                                                                        : p.leader().host(),
                                                                localHosts(p))))
                .toList();
    }

    /** The leader's host, then those of the in-sync followers in a rack (PartitionLeader). */
    static List<String> localHosts(TopicPartitionInfo partition) {
        List<String> hosts = new ArrayList<>();
        if (partition.leader() != null) {
            hosts.add(partition.leader().host());
        }
        for (Node replica : partition.isr()) {
            if (replica.hasRack() && !replica.equals(partition.leader())) {
                hosts.add(replica.host());
            }
        }
        return hosts;
    }

    @Override
    public Map<TopicPartition, Long> earliest(Collection<TopicPartition> partitions) {
        return listOffsets(partitions, OffsetSpec.earliest());
    }

    @Override
    public Map<TopicPartition, Long> latest(Collection<TopicPartition> partitions) {
        return listOffsets(partitions, OffsetSpec.latest());
    }

    @Override
    public Map<TopicPartition, Long> committed(Collection<TopicPartition> partitions) {
        if (groupId.isEmpty()) {
            return Map.of();
        }
        ListConsumerGroupOffsetsSpec spec =
                new ListConsumerGroupOffsetsSpec().topicPartitions(List.copyOf(partitions));
        Map<TopicPartition, OffsetAndMetadata> committed =
                get(
                        admin.listConsumerGroupOffsets(Map.of(groupId, spec))
                                .partitionsToOffsetAndMetadata());
        Map<TopicPartition, Long> offsets = new HashMap<>();
        committed.forEach(
                (partition, offset) -> {
                    if (offset != null) {
                        offsets.put(partition, offset.offset());
                    }
                });
        return offsets;
    }

    @Override
    public Map<TopicPartition, Long> forTimestamp(
            Collection<TopicPartition> partitions, long timestampMs) {
        Map<TopicPartition, Long> offsets =
                new HashMap<>(listOffsets(partitions, OffsetSpec.forTimestamp(timestampMs)));
        // Kafka answers -1 for a partition with no record at or after the timestamp.
        offsets.values().removeIf(offset -> offset < 0);
        return offsets;
    }

    private Map<TopicPartition, Long> listOffsets(
            Collection<TopicPartition> partitions, OffsetSpec spec) {
        if (partitions.isEmpty()) {
            return Map.of();
        }
        Map<TopicPartition, OffsetSpec> request =
                partitions.stream().collect(Collectors.toMap(Function.identity(), p -> spec));
        Map<TopicPartition, Long> offsets = new HashMap<>();
        get(admin.listOffsets(request).all()).forEach((p, info) -> offsets.put(p, info.offset()));
        return offsets;
    }

    private static <V> V get(KafkaFuture<V> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while asking the cluster", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException unknown) {
                throw unknown;
            }
            throw new IllegalStateException(
                    "asking the cluster failed: " + e.getCause().getMessage(), e.getCause());
        }
    }

    @Override
    public void close() {
        admin.close();
    }
}
