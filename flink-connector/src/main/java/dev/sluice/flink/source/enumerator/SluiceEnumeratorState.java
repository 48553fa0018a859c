package dev.sluice.flink.source.enumerator;

import dev.sluice.flink.source.split.SluiceSplit;
import java.util.List;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.kafka.common.TopicPartition;

/**
 * The enumerator's checkpoint: the partitions already handed to readers (their offsets are in the
 * readers' state), the splits not handed out yet, and whether the first discovery has run, after
 * which a bounded source may tell its readers that no more splits come.
 */
@Internal
public record SluiceEnumeratorState(
        Set<TopicPartition> assigned, List<SluiceSplit> unassigned, boolean discovered) {

    public SluiceEnumeratorState {
        assigned = Set.copyOf(assigned);
        unassigned = List.copyOf(unassigned);
    }

    public static SluiceEnumeratorState empty() {
        return new SluiceEnumeratorState(Set.of(), List.of(), false);
    }
}
