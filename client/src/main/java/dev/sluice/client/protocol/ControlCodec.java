package dev.sluice.client.protocol;

import dev.sluice.client.Limits;
import dev.sluice.client.annotation.Internal;
import dev.sluice.client.segment.ObjectKind;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.ToIntFunction;

/**
 * Control frames to bytes and back, as {@code docs/formats.md} "Control protocol" gives them and
 * byte for byte as the C++ codec writes them. Decoding applies every check of the spec and throws a
 * {@link ProtocolException} naming the first field that breaks one; encoding applies the same
 * checks, so nothing leaves that the daemon would refuse, and throws an {@link
 * InvalidMessageException} (an {@code IllegalArgumentException}): there the message is the
 * caller's.
 */
@Internal
public final class ControlCodec {
    /** The newest version this side speaks, which it sends (spec "Versions"). */
    public static final int VERSION = 4;

    /** The oldest version this side speaks. */
    public static final int MIN_VERSION = 1;

    /** Version 2 adds SUBSCRIBED's {@code segment_dir}: only the daemon knows its folder. */
    public static final int SEGMENT_DIR_VERSION = 2;

    /**
     * Version 3 adds SUBSCRIBE's {@code READ_UNCOMMITTED} flag (the subscription's own isolation
     * level) and STREAM_GAP.
     */
    public static final int ISOLATION_AND_GAP_VERSION = 3;

    /**
     * Version 4 adds PRODUCE and PRODUCING: a producer on the daemon's host hands it chunks through
     * a segment of its own.
     */
    public static final int PRODUCE_VERSION = 4;

    /** The frame header: frame_length, version, type, request_id. */
    public static final int FRAME_HEADER_SIZE = 16;

    /** frame_length counts the bytes after itself: at least the rest of the header. */
    public static final long MIN_FRAME_LENGTH = FRAME_HEADER_SIZE - 4;

    public static final long MAX_FRAME_LENGTH = 1 << 20;

    private static final int LOCAL_LEADERS_FLAG = 1;
    private static final int READ_UNCOMMITTED_FLAG = 2; // version 3 on
    private static final int PARTITION_START_SIZE = 16;
    // A stream start: next_seq, then job and stream of at least one byte each.
    private static final int MIN_STREAM_START_SIZE = 8 + 3 + 3;
    private static final int PARTITION_SIZE = 4;
    private static final int MAX_GROUP_ID_LENGTH = 255;
    private static final int MAX_SEGMENT_NAME_LENGTH = 255;
    private static final int MAX_SCHEMA_LENGTH = 65536;
    private static final int MAX_PATH_LENGTH = 4095; // PATH_MAX less its NUL
    private static final int LAST_LANE = 30;

    private ControlCodec() {}

    /**
     * One whole frame, length prefix included.
     *
     * @throws InvalidMessageException when the frame breaks a rule of the format: the caller's
     *     message, refused before it is sent
     */
    public static byte[] encode(Frame frame) {
        try {
            return encodeChecked(frame);
        } catch (ProtocolException refusal) {
            throw new InvalidMessageException(refusal);
        }
    }

    private static byte[] encodeChecked(Frame frame) throws ProtocolException {
        checkVersion(frame.version());
        WireWriter out = new WireWriter();
        out.i32(0); // frame_length, known at the end
        out.u16("version", frame.version());
        out.u16("type", frame.message().type().code());
        out.u64(frame.requestId());
        ControlMessage message = frame.message();
        switch (message.type()) {
            case SUBSCRIBE -> encodeBody((Subscribe) message, out);
            case SUBSCRIBED -> encodeBody((Subscribed) message, frame.version(), out);
            case RELEASE -> {
                Release m = (Release) message;
                out.u64(m.subscriptionId());
                out.u64(m.processedThrough());
            }
            case HEARTBEAT -> {
                Heartbeat m = (Heartbeat) message;
                out.u64(m.timeNs());
                out.u64(m.timeoutNs());
            }
            case ERROR -> {
                ErrorMessage m = (ErrorMessage) message;
                out.u64(m.subscriptionId());
                out.u16("code", m.code().code());
                out.u16("min_version", m.minVersion());
                out.u16("max_version", m.maxVersion());
                out.str16("message", m.message());
            }
            case CLOSE -> out.u64(((Close) message).subscriptionId());
            case STREAM_GAP -> {
                StreamGap m = (StreamGap) message;
                out.u64(m.subscriptionId());
                out.u64(m.missingFrom());
                out.u64(m.missingTo());
                out.u64(m.waitedNanos());
                out.str16("job", m.job());
                out.str16("stream", m.stream());
            }
            case PRODUCE -> {
                Produce m = (Produce) message;
                out.i32(0); // flags
                out.str16("topic", m.topic());
                out.str16("segment_path", m.segmentPath());
            }
            case PRODUCING -> out.u64(((Producing) message).producerId());
        }
        long length = out.size() - 4L;
        checkFrameLength(length);
        byte[] bytes = out.toByteArray();
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(0, (int) length);
        // The decoder holds the format's rules; running it here keeps one copy of them.
        decode(bytes);
        return bytes;
    }

    public static Frame decode(byte[] frame) throws ProtocolException {
        return decode(ByteBuffer.wrap(frame));
    }

    /** Exactly one whole frame, length prefix included: the buffer's remaining bytes. */
    public static Frame decode(ByteBuffer frame) throws ProtocolException {
        ByteBuffer bytes = frame.slice().order(ByteOrder.LITTLE_ENDIAN);
        if (bytes.remaining() < 4) {
            throw new ProtocolException(
                    "frame_length",
                    "missing",
                    "a frame starts with a 4-byte length, got " + bytes.remaining() + " bytes");
        }
        long length = Integer.toUnsignedLong(bytes.getInt(0));
        checkFrameLength(length);
        if (bytes.remaining() - 4 != length) {
            throw new ProtocolException(
                    "frame_length",
                    length,
                    "the buffer holds " + (bytes.remaining() - 4) + " bytes after it");
        }
        WireReader in = new WireReader(bytes.position(4));
        int version = in.u16("version");
        checkVersion(version);
        MessageType type = readType(in, version);
        long requestId = in.u64("request_id");
        ControlMessage message =
                switch (type) {
                    case SUBSCRIBE -> decodeSubscribe(in, version);
                    case SUBSCRIBED -> decodeSubscribed(in, version);
                    case RELEASE ->
                            new Release(readSubscriptionId(in), in.u64("processed_through"));
                    case HEARTBEAT -> decodeHeartbeat(in);
                    case ERROR -> decodeError(in);
                    case CLOSE -> new Close(in.u64("subscription_id"));
                    case STREAM_GAP -> decodeStreamGap(in);
                    case PRODUCE -> decodeProduce(in);
                    case PRODUCING -> new Producing(readId(in, "producer_id"));
                };
        if (in.remaining() != 0) {
            throw new ProtocolException(
                    "frame_length",
                    length,
                    in.remaining() + " bytes after the end of the " + type + " body");
        }
        return new Frame(requestId, message, version);
    }

    private static void checkVersion(int version) throws ProtocolException {
        if (version < MIN_VERSION || version > VERSION) {
            throw new ProtocolException(
                    "version",
                    version,
                    "this side speaks versions " + MIN_VERSION + " to " + VERSION);
        }
    }

    /**
     * A type is a message of the versions that define it: STREAM_GAP is version 3 on, PRODUCE and
     * PRODUCING version 4 on.
     */
    private static MessageType readType(WireReader in, int version) throws ProtocolException {
        MessageType type = readEnum(in, "type", MessageType.values(), MessageType::code);
        if (version < type.firstVersion()) {
            throw new ProtocolException(
                    "type",
                    type.code(),
                    "expected 1 (SUBSCRIBE) to "
                            + numbered(lastTypeOf(version))
                            + " in version "
                            + version
                            + "; "
                            + numbered(type)
                            + " is version "
                            + type.firstVersion()
                            + " on");
        }
        return type;
    }

    /** The type with the highest number in a version: the versions add types in number order. */
    private static MessageType lastTypeOf(int version) {
        MessageType last = MessageType.SUBSCRIBE;
        for (MessageType type : MessageType.values()) {
            if (type.firstVersion() <= version) {
                last = type;
            }
        }
        return last;
    }

    private static String numbered(MessageType type) {
        return type.code() + " (" + type + ")";
    }

    /** Whether a declared frame_length is within the spec's bounds. */
    static void checkFrameLength(long frameLength) throws ProtocolException {
        if (frameLength < MIN_FRAME_LENGTH || frameLength > MAX_FRAME_LENGTH) {
            throw new ProtocolException("frame_length", frameLength, "expected 12 to 1048576");
        }
    }

    private static void encodeBody(Subscribe m, WireWriter out) throws ProtocolException {
        out.u32("slot_count", m.slotCount());
        out.i32(
                (m.localLeaders() ? LOCAL_LEADERS_FLAG : 0)
                        | (m.readUncommitted() ? READ_UNCOMMITTED_FLAG : 0));
        out.u64(m.slotSize());
        out.u64(m.reorderWindowBytes());
        out.u16("mode", m.mode().code());
        out.u16("default_start", m.defaultStart().code());
        out.i32(m.partitions().size());
        for (PartitionStart entry : m.partitions()) {
            out.i32(entry.partition());
            out.u16("start", entry.start().code());
            out.u16("reserved", 0);
            out.u64(entry.offset());
        }
        out.str16("topic", m.topic());
        out.str16("group_id", m.groupId());
        out.str16("job_filter", m.jobFilter());
        out.i32(m.streams().size());
        for (StreamStart entry : m.streams()) {
            out.u64(entry.nextSeq());
            out.str16("job", entry.job());
            out.str16("stream", entry.stream());
        }
    }

    private static void encodeBody(Subscribed m, int version, WireWriter out)
            throws ProtocolException {
        out.u64(m.subscriptionId());
        out.u16("object_kind", m.objectKind().code());
        out.u16("lane_hint", m.laneHint());
        out.i32(m.partitions().size());
        for (int partition : m.partitions()) {
            out.i32(partition);
        }
        out.str16("segment_name", m.segmentName());
        out.bytes32(m.schema());
        if (version >= SEGMENT_DIR_VERSION) {
            out.str16("segment_dir", m.segmentDir());
        } else if (!m.segmentDir().isEmpty()) {
            // Dropping it would leave the reader to guess the folder.
            throw new ProtocolException(
                    "segment_dir",
                    WireReader.quote(m.segmentDir()),
                    "version 1 has no segment_dir");
        }
    }

    private static void checkSubscribeFlags(long flags, int version) throws ProtocolException {
        if (version < ISOLATION_AND_GAP_VERSION) {
            if ((flags & ~LOCAL_LEADERS_FLAG) != 0) {
                throw new ProtocolException(
                        "flags",
                        flags,
                        "only bit 0 (LOCAL_LEADERS) is defined in version "
                                + version
                                + "; bit 1 (READ_UNCOMMITTED) is version 3 on");
            }
        } else if ((flags & ~(LOCAL_LEADERS_FLAG | READ_UNCOMMITTED_FLAG)) != 0) {
            throw new ProtocolException(
                    "flags",
                    flags,
                    "only bits 0 (LOCAL_LEADERS) and 1 (READ_UNCOMMITTED) are defined");
        }
    }

    /**
     * slot_count and slot_size have bounds of the format (the segment's), so a frame outside them
     * is malformed (BAD_FRAME); what the daemon is configured to serve within them is answered
     * BAD_REQUEST (spec "ERROR").
     */
    private static Subscribe decodeSubscribe(WireReader in, int version) throws ProtocolException {
        long slotCount = in.u32("slot_count");
        if (!Limits.isSlotCount(slotCount)) {
            throw new ProtocolException("slot_count", slotCount, "expected 1 to 65536");
        }
        long flags = in.u32("flags");
        checkSubscribeFlags(flags, version);
        boolean localLeaders = (flags & LOCAL_LEADERS_FLAG) != 0;
        boolean readUncommitted = (flags & READ_UNCOMMITTED_FLAG) != 0;
        long slotSize = in.u64("slot_size");
        if (!Limits.isSlotSize(slotSize)) {
            throw new ProtocolException(
                    "slot_size",
                    Long.toUnsignedString(slotSize),
                    "expected a multiple of 64 from 256 to 2^31 - 64");
        }
        long reorderWindowBytes = in.u64("reorder_window_bytes");
        Mode mode = readEnum(in, "mode", Mode.values(), Mode::code);
        if (mode == Mode.RECORDS && reorderWindowBytes != 0) {
            throw new ProtocolException(
                    "reorder_window_bytes",
                    Long.toUnsignedString(reorderWindowBytes),
                    "must be 0 in mode RECORDS");
        }
        StartPosition defaultStart =
                readEnum(
                        in,
                        "default_start",
                        new StartPosition[] {StartPosition.EARLIEST, StartPosition.LATEST},
                        StartPosition::code);
        long count = in.u32("partition_count");
        checkCount(in, "partition_count", count, PARTITION_START_SIZE);
        if (count == 0 && !localLeaders) {
            throw new ProtocolException(
                    "partition_count", count, "at least one partition without LOCAL_LEADERS");
        }
        List<PartitionStart> partitions = new ArrayList<>();
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < count; i++) {
            PartitionStart entry = decodePartitionStart(in, i);
            if (!seen.add(entry.partition())) {
                throw new ProtocolException(
                        "partitions[" + i + "].partition", entry.partition(), "repeated");
            }
            partitions.add(entry);
        }
        String topic = in.str16("topic");
        checkName("topic", topic, 1, Limits.MAX_TOPIC_NAME_LENGTH);
        String groupId = in.str16("group_id");
        if (utf8Length(groupId) > MAX_GROUP_ID_LENGTH) {
            throw new ProtocolException(
                    "group_id", WireReader.quote(groupId), "expected at most 255 bytes");
        }
        String jobFilter = in.str16("job_filter");
        checkName("job_filter", jobFilter, 0, Limits.MAX_NAME_LENGTH);
        if (mode == Mode.RECORDS && !jobFilter.isEmpty()) {
            throw new ProtocolException(
                    "job_filter", WireReader.quote(jobFilter), "must be empty in mode RECORDS");
        }
        long streamCount = in.u32("stream_count");
        checkCount(in, "stream_count", streamCount, MIN_STREAM_START_SIZE);
        if (mode == Mode.RECORDS && streamCount != 0) {
            throw new ProtocolException("stream_count", streamCount, "must be 0 in mode RECORDS");
        }
        List<StreamStart> streams = new ArrayList<>();
        Set<List<String>> seenStreams = new HashSet<>();
        for (int i = 0; i < streamCount; i++) {
            String at = "streams[" + i + "].";
            long nextSeq = in.u64(at + "next_seq");
            String job = in.str16(at + "job");
            checkName(at + "job", job, 1, Limits.MAX_NAME_LENGTH);
            String stream = in.str16(at + "stream");
            checkName(at + "stream", stream, 1, Limits.MAX_NAME_LENGTH);
            if (!seenStreams.add(List.of(job, stream))) {
                throw new ProtocolException(
                        at + "stream", WireReader.quote(stream), "repeated for job " + job);
            }
            streams.add(new StreamStart(job, stream, nextSeq));
        }
        return new Subscribe(
                (int) slotCount,
                localLeaders,
                readUncommitted,
                slotSize,
                reorderWindowBytes,
                mode,
                defaultStart,
                partitions,
                topic,
                groupId,
                jobFilter,
                streams);
    }

    private static PartitionStart decodePartitionStart(WireReader in, int index)
            throws ProtocolException {
        String at = "partitions[" + index + "].";
        int partition = in.i32(at + "partition");
        if (partition < 0) {
            throw new ProtocolException(at + "partition", partition, "must be >= 0");
        }
        StartPosition start =
                readEnum(in, at + "start", StartPosition.values(), StartPosition::code);
        int reserved = in.u16(at + "reserved");
        if (reserved != 0) {
            throw new ProtocolException(at + "reserved", reserved, "must be 0");
        }
        long offset = in.i64(at + "offset");
        if (start == StartPosition.OFFSET && offset < 0) {
            throw new ProtocolException(at + "offset", offset, "must be >= 0");
        }
        if (start != StartPosition.OFFSET && offset != 0) {
            throw new ProtocolException(at + "offset", offset, "must be 0 unless start is OFFSET");
        }
        return new PartitionStart(partition, start, offset);
    }

    private static Subscribed decodeSubscribed(WireReader in, int version)
            throws ProtocolException {
        long subscriptionId = readSubscriptionId(in);
        ObjectKind objectKind = readEnum(in, "object_kind", ObjectKind.values(), ObjectKind::code);
        int laneHint = in.u16("lane_hint");
        if (laneHint > LAST_LANE && laneHint != Subscribed.NO_LANE_HINT) {
            throw new ProtocolException(
                    "lane_hint", laneHint, "expected 0 to 30, or 65535 for none");
        }
        long count = in.u32("partition_count");
        checkCount(in, "partition_count", count, PARTITION_SIZE);
        List<Integer> partitions = new ArrayList<>();
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < count; i++) {
            String field = "partitions[" + i + "]";
            int partition = in.i32(field);
            if (partition < 0) {
                throw new ProtocolException(field, partition, "must be >= 0");
            }
            if (!seen.add(partition)) {
                throw new ProtocolException(field, partition, "repeated");
            }
            partitions.add(partition);
        }
        String segmentName = in.str16("segment_name");
        checkName("segment_name", segmentName, 1, MAX_SEGMENT_NAME_LENGTH);
        if (segmentName.equals(".") || segmentName.equals("..")) {
            throw new ProtocolException(
                    "segment_name", WireReader.quote(segmentName), "not a file name");
        }
        byte[] schema = in.bytes32("schema");
        if (schema.length < 1 || schema.length > MAX_SCHEMA_LENGTH) {
            throw new ProtocolException(
                    "schema", schema.length + " bytes", "expected 1 to 65536 bytes");
        }
        String segmentDir = "";
        if (version >= SEGMENT_DIR_VERSION) {
            segmentDir = in.str16("segment_dir");
            checkAbsolutePath("segment_dir", segmentDir);
        }
        return new Subscribed(
                subscriptionId, objectKind, laneHint, partitions, segmentName, schema, segmentDir);
    }

    /**
     * SUBSCRIBED's segment_dir and PRODUCE's segment_path: a path the peer opens as it is, so it is
     * absolute and fits PATH_MAX.
     */
    private static void checkAbsolutePath(String field, String path) throws ProtocolException {
        int length = utf8Length(path);
        if (length < 1 || length > MAX_PATH_LENGTH) {
            throw new ProtocolException(field, WireReader.quote(path), "expected 1 to 4095 bytes");
        }
        if (path.charAt(0) != '/') {
            throw new ProtocolException(field, WireReader.quote(path), "not an absolute path");
        }
        if (path.indexOf('\0') >= 0) {
            throw new ProtocolException(field, WireReader.quote(path), "a path has no NUL byte");
        }
    }

    private static Produce decodeProduce(WireReader in) throws ProtocolException {
        long flags = in.u32("flags");
        if (flags != 0) {
            throw new ProtocolException("flags", flags, "no flag is defined in PRODUCE: must be 0");
        }
        String topic = in.str16("topic");
        checkName("topic", topic, 1, Limits.MAX_TOPIC_NAME_LENGTH);
        String segmentPath = in.str16("segment_path");
        checkAbsolutePath("segment_path", segmentPath);
        return new Produce(topic, segmentPath);
    }

    private static StreamGap decodeStreamGap(WireReader in) throws ProtocolException {
        long subscriptionId = readSubscriptionId(in);
        long missingFrom = in.u64("missing_from");
        long missingTo = in.u64("missing_to");
        if (Long.compareUnsigned(missingTo, missingFrom) < 0) {
            throw new ProtocolException(
                    "missing_to",
                    Long.toUnsignedString(missingTo),
                    "must be >= missing_from " + Long.toUnsignedString(missingFrom));
        }
        long waitedNanos = in.u64("waited_ns");
        String job = in.str16("job");
        checkName("job", job, 1, Limits.MAX_NAME_LENGTH);
        String stream = in.str16("stream");
        checkName("stream", stream, 1, Limits.MAX_NAME_LENGTH);
        return new StreamGap(subscriptionId, missingFrom, missingTo, waitedNanos, job, stream);
    }

    private static Heartbeat decodeHeartbeat(WireReader in) throws ProtocolException {
        long timeNs = in.u64("time_ns");
        long timeoutNs = in.u64("timeout_ns");
        if (timeoutNs == 0) {
            throw new ProtocolException("timeout_ns", timeoutNs, "must be >= 1");
        }
        return new Heartbeat(timeNs, timeoutNs);
    }

    private static ErrorMessage decodeError(WireReader in) throws ProtocolException {
        long subscriptionId = in.u64("subscription_id");
        ErrorCode code = readEnum(in, "code", ErrorCode.values(), ErrorCode::code);
        int minVersion = in.u16("min_version");
        if (minVersion == 0) {
            throw new ProtocolException("min_version", minVersion, "must be >= 1");
        }
        int maxVersion = in.u16("max_version");
        if (maxVersion < minVersion) {
            throw new ProtocolException(
                    "max_version", maxVersion, "must be >= min_version " + minVersion);
        }
        return new ErrorMessage(subscriptionId, code, minVersion, maxVersion, in.str16("message"));
    }

    private static long readSubscriptionId(WireReader in) throws ProtocolException {
        return readId(in, "subscription_id");
    }

    /** A subscription id, or a producer id from the same counter: 0 is none. */
    private static long readId(WireReader in, String field) throws ProtocolException {
        long id = in.u64(field);
        if (id == 0) {
            throw new ProtocolException(field, id, "must be >= 1");
        }
        return id;
    }

    /**
     * Every enumeration of the protocol runs from 1 to its last value without gaps; {@code allowed}
     * lists the values in order.
     */
    private static <E extends Enum<E>> E readEnum(
            WireReader in, String field, E[] allowed, ToIntFunction<E> codeOf)
            throws ProtocolException {
        int value = in.u16(field);
        for (E candidate : allowed) {
            if (codeOf.applyAsInt(candidate) == value) {
                return candidate;
            }
        }
        E first = allowed[0];
        E last = allowed[allowed.length - 1];
        throw new ProtocolException(
                field,
                value,
                "expected "
                        + codeOf.applyAsInt(first)
                        + " ("
                        + first
                        + ") to "
                        + codeOf.applyAsInt(last)
                        + " ("
                        + last
                        + ")");
    }

    /** Names travel into file names, logs and metric labels, so they keep to a safe alphabet. */
    private static void checkName(String field, String name, int min, int max)
            throws ProtocolException {
        int length = utf8Length(name);
        if (length < min || length > max) {
            throw new ProtocolException(
                    field, WireReader.quote(name), "expected " + min + " to " + max + " bytes");
        }
        for (int i = 0; i < name.length(); i++) {
            if (!Limits.isNameCharacter(name.charAt(i))) {
                throw new ProtocolException(
                        field, WireReader.quote(name), "only [A-Za-z0-9._-] is allowed");
            }
        }
    }

    /** A count of fixed-size entries must fit in what is left of the frame. */
    private static void checkCount(WireReader in, String field, long count, int entrySize)
            throws ProtocolException {
        if (count > in.remaining() / entrySize) {
            throw new ProtocolException(
                    field,
                    count,
                    "more entries than the " + in.remaining() + " bytes left in the frame hold");
        }
    }

    private static int utf8Length(String text) {
        return text.getBytes(StandardCharsets.UTF_8).length;
    }
}
