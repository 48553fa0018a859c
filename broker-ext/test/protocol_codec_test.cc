#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gtest_util.h"
#include "protocol/codec.h"
#include "protocol/wire.h"

namespace sluice::brokerd::protocol {
namespace {

using Bytes = std::vector<uint8_t>;

Subscribe ValidSubscribe() {
  Subscribe m;
  m.slot_count = 32;
  m.slot_size = 65536;
  m.mode = Mode::kChunkStreams;
  m.reorder_window_bytes = 1 << 20;
  m.default_start = StartPosition::kLatest;
  m.partitions = {{1, StartPosition::kOffset, 7}, {4, StartPosition::kEarliest, 0}};
  m.topic = "chunks";
  m.group_id = "g\u00fcnter";
  m.job_filter = "job-1";
  m.streams = {{"job-1", "cyan", 3}};
  return m;
}

std::vector<Frame> OneOfEachMessage() {
  return {
      {11, ValidSubscribe()},
      {12, Subscribed{3, ObjectKind::kChunks, 30, {1, 4}, "seg-3", {1, 2, 3}, "/dev/shm"}},
      {13, Release{3, 99}},
      {0, Heartbeat{42, 1000}},
      {14, ErrorMessage{3, ErrorCode::kBadRequest, 1, 2, "slot_size too large"}},
      {15, Close{3}},
      {0, StreamGap{3, 5, 9, 2000000000, "job-1", "cyan"}},
      {16, Produce{"sluice.chunks.printer-1", "/dev/shm/producer-1"}},
      {16, Producing{4}},
  };
}

Bytes Encode(const Frame& frame) {
  auto bytes = EncodeFrame(frame);
  EXPECT_OK(bytes);
  return bytes.ok() ? *bytes : Bytes{};
}

void PutU16(Bytes& bytes, size_t at, uint16_t value) {
  bytes[at] = static_cast<uint8_t>(value);
  bytes[at + 1] = static_cast<uint8_t>(value >> 8);
}

void PutU32(Bytes& bytes, size_t at, uint32_t value) {
  for (size_t i = 0; i < 4; ++i) bytes[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

void FixLength(Bytes& bytes) { PutU32(bytes, 0, static_cast<uint32_t>(bytes.size() - 4)); }

::testing::AssertionResult NamesField(const Status& status, const std::string& field) {
  if (status.ok()) return ::testing::AssertionFailure() << "accepted; expected " << field;
  if (status.code() != StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure() << status.ToString();
  }
  if (status.message().rfind(field + " = ", 0) != 0) {
    return ::testing::AssertionFailure() << "expected " << field << ": " << status.message();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult RefusedNaming(const Bytes& bytes, const std::string& field) {
  return NamesField(DecodeFrame(bytes).status(), field);
}

TEST(ProtocolCodec, EveryMessageSurvivesARoundTrip) {
  for (const Frame& frame : OneOfEachMessage()) {
    SCOPED_TRACE(NameOf(TypeOf(frame.message)));
    auto decoded = DecodeFrame(Encode(frame));
    ASSERT_OK(decoded);
    EXPECT_EQ(*decoded, frame);
  }
}

TEST(ProtocolCodec, TheHeaderIsLittleEndianAtTheSpecOffsets) {
  const Bytes bytes = Encode({0x1122334455667788, Release{0x0102030405060708, 0x0A}});
  const Bytes expected = {
      28,   0,    0,    0,                             // frame_length: 12 + 16
      4,    0,                                         // version
      3,    0,                                         // type RELEASE
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // request_id
      8,    7,    6,    5,    4,    3,    2,    1,     // subscription_id
      0x0A, 0,    0,    0,    0,    0,    0,    0,     // processed_through
  };
  EXPECT_EQ(bytes, expected);
}

TEST(ProtocolCodec, SubscribeFieldsSitAtTheirBodyOffsets) {
  const Bytes bytes = Encode({1, ValidSubscribe()});
  constexpr size_t kBody = kFrameHeaderSize;
  EXPECT_EQ(bytes[kBody + 0], 32);         // slot_count
  EXPECT_EQ(bytes[kBody + 8 + 2], 1);      // slot_size 65536 = 0x10000
  EXPECT_EQ(bytes[kBody + 16 + 2], 0x10);  // reorder_window_bytes 1 MiB = 0x100000
  EXPECT_EQ(bytes[kBody + 24], 2);         // mode CHUNK_STREAMS
  EXPECT_EQ(bytes[kBody + 26], 2);         // default_start LATEST
  EXPECT_EQ(bytes[kBody + 28], 2);         // partition_count
  EXPECT_EQ(bytes[kBody + 32], 1);         // partitions[0].partition
  EXPECT_EQ(bytes[kBody + 32 + 4], 3);     // partitions[0].start OFFSET
  EXPECT_EQ(bytes[kBody + 32 + 8], 7);     // partitions[0].offset
  EXPECT_EQ(bytes[kBody + 48], 4);         // partitions[1].partition
  EXPECT_EQ(bytes[kBody + 64], 6);         // topic's length
  EXPECT_EQ(bytes[kBody + 66], 'c');       // topic
}

TEST(ProtocolCodec, EveryTruncationIsRefusedWithoutReadingPastTheEnd) {
  for (const Frame& frame : OneOfEachMessage()) {
    SCOPED_TRACE(NameOf(TypeOf(frame.message)));
    const Bytes whole = Encode(frame);
    for (size_t size = 0; size < whole.size(); ++size) {
      Bytes cut(whole.begin(), whole.begin() + static_cast<ptrdiff_t>(size));
      EXPECT_TRUE(RefusedNaming(cut, "frame_length")) << size;
      // The same cut, with a frame_length that agrees: a field of the body runs out instead.
      if (size >= kFrameHeaderSize) {
        FixLength(cut);
        const auto decoded = DecodeFrame(cut);
        ASSERT_RAISES(InvalidArgument, decoded) << size;
        EXPECT_NE(decoded.status().message().find(" = "), std::string::npos);
      }
    }
  }
}

// Version 2 adds SUBSCRIBED's segment_dir after the schema; the other messages, and version 1's
// SUBSCRIBED, are as they were (docs/formats.md, "Versions"), and so are they all in the later
// versions but for SUBSCRIBE's new flag and the new messages.
TEST(ProtocolCodec, OnlyVersionTwoOfSubscribedCarriesTheSegmentDir) {
  const Subscribed v1{3, ObjectKind::kRecords, 0, {0}, "seg", {1}, ""};
  Subscribed v2 = v1;
  v2.segment_dir = "/dev/shm";
  const Bytes one = Encode({1, v1, 1});
  const Bytes two = Encode({1, v2, 2});
  ASSERT_EQ(two.size(), one.size() + 2 + 8);
  EXPECT_TRUE(std::equal(one.begin() + 6, one.end(), two.begin() + 6)) << "v1's body is a prefix";
  EXPECT_EQ(std::string(two.end() - 8, two.end()), "/dev/shm");
  EXPECT_EQ(DecodeFrame(one)->version, 1);
  EXPECT_EQ(std::get<Subscribed>(DecodeFrame(two)->message).segment_dir, "/dev/shm");
  for (const Frame& frame : OneOfEachMessage()) {
    const MessageType type = TypeOf(frame.message);
    SCOPED_TRACE(NameOf(type));
    uint16_t first = FirstVersionOf(type);
    if (type == MessageType::kSubscribed) first = kSegmentDirVersion;
    for (uint16_t version = first; version < kMaxVersion; ++version) {
      Frame older = frame;
      older.version = version;
      Bytes bytes = Encode(older);
      PutU16(bytes, 4, kMaxVersion);
      EXPECT_EQ(bytes, Encode(frame))
          << "the same body in versions " << version << " and " << kMaxVersion;
    }
  }
}

// Version 3 adds SUBSCRIBE's flags bit 1, READ_UNCOMMITTED, reserved before (docs/formats.md,
// "SUBSCRIBE").
TEST(ProtocolCodec, ReadUncommittedIsFlagsBitOneFromVersionThree) {
  Subscribe uncommitted = ValidSubscribe();
  uncommitted.read_uncommitted = true;
  Bytes bytes = Encode({1, uncommitted, 3});
  EXPECT_EQ(bytes[kFrameHeaderSize + 4], 2);
  EXPECT_TRUE(std::get<Subscribe>(DecodeFrame(bytes)->message).read_uncommitted);
  uncommitted.local_leaders = true;
  bytes = Encode({1, uncommitted, 3});
  EXPECT_EQ(bytes[kFrameHeaderSize + 4], 3);
  for (const uint16_t version : std::vector<uint16_t>{1, 2}) {
    SCOPED_TRACE(version);
    EXPECT_TRUE(NamesField(EncodeFrame({1, uncommitted, version}).status(), "flags"));
    PutU16(bytes, 4, version);
    EXPECT_TRUE(RefusedNaming(bytes, "flags"));
    EXPECT_EQ(RefusalCode(bytes), ErrorCode::kBadFrame);
  }
}

// STREAM_GAP (7) is version 3 on: in an older frame its type is unknown.
TEST(ProtocolCodec, StreamGapIsAMessageOfVersionThreeOnly) {
  const StreamGap gap{3, 5, 9, 2000000000, "job-1", "cyan"};
  Bytes bytes = Encode({0, gap, 3});
  EXPECT_EQ(bytes[6], 7);
  EXPECT_EQ(bytes[kFrameHeaderSize + 8], 5);     // missing_from
  EXPECT_EQ(bytes[kFrameHeaderSize + 16], 9);    // missing_to
  EXPECT_EQ(bytes[kFrameHeaderSize + 32], 5);    // job's length
  EXPECT_EQ(bytes[kFrameHeaderSize + 34], 'j');  // job
  for (const uint16_t version : std::vector<uint16_t>{1, 2}) {
    SCOPED_TRACE(version);
    EXPECT_TRUE(NamesField(EncodeFrame({0, gap, version}).status(), "type"));
    PutU16(bytes, 4, version);
    EXPECT_TRUE(RefusedNaming(bytes, "type"));
    EXPECT_EQ(RefusalCode(bytes), ErrorCode::kUnknownType);
    EXPECT_TRUE(NamesField(DecodeHeader(bytes).status(), "type"));
  }
}

// PRODUCE (8) and PRODUCING (9) are version 4 on (docs/formats.md, "PRODUCE"): in an older frame
// their types are unknown, and the daemon answers UNKNOWN_TYPE.
TEST(ProtocolCodec, ProduceAndProducingAreMessagesOfVersionFourOnly) {
  const Bytes produce = Encode({0x21, Produce{"sluice.chunks.printer-1", "/dev/shm/producer-1"}});
  EXPECT_EQ(produce[6], 8);
  EXPECT_EQ(produce[kFrameHeaderSize + 4], 23);       // topic's length
  EXPECT_EQ(produce[kFrameHeaderSize + 6], 's');      // topic
  EXPECT_EQ(produce[kFrameHeaderSize + 6 + 23], 19);  // segment_path's length
  EXPECT_EQ(std::string(produce.end() - 19, produce.end()), "/dev/shm/producer-1");
  const Bytes producing = Encode({0x21, Producing{0x0102030405060708}});
  EXPECT_EQ(producing[6], 9);
  EXPECT_EQ(producing.size(), kFrameHeaderSize + 8);
  EXPECT_EQ(producing[kFrameHeaderSize], 8);  // producer_id, little-endian
  for (Bytes bytes : {produce, producing}) {
    for (const uint16_t version : std::vector<uint16_t>{1, 2, 3}) {
      SCOPED_TRACE(version);
      PutU16(bytes, 4, version);
      EXPECT_TRUE(RefusedNaming(bytes, "type"));
      EXPECT_EQ(RefusalCode(bytes), ErrorCode::kUnknownType);
      EXPECT_TRUE(NamesField(DecodeHeader(bytes).status(), "type"));
    }
  }
  Bytes v3 = produce;
  PutU16(v3, 4, 3);
  EXPECT_EQ(DecodeFrame(v3).status().message(),
            "type = 8: expected 1 (SUBSCRIBE) to 7 (STREAM_GAP) in version 3; 8 (PRODUCE) is "
            "version 4 on");
}

// PRODUCE's flags are reserved: a producer that sets one asks for something this version lacks.
TEST(ProtocolCodec, ProduceWithAFlagSetIsRefused) {
  for (const uint32_t flags : {1u, 0x80000000u}) {
    Bytes bytes = Encode({1, Produce{"t", "/dev/shm/p"}});
    PutU32(bytes, kFrameHeaderSize, flags);
    EXPECT_TRUE(RefusedNaming(bytes, "flags")) << flags;
    EXPECT_EQ(RefusalCode(bytes), ErrorCode::kBadFrame);
  }
}

// The header alone: what the daemon answers a frame it refuses, or may not receive, with.
TEST(ProtocolCodec, TheHeaderOfAFrameWithABadBodyIsReadable) {
  Bytes bytes = Encode({0x1234, ValidSubscribe()});
  PutU32(bytes, kFrameHeaderSize, 0);  // slot_count
  EXPECT_TRUE(RefusedNaming(bytes, "slot_count"));
  auto header = DecodeHeader(bytes);
  ASSERT_OK(header);
  EXPECT_EQ(header->request_id, 0x1234u);
  EXPECT_EQ(header->type, MessageType::kSubscribe);
  EXPECT_EQ(header->version, kMaxVersion);
  bytes.resize(bytes.size() - 1);
  EXPECT_TRUE(NamesField(DecodeHeader(bytes).status(), "frame_length"));
}

TEST(ProtocolCodec, OnlyTheDaemonSendsSubscribedErrorStreamGapAndProducing) {
  for (const Frame& frame : OneOfEachMessage()) {
    const MessageType type = TypeOf(frame.message);
    const bool daemon_only = type == MessageType::kSubscribed || type == MessageType::kError ||
                             type == MessageType::kStreamGap || type == MessageType::kProducing;
    EXPECT_EQ(SentByClient(type), !daemon_only) << NameOf(type);
  }
}

TEST(ProtocolCodec, FrameLengthOutsideItsBoundsIsRefused) {
  Bytes bytes = Encode({0, Heartbeat{1, 2}});
  PutU32(bytes, 0, kMaxFrameLength + 1);
  EXPECT_TRUE(RefusedNaming(bytes, "frame_length"));
  PutU32(bytes, 0, kMinFrameLength - 1);
  EXPECT_TRUE(RefusedNaming(bytes, "frame_length"));
  EXPECT_OK(CheckFrameLength(kMaxFrameLength));
  EXPECT_OK(CheckFrameLength(kMinFrameLength));
  EXPECT_EQ(RefusalCode(bytes), ErrorCode::kBadFrame);
}

TEST(ProtocolCodec, AnUnknownVersionIsRefusedAsUnsupported) {
  for (const uint16_t version : std::vector<uint16_t>{0, kMaxVersion + 1, 65535}) {
    Bytes bytes = Encode({0, Heartbeat{1, 2}});
    PutU16(bytes, 4, version);
    EXPECT_TRUE(RefusedNaming(bytes, "version")) << version;
    EXPECT_EQ(RefusalCode(bytes), ErrorCode::kUnsupportedVersion);
  }
}

TEST(ProtocolCodec, AnUnknownTypeIsRefused) {
  for (const uint16_t type : std::vector<uint16_t>{0, 10, 65535}) {
    Bytes bytes = Encode({0, Heartbeat{1, 2}});
    PutU16(bytes, 6, type);
    EXPECT_TRUE(RefusedNaming(bytes, "type")) << type;
    EXPECT_EQ(RefusalCode(bytes), ErrorCode::kUnknownType);
  }
}

TEST(ProtocolCodec, AStringLongerThanTheRestOfTheFrameIsRefused) {
  Bytes bytes = Encode({14, ErrorMessage{0, ErrorCode::kInternal, 1, 1, "abc"}});
  PutU16(bytes, bytes.size() - 5, 4);  // message's length: one byte more than the frame holds
  EXPECT_TRUE(RefusedNaming(bytes, "message"));
  PutU16(bytes, bytes.size() - 5, 65535);
  EXPECT_TRUE(RefusedNaming(bytes, "message"));
  EXPECT_EQ(RefusalCode(bytes), ErrorCode::kBadFrame);
}

TEST(ProtocolCodec, BytesAfterTheBodyAreRefused) {
  for (const Frame& frame : OneOfEachMessage()) {
    SCOPED_TRACE(NameOf(TypeOf(frame.message)));
    Bytes bytes = Encode(frame);
    bytes.push_back(0);
    FixLength(bytes);
    EXPECT_TRUE(RefusedNaming(bytes, "frame_length"));
  }
}

TEST(ProtocolCodec, EnumerationsOutsideTheirRangeAreRefused) {
  constexpr size_t kBody = kFrameHeaderSize;
  struct Case {
    Frame frame;
    size_t at;
    uint16_t value;
    std::string field;
  };
  const std::vector<Case> cases = {
      {{1, ValidSubscribe()}, kBody + 24, 0, "mode"},
      {{1, ValidSubscribe()}, kBody + 24, 3, "mode"},
      {{1, ValidSubscribe()}, kBody + 26, 3, "default_start"},  // OFFSET needs an offset
      {{1, ValidSubscribe()}, kBody + 32 + 4, 4, "partitions[0].start"},
      {{1, ValidSubscribe()}, kBody + 48 + 6, 1, "partitions[1].reserved"},
      {{1, Subscribed{3, ObjectKind::kRecords, 0, {}, "s", {1}, "/d"}},
       kBody + 8,
       3,
       "object_kind"},
      {{1, ErrorMessage{}}, kBody + 8, 13, "code"},
      {{1, ErrorMessage{}}, kBody + 8, 0, "code"},
  };
  for (const Case& c : cases) {
    Bytes bytes = Encode(c.frame);
    PutU16(bytes, c.at, c.value);
    EXPECT_TRUE(RefusedNaming(bytes, c.field));
  }
}

TEST(ProtocolCodec, UndefinedFlagsAreRefused) {
  for (const uint32_t flags : {0x80000001u, 4u}) {
    Bytes bytes = Encode({1, ValidSubscribe()});
    PutU32(bytes, kFrameHeaderSize + 4, flags);
    EXPECT_TRUE(RefusedNaming(bytes, "flags")) << flags;
  }
}

TEST(ProtocolCodec, ACountBeyondTheFrameIsRefusedBeforeAnythingIsAllocated) {
  Bytes bytes = Encode({1, ValidSubscribe()});
  PutU32(bytes, kFrameHeaderSize + 28, 0xFFFFFFFF);
  EXPECT_TRUE(RefusedNaming(bytes, "partition_count"));
  Bytes subscribed = Encode({1, Subscribed{3, ObjectKind::kRecords, 0, {}, "s", {1}, "/d"}});
  PutU32(subscribed, kFrameHeaderSize + 12, 0xFFFFFFFF);
  EXPECT_TRUE(RefusedNaming(subscribed, "partition_count"));
}

// The daemon answers a refused frame with ERROR carrying the decoder's message; that message
// must itself be a valid str16, whatever bytes the frame had.
TEST(ProtocolCodec, ARefusalMessageCanTravelInAnErrorFrame) {
  Bytes bytes = Encode({14, ErrorMessage{0, ErrorCode::kInternal, 1, 1, "ab"}});
  bytes[bytes.size() - 2] = 0xC0;
  bytes[bytes.size() - 1] = 0xAF;
  const Status refused = DecodeFrame(bytes).status();
  ASSERT_TRUE(NamesField(refused, "message"));
  EXPECT_NE(refused.message().find("\\xc0\\xaf"), std::string::npos) << refused.message();
  const ErrorMessage answer{0, RefusalCode(bytes), kMinVersion, kMaxVersion, refused.message()};
  EXPECT_OK(EncodeFrame({14, answer}));
}

// What the decoder refuses the encoder refuses too, naming the same field.
TEST(ProtocolCodec, TheEncoderRefusesEveryValueTheSpecForbids) {
  auto subscribe = [](auto&& change) {
    Subscribe m = ValidSubscribe();
    change(m);
    return Frame{1, m};
  };
  auto subscribed = [](auto&& change) {
    Subscribed m{3, ObjectKind::kRecords, 0, {0}, "seg", {1}, "/dev/shm"};
    change(m);
    return Frame{1, m};
  };
  const std::vector<std::pair<Frame, std::string>> cases = {
      {subscribe([](Subscribe& m) { m.slot_count = 0; }), "slot_count"},
      {subscribe([](Subscribe& m) { m.slot_count = 65537; }), "slot_count"},
      {subscribe([](Subscribe& m) { m.slot_size = 255 * 64 + 1; }), "slot_size"},
      {subscribe([](Subscribe& m) { m.slot_size = 192; }), "slot_size"},
      {subscribe([](Subscribe& m) { m.slot_size = uint64_t{1} << 31; }), "slot_size"},
      {subscribe([](Subscribe& m) { m.mode = static_cast<Mode>(9); }), "mode"},
      {subscribe([](Subscribe& m) { m.default_start = StartPosition::kOffset; }), "default_start"},
      {subscribe([](Subscribe& m) {
         m.mode = Mode::kRecords;
         m.job_filter.clear();
       }),
       "reorder_window_bytes"},
      {subscribe([](Subscribe& m) {
         m.mode = Mode::kRecords;
         m.reorder_window_bytes = 0;
       }),
       "job_filter"},
      {subscribe([](Subscribe& m) { m.partitions.clear(); }), "partition_count"},
      {subscribe([](Subscribe& m) { m.partitions[1].partition = 1; }), "partitions[1].partition"},
      {subscribe([](Subscribe& m) { m.partitions[0].partition = -1; }), "partitions[0].partition"},
      {subscribe([](Subscribe& m) { m.partitions[0].offset = -5; }), "partitions[0].offset"},
      {subscribe([](Subscribe& m) { m.partitions[1].offset = 5; }), "partitions[1].offset"},
      {subscribe([](Subscribe& m) { m.topic.clear(); }), "topic"},
      {subscribe([](Subscribe& m) { m.topic = std::string(250, 't'); }), "topic"},
      {subscribe([](Subscribe& m) { m.topic = "a topic"; }), "topic"},
      {subscribe([](Subscribe& m) { m.group_id = std::string(256, 'g'); }), "group_id"},
      {subscribe([](Subscribe& m) { m.group_id = "\xFF"; }), "group_id"},
      {subscribe([](Subscribe& m) { m.job_filter = "job/1"; }), "job_filter"},
      {subscribe([](Subscribe& m) {
         m.streams.push_back({"job-1", "cyan", 9});
       }),
       "streams[1].stream"},
      {subscribe([](Subscribe& m) { m.streams[0].stream.clear(); }), "streams[0].stream"},
      {subscribe([](Subscribe& m) { m.streams[0].job = "a job"; }), "streams[0].job"},
      {subscribe([](Subscribe& m) {
         m.mode = Mode::kRecords;
         m.reorder_window_bytes = 0;
         m.job_filter.clear();
       }),
       "stream_count"},
      {subscribed([](Subscribed& m) { m.subscription_id = 0; }), "subscription_id"},
      {subscribed([](Subscribed& m) { m.lane_hint = 31; }), "lane_hint"},
      {subscribed([](Subscribed& m) {
         m.partitions = {2, 2};
       }),
       "partitions[1]"},
      {subscribed([](Subscribed& m) { m.partitions = {-2}; }), "partitions[0]"},
      {subscribed([](Subscribed& m) { m.segment_name = ".."; }), "segment_name"},
      {subscribed([](Subscribed& m) { m.segment_name = "/dev/shm/x"; }), "segment_name"},
      {subscribed([](Subscribed& m) { m.schema.clear(); }), "schema"},
      {subscribed([](Subscribed& m) { m.schema.resize(65537); }), "schema"},
      {subscribed([](Subscribed& m) { m.partitions.resize(300000); }), "frame_length"},
      {subscribed([](Subscribed& m) { m.segment_dir.clear(); }), "segment_dir"},
      {subscribed([](Subscribed& m) { m.segment_dir = "dev/shm"; }), "segment_dir"},
      {subscribed([](Subscribed& m) { m.segment_dir = std::string("/dev\0shm", 8); }),
       "segment_dir"},
      {subscribed([](Subscribed& m) { m.segment_dir = "/" + std::string(4095, 'd'); }),
       "segment_dir"},
      {subscribed([](Subscribed& m) { m.segment_dir = "/\xFF"; }), "segment_dir"},
      {Frame{1, Subscribed{3, ObjectKind::kRecords, 0, {0}, "seg", {1}, "/dev/shm"}, 1},
       "segment_dir"},
      {Frame{0, Heartbeat{1, 2}, 0}, "version"},
      {Frame{0, Heartbeat{1, 2}, kMaxVersion + 1}, "version"},
      {{1, Release{0, 1}}, "subscription_id"},
      {{0, Heartbeat{1, 0}}, "timeout_ns"},
      {{0, ErrorMessage{0, ErrorCode::kInternal, 0, 1, ""}}, "min_version"},
      {{0, ErrorMessage{0, ErrorCode::kInternal, 2, 1, ""}}, "max_version"},
      {{0, ErrorMessage{0, ErrorCode::kInternal, 1, 1, std::string(65536, 'x')}}, "message"},
      {{0, ErrorMessage{0, ErrorCode::kInternal, 1, 1, "\xC0\xAF"}}, "message"},
      {{0, StreamGap{0, 1, 1, 0, "j", "s"}}, "subscription_id"},
      {{0, StreamGap{1, 2, 1, 0, "j", "s"}}, "missing_to"},
      {{0, StreamGap{1, 1, 1, 0, "", "s"}}, "job"},
      {{0, StreamGap{1, 1, 1, 0, "j", std::string(129, 's')}}, "stream"},
      {{0, StreamGap{1, 1, 1, 0, "j", "a stream"}}, "stream"},
      {{1, Produce{"", "/dev/shm/p"}}, "topic"},
      {{1, Produce{std::string(250, 't'), "/dev/shm/p"}}, "topic"},
      {{1, Produce{"sluice.chunks/printer-1", "/dev/shm/p"}}, "topic"},
      {{1, Produce{"t", ""}}, "segment_path"},
      {{1, Produce{"t", "dev/shm/p"}}, "segment_path"},
      {{1, Produce{"t", std::string("/dev/shm\0p", 10)}}, "segment_path"},
      {{1, Produce{"t", "/" + std::string(4095, 'p')}}, "segment_path"},
      {{1, Produce{"t", "/\xFF"}}, "segment_path"},
      {Frame{1, Produce{"t", "/dev/shm/p"}, 3}, "type"},
      {{1, Producing{0}}, "producer_id"},
      {Frame{1, Producing{1}, 3}, "type"},
  };
  for (const auto& [frame, field] : cases) {
    EXPECT_TRUE(NamesField(EncodeFrame(frame).status(), field));
  }
}

TEST(ProtocolCodec, Utf8IsReadAsStrictlyAsJavaDoes) {
  EXPECT_TRUE(IsWellFormedUtf8(""));
  EXPECT_TRUE(IsWellFormedUtf8("plain"));
  EXPECT_TRUE(IsWellFormedUtf8("\u00e9\u20ac\U0001F600"));  // 2, 3 and 4 bytes
  EXPECT_FALSE(IsWellFormedUtf8("\xC0\xAF"));               // overlong '/'
  EXPECT_FALSE(IsWellFormedUtf8("\xE0\x80\xAF"));           // overlong, three bytes
  EXPECT_FALSE(IsWellFormedUtf8("\xED\xA0\x80"));           // a surrogate
  EXPECT_FALSE(IsWellFormedUtf8("\xF4\x90\x80\x80"));       // above U+10FFFF
  EXPECT_FALSE(IsWellFormedUtf8("\xE2\x82"));               // cut short
  EXPECT_FALSE(IsWellFormedUtf8("\x80"));                   // a lone continuation byte
  EXPECT_FALSE(IsWellFormedUtf8("\xF8\x88\x80\x80\x80"));   // five bytes
}

// Every byte of every message replaced by a few values: the decoder never crashes, and what it
// accepts it encodes back to the same bytes (one encoding per message).
TEST(ProtocolCodec, ACorruptedByteIsRefusedOrDecodesToItsOwnEncoding) {
  size_t accepted = 0;
  size_t refused = 0;
  for (const Frame& frame : OneOfEachMessage()) {
    const Bytes whole = Encode(frame);
    for (size_t at = 0; at < whole.size(); ++at) {
      for (const uint8_t value : std::vector<uint8_t>{0x00, 0x01, 0x7F, 0x80, 0xFF}) {
        Bytes bytes = whole;
        bytes[at] = value;
        auto decoded = DecodeFrame(bytes);
        if (!decoded.ok()) {
          ++refused;
          continue;
        }
        ++accepted;
        auto again = EncodeFrame(*decoded);
        ASSERT_OK(again);
        EXPECT_EQ(*again, bytes) << "byte " << at << " = " << int{value};
      }
    }
  }
  EXPECT_GT(accepted, 0u);
  EXPECT_GT(refused, 0u);
}

}  // namespace
}  // namespace sluice::brokerd::protocol
