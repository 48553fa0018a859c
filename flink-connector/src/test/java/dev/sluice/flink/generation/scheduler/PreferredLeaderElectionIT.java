package dev.sluice.flink.generation.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.KafkaCluster;
import dev.sluice.embedded.junit.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The chunk topics' leadership on a real three-broker cluster whose own periodic rebalance is off
 * ({@code auto.leader.rebalance.enable=false}), so that only the scheduler's elections can move it
 * (docs/generation.md, "Chunk-topic leadership"): once the killed preferred broker is back in the
 * ISR, its partitions stay with the other brokers for as long as the test waits, unless they are
 * handed to {@link PreferredLeaderElection}, which moves them back.
 */
class PreferredLeaderElectionIT {
    private static final int PREFERRED = 1;
    private static final int PARTITIONS = 4;
    private static final Duration WAIT = Duration.ofSeconds(60);
    // How long the leadership is watched not to come back alone, and then given to come back
    // with the elections.
    private static final Duration MOVE_BACK = Duration.ofSeconds(10);
    // Between two looks at the cluster: an Admin round trip each.
    private static final long LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private static KafkaCluster cluster;
    private static Admin admin;

    @BeforeAll
    static void startCluster() {
        cluster =
                KafkaCluster.builder()
                        .brokers(3)
                        .brokerProperty("auto.leader.rebalance.enable", "false")
                        .startTimeout(Duration.ofMinutes(3))
                        .build();
        admin = Admin.create(cluster.clientProperties());
    }

    @AfterAll
    static void stopCluster() {
        if (admin != null) {
            admin.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theElectionsGiveTheChunkTopicBackToItsPreferredBrokerOnceItIsInSyncAgain() {
        // Both on brokers [1, 2, 3], led by broker 1; only the first goes to the elections.
        String chunks = "sluice.chunks.node-1";
        String alone = "sluice.chunks.node-unscheduled";
        for (String topic : List.of(chunks, alone)) {
            cluster.createTopic(topic, PARTITIONS, List.of(PREFERRED, 2, 3));
            assertThat(leaders(topic).values()).as(topic).containsOnly(PREFERRED);
        }
        PreferredLeaderElection elections = new PreferredLeaderElection(admin);

        cluster.kill(PREFERRED);
        for (String topic : List.of(chunks, alone)) {
            Await.until(
                    () -> "every partition of " + topic + " led by 2 or 3: " + leaders(topic),
                    WAIT,
                    () -> leaders(topic).values().stream().allMatch(l -> l == 2 || l == 3));
        }
        assertThat(elections.run(Set.of(chunks))).as("moved back while broker 1 is down").isEmpty();

        cluster.restart(PREFERRED);
        for (String topic : List.of(chunks, alone)) {
            Await.until(
                    () -> "broker 1 in every ISR of " + topic + ": " + isrs(topic),
                    WAIT,
                    () -> isrs(topic).values().stream().allMatch(isr -> isr.contains(PREFERRED)));
        }
        Map<Integer, Integer> before = leaders(chunks);
        // Without the elections the leadership does not come back: what the test needs them for.
        long watched = System.nanoTime() + MOVE_BACK.toNanos();
        while (System.nanoTime() - watched < 0) {
            for (String topic : List.of(chunks, alone)) {
                assertThat(leaders(topic).values())
                        .as("leaders of %s with broker 1 in sync and no elections", topic)
                        .doesNotContain(PREFERRED);
            }
            LockSupport.parkNanos(LOOK_NANOS);
        }

        List<PreferredLeaders.Move> moved = new ArrayList<>();
        long electing = System.nanoTime();
        Await.until(
                () -> "every partition of " + chunks + " led by broker 1: " + leaders(chunks),
                MOVE_BACK,
                () -> {
                    moved.addAll(elections.run(Set.of(chunks)));
                    return leaders(chunks).values().stream().allMatch(l -> l == PREFERRED);
                });
        System.out.printf(
                "led by broker 1 again %d ms after the first election%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - electing));

        List<PreferredLeaders.Move> expected = new ArrayList<>();
        before.forEach(
                (partition, leader) ->
                        expected.add(
                                new PreferredLeaders.Move(
                                        new TopicPartition(chunks, partition), leader, PREFERRED)));
        assertThat(moved).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(leaders(alone).values())
                .as("leaders of the topic not handed to the elections, after the same wait")
                .doesNotContain(PREFERRED);
        assertThat(elections.run(Set.of(chunks))).as("moved again once back").isEmpty();
    }

    /** Each partition's leader, -1 for none. */
    private static Map<Integer, Integer> leaders(String topic) {
        return describe(topic).partitions().stream()
                .collect(
                        Collectors.toMap(
                                TopicPartitionInfo::partition,
                                p ->
                                        p.leader() == null || p.leader().isEmpty()
                                                ? -1
                                                : p.leader().id(),
                                (a, b) -> a,
                                TreeMap::new));
    }

    /** Each partition's in-sync replicas. */
    private static Map<Integer, Set<Integer>> isrs(String topic) {
        return describe(topic).partitions().stream()
                .collect(
                        Collectors.toMap(
                                TopicPartitionInfo::partition,
                                p -> p.isr().stream().map(Node::id).collect(Collectors.toSet()),
                                (a, b) -> a,
                                TreeMap::new));
    }

    private static TopicDescription describe(String topic) {
        try {
            return admin.describeTopics(List.of(topic))
                    .allTopicNames()
                    .get(30, TimeUnit.SECONDS)
                    .get(topic);
        } catch (Exception e) {
            throw new IllegalStateException("describing " + topic, e);
        }
    }
}
