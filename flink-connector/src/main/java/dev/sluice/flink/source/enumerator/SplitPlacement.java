package dev.sluice.flink.source.enumerator;

import dev.sluice.flink.source.split.SluiceSplit;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.annotation.Internal;
import org.apache.kafka.common.TopicPartition;

/**
 * Which reader gets a split: the least loaded of the readers on a host whose {@code sluice-brokerd}
 * reads the partition from its own broker (its leader's host, or with rack awareness the host of an
 * in-sync follower in a rack: {@link PartitionLeader#localHosts()}), or the least loaded of all
 * when none is there. Ties go to the lowest subtask, so the choice is repeatable.
 *
 * <p>Hosts match when their names are equal or resolve to a same address, or are both loopback (a
 * TaskManager reports {@code localhost} where a broker advertises {@code 127.0.0.1}).
 */
@Internal
public final class SplitPlacement {
    private final Map<String, InetAddress[]> resolved = new ConcurrentHashMap<>();
    // From the latest discovery; a split restored before one knows its leader's host only.
    private final Map<TopicPartition, List<String>> localHosts = new ConcurrentHashMap<>();

    /** Takes each partition's local hosts from a discovery, replacing what an earlier one said. */
    public void learn(Collection<PartitionLeader> partitions) {
        partitions.forEach(p -> localHosts.put(p.partition(), p.localHosts()));
    }

    /**
     * @param readers subtask → host of each registered reader
     * @param load subtask → splits it reads now
     */
    public int choose(SluiceSplit split, Map<Integer, String> readers, Map<Integer, Integer> load) {
        return choose(
                localHosts.getOrDefault(split.partition(), List.of(split.leaderHost())),
                readers,
                load);
    }

    /** As above, for a partition read locally on {@code hosts}. */
    int choose(List<String> hosts, Map<Integer, String> readers, Map<Integer, Integer> load) {
        if (readers.isEmpty()) {
            throw new IllegalArgumentException("no reader to place a split on");
        }
        int best =
                leastLoaded(
                        readers.keySet().stream()
                                .filter(
                                        subtask ->
                                                hosts.stream()
                                                        .anyMatch(
                                                                host ->
                                                                        sameHost(
                                                                                host,
                                                                                readers.get(
                                                                                        subtask))))
                                .toList(),
                        load);
        return best >= 0 ? best : leastLoaded(readers.keySet(), load);
    }

    private static int leastLoaded(Collection<Integer> subtasks, Map<Integer, Integer> load) {
        int best = -1;
        int bestLoad = Integer.MAX_VALUE;
        for (int subtask : subtasks) {
            int l = load.getOrDefault(subtask, 0);
            if (l < bestLoad || (l == bestLoad && subtask < best)) {
                best = subtask;
                bestLoad = l;
            }
        }
        return best;
    }

    boolean sameHost(String a, String b) {
        if (a.isEmpty() || b == null || b.isEmpty()) {
            return false;
        }
        if (a.equalsIgnoreCase(b)) {
            return true;
        }
        InetAddress[] as = addresses(a);
        InetAddress[] bs = addresses(b);
        for (InetAddress x : as) {
            for (InetAddress y : bs) {
                if (x.equals(y) || (x.isLoopbackAddress() && y.isLoopbackAddress())) {
                    return true;
                }
            }
        }
        return false;
    }

    private InetAddress[] addresses(String host) {
        return resolved.computeIfAbsent(
                host,
                h -> {
                    try {
                        return InetAddress.getAllByName(h);
                    } catch (UnknownHostException e) {
                        return new InetAddress[0];
                    }
                });
    }
}
