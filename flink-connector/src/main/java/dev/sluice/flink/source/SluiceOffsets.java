package dev.sluice.flink.source;

import java.io.Serializable;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.kafka.common.TopicPartition;

/**
 * Where the partitions of a source start, or stop ({@link SluiceSourceBuilder#setBounded}, {@link
 * SluiceSourceBuilder#setUnbounded}): the factories and meaning of {@code KafkaSource}'s {@code
 * OffsetsInitializer}. The enumerator turns them into concrete offsets when it first sees a
 * partition, so splits always carry offsets (docs/flink-source.md, "Offsets").
 */
@PublicEvolving
public final class SluiceOffsets implements Serializable {
    private static final long serialVersionUID = 2L;

    enum Kind {
        EARLIEST,
        LATEST,
        COMMITTED,
        SPECIFIC,
        TIMESTAMP
    }

    private final Kind kind;
    // Partitions the kind gives no offset for.
    private final OffsetResetStrategy reset;
    // SPECIFIC: partitions not named take the group's committed offset before the reset, as
    // KafkaSource's OffsetsInitializer.offsets does; of(map) never looked at them.
    private final boolean committedBeforeReset;
    private final Map<TopicPartition, Long> specific;
    private final long timestamp;

    private SluiceOffsets(
            Kind kind,
            OffsetResetStrategy reset,
            boolean committedBeforeReset,
            Map<TopicPartition, Long> specific,
            long timestamp) {
        this.kind = kind;
        this.reset = Objects.requireNonNull(reset);
        this.committedBeforeReset = committedBeforeReset;
        this.specific = specific;
        this.timestamp = timestamp;
    }

    private static SluiceOffsets of(Kind kind, OffsetResetStrategy reset) {
        return new SluiceOffsets(kind, reset, false, Map.of(), -1);
    }

    public static SluiceOffsets earliest() {
        return of(Kind.EARLIEST, OffsetResetStrategy.EARLIEST);
    }

    /** The partitions' end offsets when the enumerator first sees them. */
    public static SluiceOffsets latest() {
        return of(Kind.LATEST, OffsetResetStrategy.LATEST);
    }

    /**
     * The consumer group's committed offsets; a partition without one fails the enumerator, naming
     * it ({@link OffsetResetStrategy#NONE}), as {@code OffsetsInitializer.committedOffsets()}.
     */
    public static SluiceOffsets committedOffsets() {
        return committedOffsets(OffsetResetStrategy.NONE);
    }

    /** The consumer group's committed offsets; partitions without one take {@code reset}. */
    public static SluiceOffsets committedOffsets(OffsetResetStrategy reset) {
        return of(Kind.COMMITTED, reset);
    }

    /** {@code committedOffsets(OffsetResetStrategy.EARLIEST)}. */
    public static SluiceOffsets committedOrEarliest() {
        return committedOffsets(OffsetResetStrategy.EARLIEST);
    }

    /** {@code committedOffsets(OffsetResetStrategy.LATEST)}. */
    public static SluiceOffsets committedOrLatest() {
        return committedOffsets(OffsetResetStrategy.LATEST);
    }

    /**
     * For each partition, the first offset whose record's timestamp is at or after {@code
     * timestampMs}; the partition's end offset when it has none (Kafka's {@code
     * OffsetSpec.forTimestamp}, as {@code OffsetsInitializer.timestamp}).
     */
    public static SluiceOffsets timestamp(long timestampMs) {
        if (timestampMs < 0) {
            throw new IllegalArgumentException(
                    "timestamp " + timestampMs + ": milliseconds since the epoch, ≥ 0");
        }
        return new SluiceOffsets(
                Kind.TIMESTAMP, OffsetResetStrategy.LATEST, false, Map.of(), timestampMs);
    }

    /** {@code offsets(offsets, OffsetResetStrategy.EARLIEST)}, as {@code OffsetsInitializer}. */
    public static SluiceOffsets offsets(Map<TopicPartition, Long> offsets) {
        return offsets(offsets, OffsetResetStrategy.EARLIEST);
    }

    /**
     * These offsets; a partition not named takes the group's committed offset when there is one,
     * else {@code reset} ({@link OffsetResetStrategy#NONE}: the enumerator fails, naming it), as
     * {@code OffsetsInitializer.offsets(Map, OffsetResetStrategy)}.
     */
    public static SluiceOffsets offsets(
            Map<TopicPartition, Long> offsets, OffsetResetStrategy reset) {
        return new SluiceOffsets(Kind.SPECIFIC, reset, true, checked(offsets), -1);
    }

    /**
     * These offsets; partitions not named start at the earliest, whatever the group committed
     * (unlike {@link #offsets(Map)}, which looks at the committed offsets first).
     */
    public static SluiceOffsets of(Map<TopicPartition, Long> offsets) {
        return new SluiceOffsets(
                Kind.SPECIFIC, OffsetResetStrategy.EARLIEST, false, checked(offsets), -1);
    }

    private static Map<TopicPartition, Long> checked(Map<TopicPartition, Long> offsets) {
        offsets.forEach(
                (partition, offset) -> {
                    if (offset == null || offset < 0) {
                        throw new IllegalArgumentException(
                                partition + ": offset " + offset + ", need one ≥ 0");
                    }
                });
        return Map.copyOf(offsets);
    }

    /** The partitions given offsets of their own ({@link #offsets}, {@link #of}). */
    Set<TopicPartition> namedPartitions() {
        return specific.keySet();
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

        /**
         * The first offset whose record's timestamp is at or after {@code timestampMs}; partitions
         * without such a record are left out.
         */
        Map<TopicPartition, Long> forTimestamp(
                Collection<TopicPartition> partitions, long timestampMs);
    }

    /**
     * Concrete offsets for {@code partitions}.
     *
     * @throws IllegalStateException a partition has no offset and the reset is {@code NONE}
     */
    public Map<TopicPartition, Long> resolve(Collection<TopicPartition> partitions, Lookup lookup) {
        Map<TopicPartition, Long> resolved = new HashMap<>();
        switch (kind) {
            case EARLIEST -> resolved.putAll(lookup.earliest(partitions));
            case LATEST -> resolved.putAll(lookup.latest(partitions));
            case COMMITTED -> resolved.putAll(lookup.committed(partitions));
            case SPECIFIC -> {
                partitions.stream()
                        .filter(specific::containsKey)
                        .forEach(p -> resolved.put(p, specific.get(p)));
                if (committedBeforeReset) {
                    resolved.putAll(lookup.committed(unresolved(partitions, resolved)));
                }
            }
            case TIMESTAMP -> {
                // The end offsets first: a record written between the two questions is then
                // read, not skipped (as OffsetsInitializer.timestamp does).
                Map<TopicPartition, Long> ends = lookup.latest(partitions);
                resolved.putAll(lookup.forTimestamp(partitions, timestamp));
                unresolved(partitions, resolved).forEach(p -> resolved.put(p, ends.get(p)));
            }
        }
        List<TopicPartition> rest = unresolved(partitions, resolved);
        if (!rest.isEmpty()) {
            switch (reset) {
                case EARLIEST -> resolved.putAll(lookup.earliest(rest));
                case LATEST -> resolved.putAll(lookup.latest(rest));
                case NONE ->
                        throw new IllegalStateException(
                                "no offset for "
                                        + rest
                                        + " in "
                                        + this
                                        + " and its reset is NONE: give them offsets, or choose"
                                        + " a reset, OffsetResetStrategy.EARLIEST or LATEST"
                                        + " (in SQL, 'properties.auto.offset.reset' = 'earliest'"
                                        + " or 'latest')");
            }
        }
        return resolved;
    }

    private static List<TopicPartition> unresolved(
            Collection<TopicPartition> partitions, Map<TopicPartition, Long> resolved) {
        return partitions.stream().filter(p -> !resolved.containsKey(p)).toList();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SluiceOffsets s
                && kind == s.kind
                && reset == s.reset
                && committedBeforeReset == s.committedBeforeReset
                && specific.equals(s.specific)
                && timestamp == s.timestamp;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, reset, committedBeforeReset, specific, timestamp);
    }

    @Override
    public String toString() {
        String what =
                switch (kind) {
                    case SPECIFIC -> "offsets " + specific;
                    case TIMESTAMP -> "timestamp " + timestamp;
                    default -> kind.name().toLowerCase();
                };
        return kind == Kind.EARLIEST || kind == Kind.LATEST || kind == Kind.TIMESTAMP
                ? what
                : what + " (reset " + reset + ")";
    }
}
