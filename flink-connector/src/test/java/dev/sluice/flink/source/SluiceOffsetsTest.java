package dev.sluice.flink.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** How each kind of {@link SluiceOffsets} resolves, against a cluster of known offsets. */
class SluiceOffsetsTest {
    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);
    private static final TopicPartition P2 = new TopicPartition("orders", 2);
    private static final List<TopicPartition> ALL = List.of(P0, P1, P2);

    /**
     * Earliest 10, latest 100 (200 once asked for timestamps: records written meanwhile), a
     * committed offset for P1 only, and for timestamps below 500 the record at timestamp / 10 on P0
     * and P1, none on P2.
     */
    private static final class Cluster implements SluiceOffsets.Lookup {
        long end = 100;

        @Override
        public Map<TopicPartition, Long> earliest(Collection<TopicPartition> partitions) {
            return each(partitions, 10);
        }

        @Override
        public Map<TopicPartition, Long> latest(Collection<TopicPartition> partitions) {
            return each(partitions, end);
        }

        @Override
        public Map<TopicPartition, Long> committed(Collection<TopicPartition> partitions) {
            return partitions.contains(P1) ? Map.of(P1, 42L) : Map.of();
        }

        @Override
        public Map<TopicPartition, Long> forTimestamp(
                Collection<TopicPartition> partitions, long timestampMs) {
            end = 200;
            Map<TopicPartition, Long> found = new HashMap<>();
            partitions.stream()
                    .filter(p -> !p.equals(P2) && timestampMs < 500)
                    .forEach(p -> found.put(p, timestampMs / 10));
            return found;
        }

        private static Map<TopicPartition, Long> each(
                Collection<TopicPartition> partitions, long offset) {
            Map<TopicPartition, Long> offsets = new HashMap<>();
            partitions.forEach(p -> offsets.put(p, offset));
            return offsets;
        }
    }

    @Test
    void aTimestampStartsAtTheFirstRecordAtOrAfterItElseAtTheEndBeforeTheQuestion() {
        assertThat(SluiceOffsets.timestamp(300).resolve(ALL, new Cluster()))
                .containsExactlyInAnyOrderEntriesOf(Map.of(P0, 30L, P1, 30L, P2, 100L));
        assertThat(SluiceOffsets.timestamp(900).resolve(ALL, new Cluster()))
                .containsExactlyInAnyOrderEntriesOf(Map.of(P0, 100L, P1, 100L, P2, 100L));
        assertThatThrownBy(() -> SluiceOffsets.timestamp(-1)).hasMessageContaining("timestamp -1");
    }

    @Test
    void givenOffsetsTakeTheCommittedOneThenTheResetForPartitionsNotNamed() {
        assertThat(SluiceOffsets.offsets(Map.of(P0, 7L)).resolve(ALL, new Cluster()))
                .containsExactlyInAnyOrderEntriesOf(Map.of(P0, 7L, P1, 42L, P2, 10L));
        assertThat(
                        SluiceOffsets.offsets(Map.of(P0, 7L), OffsetResetStrategy.LATEST)
                                .resolve(ALL, new Cluster()))
                .containsExactlyInAnyOrderEntriesOf(Map.of(P0, 7L, P1, 42L, P2, 100L));
        assertThatThrownBy(
                        () ->
                                SluiceOffsets.offsets(Map.of(P0, 7L), OffsetResetStrategy.NONE)
                                        .resolve(ALL, new Cluster()))
                .hasMessageStartingWith("no offset for [orders-2] in offsets {orders-0=7}")
                .hasMessageContaining("choose a reset, OffsetResetStrategy.EARLIEST or LATEST")
                .hasMessageContaining("in SQL, 'properties.auto.offset.reset' = 'earliest'");
    }

    @Test
    void ofKeepsStartingPartitionsNotNamedAtTheEarliestWhateverWasCommitted() {
        assertThat(SluiceOffsets.of(Map.of(P0, 7L)).resolve(ALL, new Cluster()))
                .containsExactlyInAnyOrderEntriesOf(Map.of(P0, 7L, P1, 10L, P2, 10L));
        assertThatThrownBy(() -> SluiceOffsets.offsets(Map.of(P0, -2L)))
                .hasMessage("orders-0: offset -2, need one ≥ 0");
    }

    @Test
    void committedOffsetsWithoutAResetNameThePartitionsThatHaveNone() {
        assertThatThrownBy(() -> SluiceOffsets.committedOffsets().resolve(ALL, new Cluster()))
                .hasMessageStartingWith(
                        "no offset for [orders-0, orders-2] in committed (reset NONE)");
        assertThat(
                        SluiceOffsets.committedOffsets(OffsetResetStrategy.LATEST)
                                .resolve(ALL, new Cluster()))
                .containsExactlyInAnyOrderEntriesOf(Map.of(P0, 100L, P1, 42L, P2, 100L));
        assertThat(SluiceOffsets.committedOrEarliest())
                .isEqualTo(SluiceOffsets.committedOffsets(OffsetResetStrategy.EARLIEST));
    }
}
