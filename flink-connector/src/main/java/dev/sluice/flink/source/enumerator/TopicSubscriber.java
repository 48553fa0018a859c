package dev.sluice.flink.source.enumerator;

import java.io.Serializable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.flink.annotation.Internal;
import org.apache.kafka.common.TopicPartition;

/**
 * Which partitions a source reads: a list of topics, the topics whose names match a pattern, or a
 * set of partitions, as {@code KafkaSource}'s {@code KafkaSubscriber} (docs/flink-source.md, "Topic
 * subscriber"). Asked again at every partition discovery, so that a pattern picks up topics created
 * after the job started.
 */
@Internal
public sealed interface TopicSubscriber extends Serializable {

    /** The subscribed partitions that exist now, with their leaders. */
    List<PartitionLeader> partitions(ClusterMetadata cluster);

    /** A topic of the subscriber known without asking the cluster; none for a pattern. */
    Optional<String> knownTopic();

    /** Whether the subscriber reads {@code partition} when it exists. */
    boolean includes(TopicPartition partition);

    /** Every partition of these topics; topics that do not exist (yet) have none. */
    record Topics(List<String> topics) implements TopicSubscriber {
        public Topics {
            topics = List.copyOf(topics);
        }

        @Override
        public List<PartitionLeader> partitions(ClusterMetadata cluster) {
            return cluster.partitions(topics);
        }

        @Override
        public Optional<String> knownTopic() {
            return Optional.of(topics.get(0));
        }

        @Override
        public boolean includes(TopicPartition partition) {
            return topics.contains(partition.topic());
        }

        @Override
        public String toString() {
            return "topics " + topics;
        }
    }

    /** Every partition of the topics whose whole name matches {@code pattern}. */
    record TopicPattern(Pattern pattern) implements TopicSubscriber {
        @Override
        public List<PartitionLeader> partitions(ClusterMetadata cluster) {
            List<String> matching =
                    cluster.topics().stream().filter(t -> pattern.matcher(t).matches()).toList();
            return matching.isEmpty() ? List.of() : cluster.partitions(matching);
        }

        @Override
        public Optional<String> knownTopic() {
            return Optional.empty();
        }

        @Override
        public boolean includes(TopicPartition partition) {
            return pattern.matcher(partition.topic()).matches();
        }

        @Override
        public String toString() {
            return "topic pattern '" + pattern.pattern() + "'";
        }
    }

    /**
     * These partitions. One that does not exist is an error naming it, as with {@code KafkaSource}:
     * the set was named on purpose, and reading the others would hide the mistake.
     */
    record Partitions(Set<TopicPartition> partitions) implements TopicSubscriber {
        public Partitions {
            partitions = Set.copyOf(partitions);
        }

        @Override
        public List<PartitionLeader> partitions(ClusterMetadata cluster) {
            Set<String> topics =
                    partitions.stream().map(TopicPartition::topic).collect(Collectors.toSet());
            Map<TopicPartition, PartitionLeader> existing =
                    cluster.partitions(topics).stream()
                            .collect(Collectors.toMap(PartitionLeader::partition, p -> p));
            List<TopicPartition> missing =
                    partitions.stream()
                            .filter(p -> !existing.containsKey(p))
                            .sorted((a, b) -> a.toString().compareTo(b.toString()))
                            .toList();
            if (!missing.isEmpty()) {
                throw new IllegalStateException(
                        "partitions "
                                + missing
                                + " of setPartitions do not exist on the cluster: create them,"
                                + " or name only existing partitions");
            }
            return partitions.stream().map(existing::get).toList();
        }

        @Override
        public Optional<String> knownTopic() {
            return partitions.stream().map(TopicPartition::topic).sorted().findFirst();
        }

        @Override
        public boolean includes(TopicPartition partition) {
            return partitions.contains(partition);
        }

        @Override
        public String toString() {
            return "partitions " + partitions;
        }
    }
}
