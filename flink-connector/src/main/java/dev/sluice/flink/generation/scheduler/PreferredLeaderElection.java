package dev.sluice.flink.generation.scheduler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.annotation.Internal;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ElectLeadersOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Admin calls of {@link PreferredLeaders}: describes the chunk topics, elects their preferred
 * leaders where it decides so, and logs each partition moved back (docs/generation.md, "Chunk-topic
 * leadership"). Never throws: a failure is logged once, until a round without it. Used by one
 * thread at a time; the {@link Admin} stays its owner's.
 */
@Internal
public final class PreferredLeaderElection {
    private static final Logger LOG = LoggerFactory.getLogger(PreferredLeaderElection.class);

    // A round's calls give up after this; the next round asks again.
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);

    private final Admin admin;
    private final PreferredLeaders leaders = new PreferredLeaders();
    // The failures of whole calls and of topics' descriptions told, each until a round without it;
    // and those of the round under way.
    private final Set<String> failuresTold = new HashSet<>();
    private final Set<String> failuresNow = new HashSet<>();

    public PreferredLeaderElection(Admin admin) {
        this.admin = admin;
    }

    /**
     * One round over the partitions of {@code topics}: those whose preferred leader is in sync but
     * does not lead are elected; returns those moved back.
     */
    public List<PreferredLeaders.Move> run(Set<String> topics) {
        failuresNow.clear();
        try {
            return elect(topics);
        } finally {
            failuresTold.retainAll(failuresNow);
        }
    }

    private List<PreferredLeaders.Move> elect(Set<String> topics) {
        if (topics.isEmpty()) {
            return List.of();
        }
        try {
            List<PreferredLeaders.Partition> elect = leaders.toElect(describe(topics));
            if (elect.isEmpty()) {
                return List.of();
            }
            Set<TopicPartition> ids = new HashSet<>();
            elect.forEach(partition -> ids.add(partition.id()));
            Map<TopicPartition, Optional<Throwable>> results =
                    await(
                            admin.electLeaders(
                                            ElectionType.PREFERRED,
                                            ids,
                                            new ElectLeadersOptions().timeoutMs(timeoutMs()))
                                    .partitions());
            PreferredLeaders.Outcome outcome = leaders.outcome(elect, results);
            for (PreferredLeaders.Move move : outcome.moved()) {
                LOG.info(
                        "event=chunk_leader_moved_back topic={} partition={} from={} to={}",
                        move.id().topic(),
                        move.id().partition(),
                        move.from(),
                        move.to());
            }
            for (PreferredLeaders.Failure failure : outcome.failed()) {
                LOG.warn(
                        "event=chunk_leader_not_moved_back topic={} partition={} to={} reason={}",
                        failure.id().topic(),
                        failure.id().partition(),
                        failure.preferred(),
                        failure.cause().toString());
            }
            return outcome.moved();
        } catch (ExecutionException e) {
            tell("electing the chunk topics' preferred leaders", e.getCause());
        } catch (TimeoutException | RuntimeException e) {
            tell("electing the chunk topics' preferred leaders", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return List.of();
    }

    /** The partitions of {@code topics}; a topic that cannot be described now is left out. */
    private List<PreferredLeaders.Partition> describe(Set<String> topics)
            throws InterruptedException {
        Map<String, KafkaFuture<TopicDescription>> described =
                admin.describeTopics(topics, new DescribeTopicsOptions().timeoutMs(timeoutMs()))
                        .topicNameValues();
        List<PreferredLeaders.Partition> partitions = new ArrayList<>();
        for (var topic : described.entrySet()) {
            TopicDescription description;
            try {
                description = await(topic.getValue());
            } catch (ExecutionException e) {
                tell("describing " + topic.getKey(), e.getCause());
                continue;
            } catch (TimeoutException e) {
                tell("describing " + topic.getKey(), e);
                continue;
            }
            for (TopicPartitionInfo info : description.partitions()) {
                partitions.add(
                        new PreferredLeaders.Partition(
                                new TopicPartition(topic.getKey(), info.partition()),
                                id(info.leader()),
                                info.replicas().stream().map(Node::id).toList(),
                                new HashSet<>(info.isr().stream().map(Node::id).toList())));
            }
        }
        return partitions;
    }

    private static int id(Node node) {
        return node == null || node.isEmpty() ? PreferredLeaders.NO_LEADER : node.id();
    }

    private static <T> T await(KafkaFuture<T> future)
            throws ExecutionException, TimeoutException, InterruptedException {
        // The call's own timeout ends it first; this bound only guards against one that does not.
        return future.get(2 * CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static int timeoutMs() {
        return (int) CALL_TIMEOUT.toMillis();
    }

    private void tell(String what, Throwable cause) {
        String failure = what + ": " + cause.getClass().getName();
        failuresNow.add(failure);
        if (failuresTold.add(failure)) {
            LOG.warn("{} failed; trying again later: {}", what, cause.toString());
        }
    }
}
