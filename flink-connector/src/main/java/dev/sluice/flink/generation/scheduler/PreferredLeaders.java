package dev.sluice.flink.generation.scheduler;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ElectionNotNeededException;

/**
 * Which chunk-topic partitions to hand back to their preferred leader, and what the elections came
 * to, apart from any I/O (docs/generation.md, "Chunk-topic leadership"). A chunk topic's preferred
 * leader, its first replica, is the broker on its output location's host: while another broker
 * leads, every chunk crosses the network twice, to that leader and back to the host's daemon.
 *
 * <p>A partition is elected when its leader is not its first replica while that replica is in the
 * ISR: a preferred replica out of sync cannot lead, and a partition without a leader gets one from
 * the controller as soon as a replica of its ISR is back. An election that fails is told once per
 * partition and reason, until the partition leaves the elected ones; one that was not needed (the
 * leader moved back meanwhile) is fine. Used by one thread at a time.
 */
@Internal
public final class PreferredLeaders {
    /** The leader of a partition that has none. */
    public static final int NO_LEADER = -1;

    /** A partition as Kafka's Admin describes it: its leader, replicas in order, and ISR. */
    public record Partition(
            TopicPartition id, int leader, List<Integer> replicas, Set<Integer> isr) {
        public Partition {
            replicas = List.copyOf(replicas);
            isr = Set.copyOf(isr);
        }

        /**
         * The first replica, the broker the topic's creator meant to lead; none without replicas.
         */
        int preferred() {
            return replicas.isEmpty() ? NO_LEADER : replicas.get(0);
        }

        boolean awayFromPreferred() {
            return leader != NO_LEADER && leader != preferred() && isr.contains(preferred());
        }
    }

    /** A partition whose leadership went back from broker {@code from} to broker {@code to}. */
    public record Move(TopicPartition id, int from, int to) {}

    /** An election that failed for a reason not told before about this partition. */
    public record Failure(TopicPartition id, int preferred, Throwable cause) {}

    /** What a round's elections came to. */
    public record Outcome(List<Move> moved, List<Failure> failed) {}

    // The reason told last of each partition whose election failed, until it is not elected.
    private final Map<TopicPartition, String> told = new HashMap<>();

    /**
     * The partitions of {@code described} whose preferred replica is in sync but does not lead, in
     * their order; what was told of the others is forgotten, so that a later failure is told again.
     */
    public List<Partition> toElect(Collection<Partition> described) {
        List<Partition> elect = new ArrayList<>();
        Set<TopicPartition> ids = new HashSet<>();
        for (Partition partition : described) {
            if (partition.awayFromPreferred()) {
                elect.add(partition);
                ids.add(partition.id());
            }
        }
        told.keySet().retainAll(ids);
        return elect;
    }

    /**
     * Reads the results of electing {@code elected} (Kafka's {@code ElectLeadersResult}: no error
     * for a partition now led by its preferred replica).
     */
    public Outcome outcome(
            List<Partition> elected, Map<TopicPartition, Optional<Throwable>> results) {
        List<Move> moved = new ArrayList<>();
        List<Failure> failed = new ArrayList<>();
        for (Partition partition : elected) {
            Optional<Throwable> result = results.get(partition.id());
            if (result == null) {
                continue;
            }
            if (result.isEmpty()) {
                told.remove(partition.id());
                moved.add(new Move(partition.id(), partition.leader(), partition.preferred()));
            } else if (result.get() instanceof ElectionNotNeededException) {
                told.remove(partition.id());
            } else {
                String reason = result.get().getClass().getName();
                if (!reason.equals(told.put(partition.id(), reason))) {
                    failed.add(new Failure(partition.id(), partition.preferred(), result.get()));
                }
            }
        }
        return new Outcome(moved, failed);
    }
}
