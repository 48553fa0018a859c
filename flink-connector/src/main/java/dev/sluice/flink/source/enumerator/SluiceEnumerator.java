package dev.sluice.flink.source.enumerator;

import dev.sluice.flink.source.SluiceOffsets;
import dev.sluice.flink.source.split.SluiceSplit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.ReaderInfo;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Discovers the topic subscriber's partitions, makes one split per partition with resolved offsets,
 * and places each on a reader on a host whose broker holds it, its leader's or an in-sync
 * follower's in a rack, when there is one ({@link SplitPlacement}), which is where that reader
 * finds a {@code sluice-brokerd} serving the partition from local memory.
 *
 * <p>Splits are placed once every reader has registered, so that every host's readers are known. An
 * unbounded source discovers new partitions every {@code discoveryIntervalMs} (0: once), also when
 * it has stopping offsets ({@code setUnbounded}); a bounded one discovers once and then tells its
 * readers that no more splits come.
 */
@Internal
public final class SluiceEnumerator implements SplitEnumerator<SluiceSplit, SluiceEnumeratorState> {
    private static final Logger LOG = LoggerFactory.getLogger(SluiceEnumerator.class);

    private final SplitEnumeratorContext<SluiceSplit> context;
    private final TopicSubscriber topicSubscriber;
    private final SluiceOffsets starting;
    private final SluiceOffsets stopping;
    private final boolean bounded;
    private final long discoveryIntervalMs;
    private final Supplier<ClusterMetadata> metadataFactory;
    private final SplitPlacement placement = new SplitPlacement();
    // Read by the discovery thread, written by the coordinator thread.
    private final Set<TopicPartition> known = ConcurrentHashMap.newKeySet();
    private final Set<TopicPartition> assigned = ConcurrentHashMap.newKeySet();
    private final List<SluiceSplit> unassigned = new ArrayList<>();
    private final Map<Integer, Integer> load = new HashMap<>();
    private boolean discovered;
    private ClusterMetadata metadata;

    /**
     * @param stopping where each partition stops; null for never
     * @param bounded whether the source ends once its partitions reached {@code stopping}
     */
    public SluiceEnumerator(
            SplitEnumeratorContext<SluiceSplit> context,
            TopicSubscriber topicSubscriber,
            SluiceOffsets starting,
            SluiceOffsets stopping,
            boolean bounded,
            long discoveryIntervalMs,
            Supplier<ClusterMetadata> metadataFactory,
            SluiceEnumeratorState restored) {
        this.context = context;
        if (bounded && stopping == null) {
            throw new IllegalArgumentException("a bounded source needs stopping offsets");
        }
        this.topicSubscriber = topicSubscriber;
        this.starting = starting;
        this.stopping = stopping;
        this.bounded = bounded;
        this.discoveryIntervalMs = discoveryIntervalMs;
        this.metadataFactory = metadataFactory;
        this.assigned.addAll(restored.assigned());
        this.unassigned.addAll(restored.unassigned());
        this.discovered = restored.discovered();
        this.known.addAll(restored.assigned());
        restored.unassigned().forEach(split -> known.add(split.partition()));
    }

    @Override
    public void start() {
        metadata = metadataFactory.get();
        if (discoversPeriodically()) {
            context.callAsync(this::discover, this::discovered, 0, discoveryIntervalMs);
        } else if (!discovered) {
            context.callAsync(this::discover, this::discovered);
        }
    }

    private boolean discoversPeriodically() {
        return !bounded && discoveryIntervalMs > 0;
    }

    /** On a worker thread: the splits of partitions not seen before. */
    private List<SluiceSplit> discover() {
        List<PartitionLeader> all = topicSubscriber.partitions(metadata);
        if (all.isEmpty()
                && topicSubscriber instanceof TopicSubscriber.TopicPattern
                && !discoversPeriodically()) {
            // Nothing would ever match later: the source would read nothing, silently.
            throw new IllegalStateException(
                    topicSubscriber
                            + " matches no topic, and partition discovery is off ("
                            + (bounded
                                    ? "a bounded source discovers once"
                                    : "setPartitionDiscoveryInterval(Duration.ZERO)")
                            + "): create a matching topic before the job starts"
                            + (bounded
                                    ? ""
                                    : ", or set a partition discovery interval to wait for one"));
        }
        placement.learn(all);
        List<PartitionLeader> fresh =
                all.stream().filter(p -> !known.contains(p.partition())).toList();
        if (fresh.isEmpty()) {
            return List.of();
        }
        List<TopicPartition> partitions = fresh.stream().map(PartitionLeader::partition).toList();
        Map<TopicPartition, Long> starts = starting.resolve(partitions, metadata);
        Map<TopicPartition, Long> stops =
                stopping == null ? Map.of() : stopping.resolve(partitions, metadata);
        List<SluiceSplit> splits = new ArrayList<>();
        for (PartitionLeader p : fresh) {
            long stop = stops.getOrDefault(p.partition(), SluiceSplit.NO_STOPPING_OFFSET);
            long start = starts.get(p.partition());
            splits.add(new SluiceSplit(p.partition(), Math.min(start, stop), stop, p.host()));
        }
        return splits;
    }

    /** On the coordinator thread. */
    private void discovered(List<SluiceSplit> splits, Throwable error) {
        if (error != null) {
            throw new FlinkRuntimeException(
                    "discovering the partitions of " + topicSubscriber + ": " + error.getMessage(),
                    error);
        }
        for (SluiceSplit split : splits) {
            if (known.add(split.partition())) {
                unassigned.add(split);
                LOG.info("discovered {}", split);
            }
        }
        discovered = true;
        assignPending();
    }

    @Override
    public void handleSplitRequest(int subtaskId, String requesterHostname) {
        // Splits are pushed to readers as they are discovered; nothing is handed out on request.
    }

    @Override
    public void addSplitsBack(List<SluiceSplit> splits, int subtaskId) {
        LOG.info("splits back from subtask {}: {}", subtaskId, splits);
        unassigned.addAll(splits);
        splits.forEach(split -> assigned.remove(split.partition()));
        load.merge(subtaskId, -splits.size(), Integer::sum);
        assignPending();
    }

    @Override
    public void addReader(int subtaskId) {
        assignPending();
    }

    /**
     * Places the unassigned splits once every reader is registered; then, if the source is bounded
     * and every split is out, tells the readers no more come (again, to one that registered anew).
     */
    private void assignPending() {
        Map<Integer, ReaderInfo> registered = context.registeredReaders();
        if (!unassigned.isEmpty() && registered.size() >= context.currentParallelism()) {
            Map<Integer, String> hosts = new HashMap<>();
            registered.forEach((subtask, info) -> hosts.put(subtask, info.getLocation()));
            Map<Integer, List<SluiceSplit>> assignment = new HashMap<>();
            for (SluiceSplit split : unassigned) {
                int subtask = placement.choose(split, hosts, load);
                load.merge(subtask, 1, Integer::sum);
                assignment.computeIfAbsent(subtask, s -> new ArrayList<>()).add(split);
                assigned.add(split.partition());
            }
            unassigned.clear();
            LOG.info("assigning {}", assignment);
            context.assignSplits(new SplitsAssignment<>(assignment));
        }
        if (unassigned.isEmpty() && bounded && discovered) {
            registered.keySet().forEach(context::signalNoMoreSplits);
        }
    }

    @Override
    public SluiceEnumeratorState snapshotState(long checkpointId) {
        return new SluiceEnumeratorState(assigned, unassigned, discovered);
    }

    @Override
    public void close() {
        if (metadata != null) {
            metadata.close();
        }
    }
}
