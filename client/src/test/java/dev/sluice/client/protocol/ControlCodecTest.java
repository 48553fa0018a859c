package dev.sluice.client.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.segment.ObjectKind;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The Java codec, case for case as the C++ one's tests ({@code protocol_codec_test.cc}). */
class ControlCodecTest {
    private static final int BODY = ControlCodec.FRAME_HEADER_SIZE;

    /** SUBSCRIBE's fields, mutable, so that each case can change one of a valid message. */
    static final class SubscribeFields {
        int slotCount = 32;
        long slotSize = 65536;
        long reorderWindowBytes = 1 << 20;
        Mode mode = Mode.CHUNK_STREAMS;
        StartPosition defaultStart = StartPosition.LATEST;
        List<PartitionStart> partitions =
                List.of(PartitionStart.at(1, 7), PartitionStart.earliest(4));
        String topic = "chunks";
        String groupId = "g\u00fcnter";
        String jobFilter = "job-1";
        List<StreamStart> streams = List.of(new StreamStart("job-1", "cyan", 3));

        Subscribe message() {
            return new Subscribe(
                    slotCount,
                    false,
                    false,
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
    }

    static Subscribe validSubscribe() {
        return new SubscribeFields().message();
    }

    static Frame subscribe(Consumer<SubscribeFields> change) {
        SubscribeFields fields = new SubscribeFields();
        change.accept(fields);
        return new Frame(1, fields.message());
    }

    static Subscribed validSubscribed() {
        return new Subscribed(
                3, ObjectKind.CHUNKS, 30, List.of(1, 4), "seg-3", new byte[] {1, 2, 3}, "/dev/shm");
    }

    static List<Frame> oneOfEachMessage() {
        return List.of(
                new Frame(11, validSubscribe()),
                new Frame(12, validSubscribed()),
                new Frame(13, new Release(3, 99)),
                new Frame(0, new Heartbeat(42, 1000)),
                new Frame(
                        14,
                        new ErrorMessage(3, ErrorCode.BAD_REQUEST, 1, 2, "slot_size too large")),
                new Frame(15, new Close(3)),
                new Frame(0, validStreamGap()),
                new Frame(16, validProduce()),
                new Frame(16, new Producing(4)));
    }

    static Produce validProduce() {
        return new Produce("sluice.chunks.printer-1", "/dev/shm/producer-1");
    }

    static StreamGap validStreamGap() {
        return new StreamGap(3, 5, 9, 2_000_000_000L, "job-1", "cyan");
    }

    private static ByteBuffer le(byte[] bytes) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static byte[] withLengthFixed(byte[] bytes) {
        le(bytes).putInt(0, bytes.length - 4);
        return bytes;
    }

    private static void assertRefused(byte[] bytes, String field) {
        assertThatThrownBy(() -> ControlCodec.decode(bytes))
                .isInstanceOfSatisfying(
                        ProtocolException.class,
                        e -> {
                            assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
                            assertThat(e.getMessage()).startsWith(field + " = ");
                        });
    }

    @Test
    void everyMessageSurvivesARoundTrip() throws Exception {
        for (Frame frame : oneOfEachMessage()) {
            assertThat(ControlCodec.decode(ControlCodec.encode(frame)))
                    .as("%s", frame.message().type())
                    .isEqualTo(frame);
        }
    }

    @Test
    void theHeaderIsLittleEndianAtTheSpecOffsets() throws Exception {
        byte[] bytes =
                ControlCodec.encode(
                        new Frame(0x1122334455667788L, new Release(0x0102030405060708L, 0x0A)));
        byte[] expected = {
            28,
            0,
            0,
            0, // frame_length: 12 + 16
            4,
            0, // version
            3,
            0, // type RELEASE
            (byte) 0x88,
            0x77,
            0x66,
            0x55,
            0x44,
            0x33,
            0x22,
            0x11, // request_id
            8,
            7,
            6,
            5,
            4,
            3,
            2,
            1, // subscription_id
            0x0A,
            0,
            0,
            0,
            0,
            0,
            0,
            0, // processed_through
        };
        assertThat(bytes).isEqualTo(expected);
    }

    @Test
    void subscribeFieldsSitAtTheirBodyOffsets() throws Exception {
        ByteBuffer bytes = le(ControlCodec.encode(new Frame(1, validSubscribe())));
        assertThat(bytes.getInt(BODY)).as("slot_count").isEqualTo(32);
        assertThat(bytes.getLong(BODY + 8)).as("slot_size").isEqualTo(65536);
        assertThat(bytes.getLong(BODY + 16)).as("reorder_window_bytes").isEqualTo(1 << 20);
        assertThat(bytes.getShort(BODY + 24)).as("mode").isEqualTo((short) 2);
        assertThat(bytes.getShort(BODY + 26)).as("default_start").isEqualTo((short) 2);
        assertThat(bytes.getInt(BODY + 28)).as("partition_count").isEqualTo(2);
        assertThat(bytes.getInt(BODY + 32)).as("partitions[0].partition").isEqualTo(1);
        assertThat(bytes.getShort(BODY + 36)).as("partitions[0].start").isEqualTo((short) 3);
        assertThat(bytes.getLong(BODY + 40)).as("partitions[0].offset").isEqualTo(7);
        assertThat(bytes.getInt(BODY + 48)).as("partitions[1].partition").isEqualTo(4);
        assertThat(bytes.getShort(BODY + 64)).as("topic's length").isEqualTo((short) 6);
        assertThat(bytes.get(BODY + 66)).as("topic").isEqualTo((byte) 'c');
    }

    @Test
    void everyTruncationIsRefusedWithoutReadingPastTheEnd() throws Exception {
        for (Frame frame : oneOfEachMessage()) {
            byte[] whole = ControlCodec.encode(frame);
            for (int size = 0; size < whole.length; size++) {
                byte[] cut = Arrays.copyOf(whole, size);
                assertRefused(cut, "frame_length");
                // The same cut, with a frame_length that agrees: a field of the body runs out.
                if (size >= ControlCodec.FRAME_HEADER_SIZE) {
                    assertThatThrownBy(() -> ControlCodec.decode(withLengthFixed(cut)))
                            .as("%s cut to %d bytes", frame.message().type(), size)
                            .isInstanceOf(ProtocolException.class)
                            .hasMessageContaining(" = ");
                }
            }
        }
    }

    /**
     * Version 2 adds SUBSCRIBED's segment_dir after the schema; the other messages, and version 1's
     * SUBSCRIBED, are as they were (spec "Versions"), and so are they all in the later versions but
     * for SUBSCRIBE's new flag and the new messages.
     */
    @Test
    void onlyVersionTwoOfSubscribedCarriesTheSegmentDir() throws Exception {
        byte[] one = ControlCodec.encode(subscribedIn("", 1));
        byte[] two = ControlCodec.encode(subscribedIn("/dev/shm", 2));
        assertThat(two).hasSize(one.length + 2 + 8);
        assertThat(Arrays.copyOfRange(two, 6, one.length))
                .as("v1's body is a prefix")
                .isEqualTo(Arrays.copyOfRange(one, 6, one.length));
        assertThat(ControlCodec.decode(one).version()).isEqualTo(1);
        assertThat(((Subscribed) ControlCodec.decode(two).message()).segmentDir())
                .isEqualTo("/dev/shm");
        for (Frame frame : oneOfEachMessage()) {
            MessageType type = frame.message().type();
            int first =
                    type == MessageType.SUBSCRIBED
                            ? ControlCodec.SEGMENT_DIR_VERSION
                            : type.firstVersion();
            for (int older = first; older < ControlCodec.VERSION; older++) {
                byte[] bytes =
                        ControlCodec.encode(new Frame(frame.requestId(), frame.message(), older));
                le(bytes).putShort(4, (short) ControlCodec.VERSION);
                assertThat(bytes)
                        .as(
                                "%s: the same body in versions %d and %d",
                                type, older, ControlCodec.VERSION)
                        .isEqualTo(ControlCodec.encode(frame));
            }
        }
    }

    /** Version 3 adds SUBSCRIBE's flags bit 1, READ_UNCOMMITTED, reserved before (spec). */
    @Test
    void readUncommittedIsFlagsBitOneFromVersionThree() throws Exception {
        Subscribe v = validSubscribe();
        Subscribe uncommitted =
                new Subscribe(
                        v.slotCount(),
                        true,
                        true,
                        v.slotSize(),
                        v.reorderWindowBytes(),
                        v.mode(),
                        v.defaultStart(),
                        v.partitions(),
                        v.topic(),
                        v.groupId(),
                        v.jobFilter(),
                        v.streams());
        byte[] bytes = ControlCodec.encode(new Frame(1, uncommitted, 3));
        assertThat(le(bytes).getInt(BODY + 4)).as("flags").isEqualTo(3);
        assertThat(((Subscribe) ControlCodec.decode(bytes).message()).readUncommitted()).isTrue();
        assertThat(v.readUncommitted()).as("the 11-parameter constructor").isFalse();
        for (int version = 1; version <= 2; version++) {
            Frame older = new Frame(1, uncommitted, version);
            assertThatThrownBy(() -> ControlCodec.encode(older))
                    .isInstanceOfSatisfying(
                            InvalidMessageException.class,
                            e -> assertThat(e.field()).isEqualTo("flags"));
            le(bytes).putShort(4, (short) version);
            assertRefused(bytes, "flags");
        }
    }

    /** STREAM_GAP (7) is version 3 on: in an older frame its type is unknown. */
    @Test
    void streamGapIsAMessageOfVersionThreeOnly() throws Exception {
        byte[] bytes = ControlCodec.encode(new Frame(0, validStreamGap(), 3));
        ByteBuffer le = le(bytes);
        assertThat(le.getShort(6)).as("type").isEqualTo((short) 7);
        assertThat(le.getLong(BODY)).as("subscription_id").isEqualTo(3);
        assertThat(le.getLong(BODY + 8)).as("missing_from").isEqualTo(5);
        assertThat(le.getLong(BODY + 16)).as("missing_to").isEqualTo(9);
        assertThat(le.getLong(BODY + 24)).as("waited_ns").isEqualTo(2_000_000_000L);
        assertThat(le.getShort(BODY + 32)).as("job's length").isEqualTo((short) 5);
        for (int version = 1; version <= 2; version++) {
            le.putShort(4, (short) version);
            assertRefused(bytes, "type");
        }
    }

    /**
     * PRODUCE (8) and PRODUCING (9) are version 4 on (spec "PRODUCE"): in an older frame their
     * types are unknown.
     */
    @Test
    void produceAndProducingAreMessagesOfVersionFourOnly() throws Exception {
        byte[] produce = ControlCodec.encode(new Frame(0x21, validProduce()));
        ByteBuffer le = le(produce);
        assertThat(le.getShort(6)).as("type").isEqualTo((short) 8);
        assertThat(le.getInt(BODY)).as("flags").isZero();
        assertThat(le.getShort(BODY + 4)).as("topic's length").isEqualTo((short) 23);
        assertThat(produce[BODY + 6]).as("topic").isEqualTo((byte) 's');
        assertThat(le.getShort(BODY + 6 + 23)).as("segment_path's length").isEqualTo((short) 19);
        assertThat(new String(produce, produce.length - 19, 19, StandardCharsets.UTF_8))
                .isEqualTo("/dev/shm/producer-1");
        byte[] producing = ControlCodec.encode(new Frame(0x21, new Producing(-1)));
        assertThat(le(producing).getShort(6)).as("type").isEqualTo((short) 9);
        assertThat(producing).hasSize(BODY + 8);
        assertThat(le(producing).getLong(BODY)).as("producer_id").isEqualTo(-1);
        for (byte[] bytes : List.of(produce, producing)) {
            for (int version = 1; version <= 3; version++) {
                le(bytes).putShort(4, (short) version);
                assertRefused(bytes, "type");
            }
        }
        assertThatThrownBy(() -> ControlCodec.decode(produce))
                .hasMessage(
                        "type = 8: expected 1 (SUBSCRIBE) to 7 (STREAM_GAP) in version 3; 8"
                                + " (PRODUCE) is version 4 on");
    }

    /** PRODUCE's flags are reserved: a producer that sets one asks for what this version lacks. */
    @Test
    void produceWithAFlagSetIsRefused() throws Exception {
        for (int flags : new int[] {1, 0x80000000}) {
            byte[] bytes = ControlCodec.encode(new Frame(1, validProduce()));
            le(bytes).putInt(BODY, flags);
            assertRefused(bytes, "flags");
        }
    }

    @Test
    void onlyTheDaemonSendsSubscribedErrorStreamGapAndProducing() {
        assertThat(
                        Stream.of(MessageType.values())
                                .filter(t -> !t.sentByClient())
                                .collect(Collectors.toSet()))
                .containsExactlyInAnyOrder(
                        MessageType.SUBSCRIBED,
                        MessageType.ERROR,
                        MessageType.STREAM_GAP,
                        MessageType.PRODUCING);
    }

    @Test
    void frameLengthOutsideItsBoundsIsRefused() throws Exception {
        byte[] bytes = ControlCodec.encode(new Frame(0, new Heartbeat(1, 2)));
        le(bytes).putInt(0, (int) ControlCodec.MAX_FRAME_LENGTH + 1);
        assertRefused(bytes, "frame_length");
        le(bytes).putInt(0, (int) ControlCodec.MIN_FRAME_LENGTH - 1);
        assertRefused(bytes, "frame_length");
        le(bytes).putInt(0, -1);
        assertRefused(bytes, "frame_length");
    }

    @Test
    void anUnknownVersionIsRefused() throws Exception {
        for (int version : new int[] {0, ControlCodec.VERSION + 1, 65535}) {
            byte[] bytes = ControlCodec.encode(new Frame(0, new Heartbeat(1, 2)));
            le(bytes).putShort(4, (short) version);
            assertRefused(bytes, "version");
        }
    }

    @Test
    void anUnknownTypeIsRefused() throws Exception {
        for (int type : new int[] {0, 10, 65535}) {
            byte[] bytes = ControlCodec.encode(new Frame(0, new Heartbeat(1, 2)));
            le(bytes).putShort(6, (short) type);
            assertRefused(bytes, "type");
        }
    }

    @Test
    void aStringLongerThanTheRestOfTheFrameIsRefused() throws Exception {
        byte[] bytes =
                ControlCodec.encode(
                        new Frame(14, new ErrorMessage(0, ErrorCode.INTERNAL, 1, 1, "abc")));
        le(bytes).putShort(bytes.length - 5, (short) 4);
        assertRefused(bytes, "message");
        le(bytes).putShort(bytes.length - 5, (short) 65535);
        assertRefused(bytes, "message");
    }

    @Test
    void bytesAfterTheBodyAreRefused() throws Exception {
        for (Frame frame : oneOfEachMessage()) {
            byte[] whole = ControlCodec.encode(frame);
            assertRefused(withLengthFixed(Arrays.copyOf(whole, whole.length + 1)), "frame_length");
        }
    }

    @Test
    void enumerationsOutsideTheirRangeAreRefused() throws Exception {
        record Case(Frame frame, int at, int value, String field) {}
        Frame subscribe = new Frame(1, validSubscribe());
        Frame subscribed =
                new Frame(
                        1,
                        new Subscribed(
                                3, ObjectKind.RECORDS, 0, List.of(), "s", new byte[] {1}, "/d"));
        Frame error = new Frame(1, new ErrorMessage(0, ErrorCode.INTERNAL, 1, 1, ""));
        List<Case> cases =
                List.of(
                        new Case(subscribe, BODY + 24, 0, "mode"),
                        new Case(subscribe, BODY + 24, 3, "mode"),
                        new Case(subscribe, BODY + 26, 3, "default_start"),
                        new Case(subscribe, BODY + 32 + 4, 4, "partitions[0].start"),
                        new Case(subscribe, BODY + 48 + 6, 1, "partitions[1].reserved"),
                        new Case(subscribed, BODY + 8, 3, "object_kind"),
                        new Case(error, BODY + 8, 13, "code"),
                        new Case(error, BODY + 8, 0, "code"));
        for (Case c : cases) {
            byte[] bytes = ControlCodec.encode(c.frame());
            le(bytes).putShort(c.at(), (short) c.value());
            assertRefused(bytes, c.field());
        }
    }

    @Test
    void undefinedFlagsAreRefused() throws Exception {
        for (int flags : new int[] {0x80000001, 4}) {
            byte[] bytes = ControlCodec.encode(new Frame(1, validSubscribe()));
            le(bytes).putInt(BODY + 4, flags);
            assertRefused(bytes, "flags");
        }
    }

    @Test
    void aCountBeyondTheFrameIsRefusedBeforeAnythingIsAllocated() throws Exception {
        byte[] subscribe = ControlCodec.encode(new Frame(1, validSubscribe()));
        le(subscribe).putInt(BODY + 28, -1);
        assertRefused(subscribe, "partition_count");
        byte[] subscribed = ControlCodec.encode(new Frame(1, validSubscribed()));
        le(subscribed).putInt(BODY + 12, -1);
        assertRefused(subscribed, "partition_count");
    }

    private static Frame subscribed(
            int laneHint, List<Integer> partitions, String name, int schema) {
        return new Frame(
                1,
                new Subscribed(
                        7,
                        ObjectKind.RECORDS,
                        laneHint,
                        partitions,
                        name,
                        new byte[schema],
                        "/dev/shm"));
    }

    private static Frame subscribedIn(String dir, int version) {
        return new Frame(
                1,
                new Subscribed(7, ObjectKind.RECORDS, 0, List.of(), "seg", new byte[1], dir),
                version);
    }

    /**
     * What the decoder refuses the encoder refuses too, naming the same field; as the caller's bad
     * argument, an {@code IllegalArgumentException}, where a peer's bad frame is an IOException.
     */
    @Test
    void theEncoderRefusesEveryValueTheSpecForbids() {
        List<Map.Entry<Frame, String>> cases = new ArrayList<>();
        BiConsumer<Frame, String> add = (frame, field) -> cases.add(Map.entry(frame, field));
        add.accept(subscribe(s -> s.slotCount = 0), "slot_count");
        add.accept(subscribe(s -> s.slotCount = 65537), "slot_count");
        add.accept(subscribe(s -> s.slotCount = -1), "slot_count");
        add.accept(subscribe(s -> s.slotSize = 255L * 64 + 1), "slot_size");
        add.accept(subscribe(s -> s.slotSize = 192), "slot_size");
        add.accept(subscribe(s -> s.slotSize = 1L << 31), "slot_size");
        add.accept(subscribe(s -> s.slotSize = -64), "slot_size");
        add.accept(subscribe(s -> s.defaultStart = StartPosition.OFFSET), "default_start");
        add.accept(
                subscribe(
                        s -> {
                            s.mode = Mode.RECORDS;
                            s.jobFilter = "";
                        }),
                "reorder_window_bytes");
        add.accept(
                subscribe(
                        s -> {
                            s.mode = Mode.RECORDS;
                            s.reorderWindowBytes = 0;
                        }),
                "job_filter");
        add.accept(subscribe(s -> s.partitions = List.of()), "partition_count");
        add.accept(
                subscribe(
                        s ->
                                s.partitions =
                                        List.of(
                                                PartitionStart.at(1, 7),
                                                PartitionStart.earliest(1))),
                "partitions[1].partition");
        add.accept(
                subscribe(s -> s.partitions = List.of(PartitionStart.earliest(-1))),
                "partitions[0].partition");
        add.accept(
                subscribe(s -> s.partitions = List.of(PartitionStart.at(0, -5))),
                "partitions[0].offset");
        add.accept(
                subscribe(
                        s ->
                                s.partitions =
                                        List.of(
                                                PartitionStart.at(0, 1),
                                                new PartitionStart(1, StartPosition.EARLIEST, 5))),
                "partitions[1].offset");
        add.accept(subscribe(s -> s.topic = ""), "topic");
        add.accept(subscribe(s -> s.topic = "t".repeat(250)), "topic");
        add.accept(subscribe(s -> s.topic = "a topic"), "topic");
        add.accept(subscribe(s -> s.groupId = "g".repeat(256)), "group_id");
        add.accept(subscribe(s -> s.groupId = "\ud800"), "group_id");
        add.accept(subscribe(s -> s.jobFilter = "job/1"), "job_filter");
        add.accept(
                subscribe(
                        s ->
                                s.streams =
                                        List.of(
                                                new StreamStart("job-1", "cyan", 3),
                                                new StreamStart("job-1", "cyan", 9))),
                "streams[1].stream");
        add.accept(
                subscribe(s -> s.streams = List.of(new StreamStart("job-1", "", 3))),
                "streams[0].stream");
        add.accept(
                new Frame(
                        1,
                        new Subscribed(
                                0, ObjectKind.RECORDS, 0, List.of(), "s", new byte[1], "/d")),
                "subscription_id");
        add.accept(subscribed(31, List.of(), "seg", 1), "lane_hint");
        add.accept(subscribed(-1, List.of(), "seg", 1), "lane_hint");
        add.accept(subscribed(0, List.of(2, 2), "seg", 1), "partitions[1]");
        add.accept(subscribed(0, List.of(-2), "seg", 1), "partitions[0]");
        add.accept(subscribed(0, List.of(), "..", 1), "segment_name");
        add.accept(subscribed(0, List.of(), "/dev/shm/x", 1), "segment_name");
        add.accept(subscribed(0, List.of(), "seg", 0), "schema");
        add.accept(subscribed(0, List.of(), "seg", 65537), "schema");
        add.accept(subscribed(0, Collections.nCopies(300_000, 0), "seg", 1), "frame_length");
        add.accept(subscribedIn("", 2), "segment_dir");
        add.accept(subscribedIn("dev/shm", 2), "segment_dir");
        add.accept(subscribedIn("/dev\0shm", 2), "segment_dir");
        add.accept(subscribedIn("/" + "d".repeat(4095), 2), "segment_dir");
        add.accept(subscribedIn("/dev/shm", 1), "segment_dir");
        add.accept(new Frame(0, new Heartbeat(1, 2), 0), "version");
        add.accept(new Frame(0, new Heartbeat(1, 2), ControlCodec.VERSION + 1), "version");
        add.accept(new Frame(0, validStreamGap(), 2), "type");
        add.accept(new Frame(0, new StreamGap(0, 1, 1, 0, "j", "s")), "subscription_id");
        add.accept(new Frame(0, new StreamGap(1, 2, 1, 0, "j", "s")), "missing_to");
        add.accept(new Frame(0, new StreamGap(1, -1, 1, 0, "j", "s")), "missing_to");
        add.accept(new Frame(0, new StreamGap(1, 1, 1, 0, "", "s")), "job");
        add.accept(new Frame(0, new StreamGap(1, 1, 1, 0, "j", "s".repeat(129))), "stream");
        add.accept(new Frame(0, new StreamGap(1, 1, 1, 0, "j", "a stream")), "stream");
        add.accept(new Frame(1, new Produce("", "/dev/shm/p")), "topic");
        add.accept(new Frame(1, new Produce("t".repeat(250), "/dev/shm/p")), "topic");
        add.accept(new Frame(1, new Produce("sluice.chunks/printer-1", "/dev/shm/p")), "topic");
        add.accept(new Frame(1, new Produce("t", "")), "segment_path");
        add.accept(new Frame(1, new Produce("t", "dev/shm/p")), "segment_path");
        add.accept(new Frame(1, new Produce("t", "/dev/shm\0p")), "segment_path");
        add.accept(new Frame(1, new Produce("t", "/" + "p".repeat(4095))), "segment_path");
        add.accept(new Frame(1, new Produce("t", "/\ud800")), "segment_path");
        add.accept(new Frame(1, validProduce(), 3), "type");
        add.accept(new Frame(1, new Producing(0)), "producer_id");
        add.accept(new Frame(1, new Producing(1), 3), "type");
        add.accept(new Frame(1, new Release(0, 1)), "subscription_id");
        add.accept(new Frame(0, new Heartbeat(1, 0)), "timeout_ns");
        add.accept(new Frame(0, new ErrorMessage(0, ErrorCode.INTERNAL, 0, 1, "")), "min_version");
        add.accept(new Frame(0, new ErrorMessage(0, ErrorCode.INTERNAL, 2, 1, "")), "max_version");
        add.accept(
                new Frame(0, new ErrorMessage(0, ErrorCode.INTERNAL, 1, 65536, "")), "max_version");
        add.accept(
                new Frame(0, new ErrorMessage(0, ErrorCode.INTERNAL, 1, 1, "x".repeat(65536))),
                "message");
        for (Map.Entry<Frame, String> c : cases) {
            assertThatThrownBy(() -> ControlCodec.encode(c.getKey()))
                    .as("%s", c.getKey())
                    .isInstanceOf(IllegalArgumentException.class)
                    .isInstanceOfSatisfying(
                            InvalidMessageException.class,
                            e -> {
                                assertThat(e.field()).as(e.getMessage()).isEqualTo(c.getValue());
                                assertThat(e.getMessage()).startsWith(c.getValue() + " = ");
                            });
        }
    }

    @Test
    void utf8IsReadStrictly() throws Exception {
        byte[][] malformed = {
            {(byte) 0xC0, (byte) 0xAF}, // overlong '/'
            {(byte) 0xE0, (byte) 0x80, (byte) 0xAF}, // overlong, three bytes
            {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, // a surrogate
            {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, // above U+10FFFF
            {(byte) 0xE2, (byte) 0x82}, // cut short
            {(byte) 0x80}, // a lone continuation byte
        };
        for (byte[] text : malformed) {
            byte[] good =
                    ControlCodec.encode(
                            new Frame(
                                    0,
                                    new ErrorMessage(
                                            0, ErrorCode.INTERNAL, 1, 1, "x".repeat(text.length))));
            System.arraycopy(text, 0, good, good.length - text.length, text.length);
            assertRefused(good, "message");
        }
        Frame wide =
                new Frame(
                        0,
                        new ErrorMessage(0, ErrorCode.INTERNAL, 1, 1, "\u00e9\u20ac\ud83d\ude00"));
        assertThat(ControlCodec.decode(ControlCodec.encode(wide))).isEqualTo(wide);
    }

    @Test
    void aRefusalMessageIsAsciiAndQuotesBadBytesInHex() throws Exception {
        byte[] bytes =
                ControlCodec.encode(
                        new Frame(14, new ErrorMessage(0, ErrorCode.INTERNAL, 1, 1, "ab")));
        bytes[bytes.length - 2] = (byte) 0xC0;
        bytes[bytes.length - 1] = (byte) 0xAF;
        assertThatThrownBy(() -> ControlCodec.decode(bytes))
                .hasMessage("message = \"\\xc0\\xaf\": not well-formed UTF-8");
    }

    /**
     * Every byte of every message replaced by a few values: the decoder never fails otherwise than
     * with a ProtocolException, and what it accepts it encodes back to the same bytes.
     */
    @Test
    void aCorruptedByteIsRefusedOrDecodesToItsOwnEncoding() throws Exception {
        int accepted = 0;
        List<String> refusedFields = new ArrayList<>();
        for (Frame frame : oneOfEachMessage()) {
            byte[] whole = ControlCodec.encode(frame);
            for (int at = 0; at < whole.length; at++) {
                for (int value : new int[] {0x00, 0x01, 0x7F, 0x80, 0xFF}) {
                    byte[] bytes = whole.clone();
                    bytes[at] = (byte) value;
                    Frame decoded;
                    try {
                        decoded = ControlCodec.decode(bytes);
                    } catch (ProtocolException e) {
                        refusedFields.add(e.field());
                        continue;
                    }
                    accepted++;
                    assertThat(ControlCodec.encode(decoded))
                            .as("byte %d = %d", at, value)
                            .isEqualTo(bytes);
                }
            }
        }
        assertThat(accepted).isPositive();
        assertThat(refusedFields).isNotEmpty();
    }
}
