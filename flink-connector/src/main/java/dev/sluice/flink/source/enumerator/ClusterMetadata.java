package dev.sluice.flink.source.enumerator;

import dev.sluice.flink.source.SluiceOffsets;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.apache.flink.annotation.Internal;

/** What the enumerator asks of the Kafka cluster: partitions, their leaders, offsets. */
@Internal
public interface ClusterMetadata extends SluiceOffsets.Lookup, AutoCloseable {
    /** The names of the cluster's topics, internal ones ({@code __consumer_offsets}) left out. */
    Set<String> topics();

    /** The partitions of those of {@code topics} that exist. */
    List<PartitionLeader> partitions(Collection<String> topics);

    @Override
    void close();
}
