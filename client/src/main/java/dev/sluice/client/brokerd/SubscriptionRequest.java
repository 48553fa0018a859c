package dev.sluice.client.brokerd;

import dev.sluice.client.Limits;
import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.protocol.Mode;
import dev.sluice.client.protocol.PartitionStart;
import dev.sluice.client.protocol.StartPosition;
import dev.sluice.client.protocol.StreamStart;
import dev.sluice.client.protocol.Subscribe;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a subscription asks the daemon for: a topic's records, from explicit partitions or from
 * those whose leader is the daemon's broker, each starting at its own position.
 */
@PublicEvolving
public final class SubscriptionRequest {
    private final String topic;
    private final boolean localLeaders;
    private final boolean readUncommitted;
    private final Map<Integer, PartitionStart> partitions;
    private final StartPosition defaultStart;
    private final String groupId;
    private final int slotCount;
    private final long slotSize;
    private final Mode mode;
    private final String jobFilter;
    private final long reorderWindowBytes;
    private final int maxOpenBatches;

    private SubscriptionRequest(Builder builder) {
        this.topic = builder.topic;
        this.localLeaders = builder.localLeaders;
        this.readUncommitted = builder.readUncommitted;
        this.partitions = Map.copyOf(builder.partitions);
        this.defaultStart = builder.defaultStart;
        this.groupId = builder.groupId;
        this.slotCount = builder.slotCount;
        this.slotSize = builder.slotSize;
        this.mode = builder.mode;
        this.jobFilter = builder.jobFilter;
        this.reorderWindowBytes = builder.reorderWindowBytes;
        this.maxOpenBatches = builder.maxOpenBatches;
    }

    public static Builder builder(String topic) {
        return new Builder(topic);
    }

    public String topic() {
        return topic;
    }

    public Mode mode() {
        return mode;
    }

    /** How many batches the reader may hold open at once. */
    public int maxOpenBatches() {
        return maxOpenBatches;
    }

    /** Whether the subscription reads the records of open and aborted transactions too. */
    public boolean readUncommitted() {
        return readUncommitted;
    }

    /** How many slots the subscription's segment has. */
    public int slotCount() {
        return slotCount;
    }

    /** The bytes of one slot; one object fits a slot. */
    public long slotSize() {
        return slotSize;
    }

    /**
     * The SUBSCRIBE that resumes after {@code positions} (partition → next offset): those
     * partitions start there, the others where this request said, or where the group committed.
     */
    Subscribe toSubscribe(Map<Integer, Long> positions) {
        return toSubscribe(positions, List.of());
    }

    /** As above, with the streams a CHUNK_STREAMS reader resumes past what it has. */
    Subscribe toSubscribe(Map<Integer, Long> positions, List<StreamStart> streams) {
        Map<Integer, PartitionStart> starts = new LinkedHashMap<>(partitions);
        positions.forEach(
                (partition, next) -> starts.put(partition, PartitionStart.at(partition, next)));
        List<PartitionStart> entries = new ArrayList<>(starts.values());
        entries.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
        return new Subscribe(
                slotCount,
                localLeaders,
                readUncommitted,
                slotSize,
                reorderWindowBytes,
                mode,
                defaultStart,
                entries,
                topic,
                groupId,
                jobFilter,
                streams);
    }

    /** Builds a request; {@link #build()} checks it. */
    @PublicEvolving
    public static final class Builder {
        private final String topic;
        private boolean localLeaders;
        private boolean readUncommitted;
        private final Map<Integer, PartitionStart> partitions = new LinkedHashMap<>();
        private StartPosition defaultStart = StartPosition.EARLIEST;
        private String groupId = "";
        private int slotCount = 64;
        private long slotSize = 1 << 20;
        private Mode mode = Mode.RECORDS;
        private String jobFilter = "";
        private long reorderWindowBytes;
        private int maxOpenBatches = 1;

        private Builder(String topic) {
            this.topic = Objects.requireNonNull(topic, "topic");
        }

        /** Reads {@code partition} from {@code start}. */
        public Builder partition(PartitionStart start) {
            partitions.put(start.partition(), start);
            return this;
        }

        /** Reads partitions 0 to {@code count - 1}, each from {@code start} (not OFFSET). */
        public Builder partitions(int count, StartPosition start) {
            for (int p = 0; p < count; p++) {
                partition(
                        start == StartPosition.LATEST
                                ? PartitionStart.latest(p)
                                : PartitionStart.earliest(p));
            }
            return this;
        }

        /**
         * Lets the daemon pick the partitions its broker leads; {@link #partition} gives starts.
         */
        public Builder localLeaders() {
            this.localLeaders = true;
            return this;
        }

        /**
         * The subscription's isolation level, as a Kafka consumer's {@code isolation.level}: true
         * reads the records of open and aborted transactions too (read_uncommitted); false, the
         * default, only committed ones (read_committed). SUBSCRIBE's flag {@code READ_UNCOMMITTED}
         * (docs/formats.md, "SUBSCRIBE"), whatever the daemon's own {@code isolation.level}.
         */
        public Builder readUncommitted(boolean readUncommitted) {
            this.readUncommitted = readUncommitted;
            return this;
        }

        /** Where a partition starts that has no start of its own and no committed offset. */
        public Builder defaultStart(StartPosition start) {
            this.defaultStart = Objects.requireNonNull(start);
            return this;
        }

        /** A consumer group: its committed offsets are starts, and commits go to it. */
        public Builder groupId(String groupId) {
            this.groupId = Objects.requireNonNull(groupId);
            return this;
        }

        /** The segment: {@code count} slots of {@code size} bytes; one object fits a slot. */
        public Builder slots(int count, long size) {
            this.slotCount = count;
            this.slotSize = size;
            return this;
        }

        /**
         * CHUNK_STREAMS: the daemon delivers each stream's chunks once, in {@code seq} order; only
         * {@code job}'s chunks, or every job's when it is empty.
         */
        public Builder chunkStreams(String job) {
            this.mode = Mode.CHUNK_STREAMS;
            this.jobFilter = Objects.requireNonNull(job);
            return this;
        }

        /** CHUNK_STREAMS: the most bytes held to reorder; 0 for the daemon's default. */
        public Builder reorderWindowBytes(long bytes) {
            this.reorderWindowBytes = bytes;
            return this;
        }

        /**
         * How many batches the reader may hold open at once (1 by default): more lets one thread
         * poll while others still read earlier batches. Each open batch holds a slot.
         */
        public Builder maxOpenBatches(int count) {
            this.maxOpenBatches = count;
            return this;
        }

        public SubscriptionRequest build() {
            if (mode == Mode.RECORDS && (reorderWindowBytes != 0 || !jobFilter.isEmpty())) {
                throw new IllegalArgumentException(
                        "a reorder window and a job filter are for chunkStreams() only");
            }
            if (reorderWindowBytes < 0) {
                throw new IllegalArgumentException("reorder window " + reorderWindowBytes + " < 0");
            }
            if (topic.isEmpty()) {
                throw new IllegalArgumentException("topic: empty");
            }
            if (!localLeaders && partitions.isEmpty()) {
                throw new IllegalArgumentException(
                        "partitions: none given; name some, or ask for localLeaders()");
            }
            if (!Limits.isSlotCount(slotCount)) {
                throw new IllegalArgumentException("slot count " + slotCount + ": 1 to 65536");
            }
            if (maxOpenBatches < 1 || maxOpenBatches > slotCount) {
                throw new IllegalArgumentException(
                        "max open batches "
                                + maxOpenBatches
                                + ": 1 to the slot count "
                                + slotCount);
            }
            if (!Limits.isSlotSize(slotSize)) {
                throw new IllegalArgumentException(
                        "slot size " + slotSize + ": a multiple of 64 from 256 to 2^31 - 64");
            }
            return new SubscriptionRequest(this);
        }
    }
}
