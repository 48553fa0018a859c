package dev.sluice.flink.source.enumerator;

import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.kafka.common.TopicPartition;

/**
 * A partition, the host of its leader ("" when it has none right now), and the hosts whose daemon
 * reads it from a broker of their own: the leader's, then those of its in-sync followers that sit
 * in a rack ({@code broker.rack}). With the deployment convention of docs/cluster.md (each host's
 * daemon has its broker's rack as {@code client.rack}), the leader sends such a host's daemon to
 * its own follower (KIP-392, docs/brokerd.md "Rack awareness"); a follower without a rack is never
 * named, so its host reads from the leader across the network.
 */
@Internal
public record PartitionLeader(TopicPartition partition, String host, List<String> localHosts) {
    public PartitionLeader {
        localHosts = List.copyOf(localHosts);
    }

    /** A partition read locally on its leader's host only. */
    public PartitionLeader(TopicPartition partition, String host) {
        this(partition, host, host.isEmpty() ? List.of() : List.of(host));
    }
}
