package dev.sluice.flink.generation.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.PreferredLeaderNotAvailableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

/** Which partitions go back to their preferred leader, and what their elections' results say. */
class PreferredLeadersTest {
    private static final String TOPIC = "sluice.chunks.node-1";

    private final PreferredLeaders leaders = new PreferredLeaders();

    private static PreferredLeaders.Partition partition(int id, int leader, Integer... isr) {
        return new PreferredLeaders.Partition(
                new TopicPartition(TOPIC, id), leader, List.of(1, 2, 3), Set.of(isr));
    }

    @Test
    void aPartitionLedElsewhereWhileItsPreferredReplicaIsInSyncIsElected() {
        PreferredLeaders.Partition away = partition(0, 2, 1, 2, 3);

        assertThat(leaders.toElect(List.of(away))).containsExactly(away);
    }

    @Test
    void aPartitionWhosePreferredReplicaIsOutOfSyncIsNot() {
        assertThat(leaders.toElect(List.of(partition(0, 2, 2, 3)))).isEmpty();
    }

    @Test
    void aPartitionLedByItsPreferredReplicaIsNot() {
        assertThat(leaders.toElect(List.of(partition(0, 1, 1, 2, 3)))).isEmpty();
    }

    @Test
    void aPartitionWithoutALeaderIsLeftToTheController() {
        // The controller elects a leader as soon as a replica of its ISR is back.
        assertThat(leaders.toElect(List.of(partition(0, PreferredLeaders.NO_LEADER, 1)))).isEmpty();
    }

    @Test
    void aPartitionWithoutReplicasIsNot() {
        PreferredLeaders.Partition none =
                new PreferredLeaders.Partition(
                        new TopicPartition(TOPIC, 0), 2, List.of(), Set.of(2));

        assertThat(leaders.toElect(List.of(none))).isEmpty();
    }

    @Test
    void onlyThePartitionsAwayFromTheirPreferredLeaderAreElectedInTheirOrder() {
        PreferredLeaders.Partition first = partition(0, 3, 1, 3);
        PreferredLeaders.Partition second = partition(2, 2, 1, 2);

        assertThat(
                        leaders.toElect(
                                List.of(
                                        first,
                                        partition(1, 1, 1, 2, 3),
                                        second,
                                        partition(3, 2, 2))))
                .containsExactly(first, second);
    }

    @Test
    void anElectionThatSucceedsMovesThePartitionFromItsLeaderToItsPreferredReplica() {
        PreferredLeaders.Partition away = partition(0, 2, 1, 2, 3);
        List<PreferredLeaders.Partition> elect = leaders.toElect(List.of(away));

        PreferredLeaders.Outcome outcome =
                leaders.outcome(elect, Map.of(away.id(), Optional.empty()));

        assertThat(outcome.moved()).containsExactly(new PreferredLeaders.Move(away.id(), 2, 1));
        assertThat(outcome.failed()).isEmpty();
    }

    @Test
    void anElectionNotNeededIsNeitherAMoveNorAFailure() {
        PreferredLeaders.Partition away = partition(0, 2, 1, 2, 3);
        List<PreferredLeaders.Partition> elect = leaders.toElect(List.of(away));

        PreferredLeaders.Outcome outcome =
                leaders.outcome(
                        elect,
                        Map.of(away.id(), Optional.of(new ElectionNotNeededException("led"))));

        assertThat(outcome.moved()).isEmpty();
        assertThat(outcome.failed()).isEmpty();
    }

    @Test
    void aFailureIsToldOncePerPartitionAndReasonUntilThePartitionIsNoLongerElected() {
        PreferredLeaders.Partition away = partition(0, 2, 1, 2, 3);
        PreferredLeaders.Partition other = partition(1, 3, 1, 3);
        var unavailable = new PreferredLeaderNotAvailableException("broker 1 is fenced");

        PreferredLeaders.Outcome first =
                leaders.outcome(
                        leaders.toElect(List.of(away, other)),
                        Map.of(
                                away.id(),
                                Optional.of(unavailable),
                                other.id(),
                                Optional.of(unavailable)));
        PreferredLeaders.Outcome again =
                leaders.outcome(
                        leaders.toElect(List.of(away, other)),
                        Map.of(
                                away.id(),
                                Optional.of(unavailable),
                                other.id(),
                                Optional.of(new TimeoutException("controller"))));

        assertThat(first.failed())
                .extracting(PreferredLeaders.Failure::id)
                .containsExactly(away.id(), other.id());
        assertThat(first.failed().get(0).preferred()).isEqualTo(1);
        assertThat(first.failed().get(0).cause()).isSameAs(unavailable);
        // The same reason of the same partition is not told twice; another reason is.
        assertThat(again.failed())
                .extracting(PreferredLeaders.Failure::id)
                .containsExactly(other.id());

        // Led by its preferred replica meanwhile, then away again: a new state, told again.
        assertThat(leaders.toElect(List.of(partition(0, 1, 1, 2, 3)))).isEmpty();
        PreferredLeaders.Outcome later =
                leaders.outcome(
                        leaders.toElect(List.of(away)),
                        Map.of(away.id(), Optional.of(unavailable)));
        assertThat(later.failed())
                .extracting(PreferredLeaders.Failure::id)
                .containsExactly(away.id());
    }

    @Test
    void aPartitionMovedBackAfterAFailureHasItsFailureToldAgainWhenItRecurs() {
        PreferredLeaders.Partition away = partition(0, 2, 1, 2, 3);
        var unavailable = new PreferredLeaderNotAvailableException("broker 1 is fenced");
        leaders.outcome(
                leaders.toElect(List.of(away)), Map.of(away.id(), Optional.of(unavailable)));

        PreferredLeaders.Outcome moved =
                leaders.outcome(
                        leaders.toElect(List.of(away)), Map.of(away.id(), Optional.empty()));
        PreferredLeaders.Outcome failedAgain =
                leaders.outcome(
                        leaders.toElect(List.of(away)),
                        Map.of(away.id(), Optional.of(unavailable)));

        assertThat(moved.moved()).hasSize(1);
        assertThat(failedAgain.failed()).hasSize(1);
    }
}
