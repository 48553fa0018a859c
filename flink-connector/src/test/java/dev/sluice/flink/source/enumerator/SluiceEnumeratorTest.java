package dev.sluice.flink.source.enumerator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.flink.source.SluiceOffsets;
import dev.sluice.flink.source.split.SluiceSplit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.flink.connector.testutils.source.reader.TestingSplitEnumeratorContext;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.Test;

/**
 * Placement and bookkeeping of the enumerator, with a fixed cluster: in a MiniCluster every reader
 * reports localhost, so locality is tested here, with readers on made-up hosts.
 */
class SluiceEnumeratorTest {
    private static final String TOPIC = "orders";

    /**
     * Partitions with their leaders; offsets: earliest 0, latest 100, committed none, at a
     * timestamp the timestamp / 10 below 1000 (none after).
     */
    private static final class FixedCluster implements ClusterMetadata {
        final List<PartitionLeader> partitions = new CopyOnWriteArrayList<>();

        FixedCluster leader(int partition, String host) {
            return leader(TOPIC, partition, host);
        }

        FixedCluster leader(String topic, int partition, String host) {
            partitions.add(new PartitionLeader(new TopicPartition(topic, partition), host));
            return this;
        }

        /**
         * A partition led on {@code host} with in-sync followers in a rack on {@code followers}.
         */
        FixedCluster replicated(int partition, String host, String... followers) {
            List<String> local = new ArrayList<>(List.of(host));
            local.addAll(List.of(followers));
            partitions.add(new PartitionLeader(new TopicPartition(TOPIC, partition), host, local));
            return this;
        }

        @Override
        public Set<String> topics() {
            return partitions.stream().map(p -> p.partition().topic()).collect(Collectors.toSet());
        }

        @Override
        public List<PartitionLeader> partitions(Collection<String> topics) {
            return partitions.stream().filter(p -> topics.contains(p.partition().topic())).toList();
        }

        @Override
        public Map<TopicPartition, Long> earliest(Collection<TopicPartition> partitions) {
            return constant(partitions, 0);
        }

        @Override
        public Map<TopicPartition, Long> latest(Collection<TopicPartition> partitions) {
            return constant(partitions, 100);
        }

        @Override
        public Map<TopicPartition, Long> committed(Collection<TopicPartition> partitions) {
            return Map.of();
        }

        @Override
        public Map<TopicPartition, Long> forTimestamp(
                Collection<TopicPartition> partitions, long timestampMs) {
            return timestampMs < 1000 ? constant(partitions, timestampMs / 10) : Map.of();
        }

        private static Map<TopicPartition, Long> constant(
                Collection<TopicPartition> partitions, long offset) {
            Map<TopicPartition, Long> offsets = new HashMap<>();
            partitions.forEach(p -> offsets.put(p, offset));
            return offsets;
        }

        @Override
        public void close() {}
    }

    /** Of {@link #TOPIC}, bounded when it has stopping offsets, discovering once. */
    private static SluiceEnumerator enumerator(
            TestingSplitEnumeratorContext<SluiceSplit> context,
            FixedCluster cluster,
            SluiceOffsets stopping,
            SluiceEnumeratorState state) {
        return new SluiceEnumerator(
                context,
                new TopicSubscriber.Topics(List.of(TOPIC)),
                SluiceOffsets.earliest(),
                stopping,
                stopping != null,
                0,
                () -> cluster,
                state);
    }

    private static SluiceEnumerator unbounded(
            TestingSplitEnumeratorContext<SluiceSplit> context,
            FixedCluster cluster,
            TopicSubscriber topicSubscriber,
            SluiceOffsets starting,
            SluiceOffsets stopping,
            long discoveryIntervalMs) {
        return new SluiceEnumerator(
                context,
                topicSubscriber,
                starting,
                stopping,
                false,
                discoveryIntervalMs,
                () -> cluster,
                SluiceEnumeratorState.empty());
    }

    private static List<String> assignedSplits(
            TestingSplitEnumeratorContext<SluiceSplit> context, int subtask) {
        var state = context.getSplitAssignments().get(subtask);
        return state == null
                ? List.of()
                : state.getAssignedSplits().stream().map(SluiceSplit::splitId).sorted().toList();
    }

    @Test
    void aTopicPatternPicksUpMatchingTopicsCreatedLater() throws Exception {
        var context = new TestingSplitEnumeratorContext<SluiceSplit>(1);
        FixedCluster cluster = new FixedCluster().leader("logs-a", 0, "h").leader("other", 0, "h");
        try (SluiceEnumerator enumerator =
                unbounded(
                        context,
                        cluster,
                        new TopicSubscriber.TopicPattern(Pattern.compile("logs-.*")),
                        SluiceOffsets.earliest(),
                        null,
                        1000)) {
            enumerator.start();
            context.registerReader(0, "h");
            enumerator.addReader(0);
            context.triggerAllActions();
            assertThat(assignedSplits(context, 0)).containsExactly("logs-a-0");

            cluster.leader("logs-b", 0, "h").leader("logs-b", 1, "h").leader("xlogs-c", 0, "h");
            context.getExecutorService().triggerPeriodicScheduledTasks();
            context.triggerAllActions();
            assertThat(assignedSplits(context, 0))
                    .containsExactly("logs-a-0", "logs-b-0", "logs-b-1");
        }
    }

    @Test
    void aTopicPatternMatchingNothingWithoutDiscoveryFails() throws Exception {
        var context = new TestingSplitEnumeratorContext<SluiceSplit>(1);
        FixedCluster cluster = new FixedCluster().leader("other", 0, "h");
        try (SluiceEnumerator enumerator =
                unbounded(
                        context,
                        cluster,
                        new TopicSubscriber.TopicPattern(Pattern.compile("logs-.*")),
                        SluiceOffsets.earliest(),
                        null,
                        0)) {
            enumerator.start();
            assertThatThrownBy(context::triggerAllActions)
                    .hasStackTraceContaining(
                            "topic pattern 'logs-.*' matches no topic, and partition discovery is"
                                    + " off")
                    .hasStackTraceContaining("set a partition discovery interval");
        }
    }

    @Test
    void aPartitionSetReadsOnlyItsPartitionsAndNamesOnesThatDoNotExist() throws Exception {
        var context = new TestingSplitEnumeratorContext<SluiceSplit>(1);
        FixedCluster cluster = new FixedCluster().leader(0, "h").leader(1, "h").leader(2, "h");
        try (SluiceEnumerator enumerator =
                unbounded(
                        context,
                        cluster,
                        new TopicSubscriber.Partitions(
                                Set.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 2))),
                        SluiceOffsets.earliest(),
                        null,
                        0)) {
            enumerator.start();
            context.registerReader(0, "h");
            enumerator.addReader(0);
            context.triggerAllActions();
            assertThat(assignedSplits(context, 0)).containsExactly("orders-0", "orders-2");
        }
        try (SluiceEnumerator enumerator =
                unbounded(
                        context,
                        cluster,
                        new TopicSubscriber.Partitions(
                                Set.of(
                                        new TopicPartition(TOPIC, 7),
                                        new TopicPartition("nope", 0))),
                        SluiceOffsets.earliest(),
                        null,
                        0)) {
            enumerator.start();
            assertThatThrownBy(context::triggerAllActions)
                    .hasStackTraceContaining(
                            "partitions [nope-0, orders-7] of setPartitions do not exist");
        }
    }

    @Test
    void anUnboundedSourceWithStopsEndsSplitsButNotTheSource() throws Exception {
        var context = new TestingSplitEnumeratorContext<SluiceSplit>(1);
        FixedCluster cluster = new FixedCluster().leader(0, "h");
        try (SluiceEnumerator enumerator =
                unbounded(
                        context,
                        cluster,
                        new TopicSubscriber.Topics(List.of(TOPIC)),
                        SluiceOffsets.timestamp(200),
                        SluiceOffsets.timestamp(500),
                        1000)) {
            enumerator.start();
            context.registerReader(0, "h");
            enumerator.addReader(0);
            context.triggerAllActions();
            SluiceSplit split = context.getSplitAssignments().get(0).getAssignedSplits().get(0);
            assertThat(split.startingOffset()).isEqualTo(20);
            assertThat(split.stoppingOffset()).isEqualTo(50);
            assertThat(context.getSplitAssignments().get(0).hasReceivedNoMoreSplitsSignal())
                    .as("setUnbounded: the source runs on")
                    .isFalse();
            assertThat(context.getExecutorService().getActivePeriodicScheduledTask())
                    .as("and keeps discovering partitions")
                    .hasSize(1);
        }
    }

    private static List<Integer> partitionsOf(
            TestingSplitEnumeratorContext<SluiceSplit> context, int subtask) {
        var state = context.getSplitAssignments().get(subtask);
        return state == null
                ? List.of()
                : state.getAssignedSplits().stream()
                        .map(split -> split.partition().partition())
                        .sorted()
                        .toList();
    }

    @Test
    void placesEachPartitionOnAReaderOnItsLeadersHost() throws Exception {
        var context = new TestingSplitEnumeratorContext<SluiceSplit>(3);
        FixedCluster cluster =
                new FixedCluster()
                        .leader(0, "host-a")
                        .leader(1, "host-b")
                        .leader(2, "host-a")
                        .leader(3, "host-b")
                        .leader(4, "host-a");
        try (SluiceEnumerator enumerator =
                enumerator(context, cluster, null, SluiceEnumeratorState.empty())) {
            enumerator.start();
            context.triggerAllActions();
            context.registerReader(0, "host-c");
            enumerator.addReader(0);
            context.registerReader(1, "host-b");
            enumerator.addReader(1);
            assertThat(context.getSplitAssignments()).as("waits for every reader").isEmpty();
            context.registerReader(2, "host-a");
            enumerator.addReader(2);

            assertThat(partitionsOf(context, 2)).containsExactly(0, 2, 4);
            assertThat(partitionsOf(context, 1)).containsExactly(1, 3);
            assertThat(partitionsOf(context, 0)).isEmpty();
        }
    }

    @Test
    void balancesPartitionsWhoseLeaderHasNoReader() throws Exception {
        var context = new TestingSplitEnumeratorContext<SluiceSplit>(2);
        FixedCluster cluster = new FixedCluster();
        for (int p = 0; p < 6; p++) {
            cluster.leader(p, "elsewhere");
        }
        try (SluiceEnumerator enumerator =
                enumerator(context, cluster, null, SluiceEnumeratorState.empty())) {
            enumerator.start();
            context.triggerAllActions();
            for (int subtask = 0; subtask < 2; subtask++) {
                context.registerReader(subtask, "host-" + subtask);
                enumerator.addReader(subtask);
            }
            assertThat(partitionsOf(context, 0)).hasSize(3);
            assertThat(partitionsOf(context, 1)).hasSize(3);
        }
    }

    @Test
    void placesASplitOnTheLeastLoadedReaderOnAHostOfAnyInSyncReplica() throws Exception {
        var context = new TestingSplitEnumeratorContext<SluiceSplit>(3);
        // Every partition is led on host-a; host-b holds an in-sync follower in a rack of each,
        // host-c of none: host-a's and host-b's daemons read locally, host-c's would not.
        FixedCluster cluster = new FixedCluster();
        for (int p = 0; p < 4; p++) {
            cluster.replicated(p, "host-a", "host-b");
        }
        try (SluiceEnumerator enumerator =
                enumerator(context, cluster, null, SluiceEnumeratorState.empty())) {
            enumerator.start();
            context.triggerAllActions();
            context.registerReader(0, "host-a");
            context.registerReader(1, "host-b");
            context.registerReader(2, "host-c");
            for (int subtask = 0; subtask < 3; subtask++) {
                enumerator.addReader(subtask);
            }
            assertThat(partitionsOf(context, 0)).hasSize(2);
            assertThat(partitionsOf(context, 1))
                    .as("the follower's host shares the partitions")
                    .hasSize(2);
            assertThat(partitionsOf(context, 2)).isEmpty();
        }
    }

    @Test
    void theLocalHostsAreTheLeadersAndThoseOfInSyncFollowersInARack() {
        Node leader = new Node(1, "host-a", 9092, "rack-a");
        Node inRack = new Node(2, "host-b", 9092, "rack-b");
        Node noRack = new Node(3, "host-c", 9092);
        Node outOfSync = new Node(4, "host-d", 9092, "rack-d");
        TopicPartitionInfo partition =
                new TopicPartitionInfo(
                        0,
                        leader,
                        List.of(leader, inRack, noRack, outOfSync),
                        List.of(noRack, inRack, leader));
        assertThat(AdminClusterMetadata.localHosts(partition))
                .as("a follower without a rack is never a preferred read replica")
                .containsExactly("host-a", "host-b");
        assertThat(
                        AdminClusterMetadata.localHosts(
                                new TopicPartitionInfo(0, null, List.of(inRack), List.of())))
                .as("no leader, nobody in sync")
                .isEmpty();
    }

    @Test
    void aRestoredSplitBeforeAnyDiscoveryGoesToItsLeadersHost() {
        SplitPlacement placement = new SplitPlacement();
        int chosen =
                placement.choose(
                        new SluiceSplit(
                                new TopicPartition(TOPIC, 0),
                                0,
                                SluiceSplit.NO_STOPPING_OFFSET,
                                "host-b"),
                        Map.of(0, "host-a", 1, "host-b"),
                        Map.of(1, 5));
        assertThat(chosen).isEqualTo(1);
    }

    @Test
    void treatsLocalhostAndTheLoopbackAddressAsOneHost() {
        SplitPlacement placement = new SplitPlacement();
        int chosen =
                placement.choose(
                        List.of("127.0.0.1"),
                        Map.of(0, "remote.example", 1, "localhost"),
                        Map.of(1, 5));
        assertThat(chosen).isEqualTo(1);
    }

    @Test
    void aBoundedSourceResolvesStopsAndSignalsNoMoreSplits() throws Exception {
        var context = new TestingSplitEnumeratorContext<SluiceSplit>(2);
        FixedCluster cluster = new FixedCluster().leader(0, "host-a");
        try (SluiceEnumerator enumerator =
                enumerator(
                        context, cluster, SluiceOffsets.latest(), SluiceEnumeratorState.empty())) {
            enumerator.start();
            context.triggerAllActions();
            context.registerReader(0, "host-a");
            enumerator.addReader(0);
            context.registerReader(1, "host-b");
            enumerator.addReader(1);

            SluiceSplit split = context.getSplitAssignments().get(0).getAssignedSplits().get(0);
            assertThat(split.startingOffset()).isZero();
            assertThat(split.stoppingOffset()).isEqualTo(100);
            assertThat(context.getSplitAssignments().get(0).hasReceivedNoMoreSplitsSignal())
                    .isTrue();
            assertThat(context.getSplitAssignments().get(1).hasReceivedNoMoreSplitsSignal())
                    .as("the idle reader may finish too")
                    .isTrue();
        }
    }

    @Test
    void splitsNotPlacedYetAreInTheCheckpoint() throws Exception {
        var context = new TestingSplitEnumeratorContext<SluiceSplit>(2);
        FixedCluster cluster = new FixedCluster().leader(0, "host-a").leader(1, "host-a");
        try (SluiceEnumerator enumerator =
                enumerator(context, cluster, null, SluiceEnumeratorState.empty())) {
            enumerator.start();
            context.triggerAllActions();
            context.registerReader(0, "host-a");
            enumerator.addReader(0);
            SluiceEnumeratorStateSerializer serializer = new SluiceEnumeratorStateSerializer();
            SluiceEnumeratorState state =
                    serializer.deserialize(
                            serializer.getVersion(),
                            serializer.serialize(enumerator.snapshotState(1)));
            assertThat(state.assigned()).isEmpty();
            assertThat(state.unassigned())
                    .extracting(split -> split.partition().partition())
                    .containsExactlyInAnyOrder(0, 1);
            assertThat(state.discovered()).isTrue();
        }
    }

    @Test
    void aRestoredEnumeratorPlacesOnlyItsUnassignedSplits() throws Exception {
        FixedCluster cluster = new FixedCluster().leader(0, "host-a").leader(1, "host-a");
        SluiceSplit returned =
                new SluiceSplit(new TopicPartition(TOPIC, 1), 42, Long.MAX_VALUE, "host-a");
        SluiceEnumeratorState state =
                new SluiceEnumeratorState(
                        java.util.Set.of(new TopicPartition(TOPIC, 0)), List.of(returned), true);
        var context = new TestingSplitEnumeratorContext<SluiceSplit>(1);
        try (SluiceEnumerator restored = enumerator(context, cluster, null, state)) {
            restored.start();
            context.triggerAllActions();
            context.registerReader(0, "host-a");
            restored.addReader(0);
            assertThat(context.getSplitAssignments().get(0).getAssignedSplits())
                    .as("partition 0 is in the reader's state, not assigned again")
                    .containsExactly(returned);
        }
    }
}
