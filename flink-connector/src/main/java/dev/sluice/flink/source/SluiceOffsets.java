package dev.sluice.flink.source;

import java.io.Serializable;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.kafka.common.TopicPartition;

/**
 * Where the partitions of a source start, or stop for a bounded one. The enumerator turns them into
 * concrete offsets when it first sees a partition, so splits always carry offsets.
 */
@PublicEvolving
public final class SluiceOffsets implements Serializable {
    private static final long serialVersionUID = 1L;

    enum Kind {
        EARLIEST,
        LATEST,
        COMMITTED,
        SPECIFIC
    }

    private final Kind kind;
    private final Kind fallback;
    private final Map<TopicPartition, Long> specific;

    private SluiceOffsets(Kind kind, Kind fallback, Map<TopicPartition, Long> specific) {
        this.kind = kind;
        this.fallback = fallback;
        this.specific = specific;
    }

    public static SluiceOffsets earliest() {
        return new SluiceOffsets(Kind.EARLIEST, Kind.EARLIEST, Map.of());
    }

    public static SluiceOffsets latest() {
        return new SluiceOffsets(Kind.LATEST, Kind.LATEST, Map.of());
    }

    /** The consumer group's committed offsets; partitions without one start at the earliest. */
    public static SluiceOffsets committedOrEarliest() {
        return new SluiceOffsets(Kind.COMMITTED, Kind.EARLIEST, Map.of());
    }

    /** The consumer group's committed offsets; partitions without one start at the latest. */
    public static SluiceOffsets committedOrLatest() {
        return new SluiceOffsets(Kind.COMMITTED, Kind.LATEST, Map.of());
    }

    /** These offsets; partitions not named start at the earliest. */
    public static SluiceOffsets of(Map<TopicPartition, Long> offsets) {
        offsets.forEach(
                (partition, offset) -> {
                    if (offset < 0) {
                        throw new IllegalArgumentException(partition + ": offset " + offset);
                    }
                });
        return new SluiceOffsets(Kind.SPECIFIC, Kind.EARLIEST, Map.copyOf(offsets));
    }

    boolean needsGroup() {
        return kind == Kind.COMMITTED;
    }

    /** What the enumerator asks the cluster to resolve offsets. */
    public interface Lookup {
        Map<TopicPartition, Long> earliest(Collection<TopicPartition> partitions);

        Map<TopicPartition, Long> latest(Collection<TopicPartition> partitions);

        /** Committed offsets of the source's group; partitions without one are left out. */
        Map<TopicPartition, Long> committed(Collection<TopicPartition> partitions);
    }

    /** Concrete offsets for {@code partitions}. */
    public Map<TopicPartition, Long> resolve(Collection<TopicPartition> partitions, Lookup lookup) {
        Map<TopicPartition, Long> resolved = new HashMap<>();
        switch (kind) {
            case EARLIEST -> resolved.putAll(lookup.earliest(partitions));
            case LATEST -> resolved.putAll(lookup.latest(partitions));
            case COMMITTED -> resolved.putAll(lookup.committed(partitions));
            case SPECIFIC ->
                    partitions.stream()
                            .filter(specific::containsKey)
                            .forEach(p -> resolved.put(p, specific.get(p)));
        }
        var rest = partitions.stream().filter(p -> !resolved.containsKey(p)).toList();
        if (!rest.isEmpty()) {
            resolved.putAll(fallback == Kind.LATEST ? lookup.latest(rest) : lookup.earliest(rest));
        }
        return resolved;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SluiceOffsets s
                && kind == s.kind
                && fallback == s.fallback
                && specific.equals(s.specific);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, fallback, specific);
    }

    @Override
    public String toString() {
        return kind == Kind.SPECIFIC ? "offsets " + specific : kind.name().toLowerCase();
    }
}
