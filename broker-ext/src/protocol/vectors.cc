#include "protocol/vectors.h"

#include <algorithm>
#include <cerrno>
#include <fstream>

#include "protocol/codec.h"

namespace sluice::brokerd::protocol::vectors {
namespace {

// Frame offsets of the fields the broken vectors tamper with (docs/formats.md, "Frames" and
// the message tables; a body offset plus the 16-byte header).
constexpr size_t kVersionAt = 4;
constexpr size_t kTypeAt = 6;
constexpr size_t kBody = kFrameHeaderSize;
constexpr size_t kSubscribeFlagsAt = kBody + 4;
constexpr size_t kSubscribeModeAt = kBody + 24;
constexpr size_t kSubscribePartitionsAt = kBody + 32;
// What follows the topic of SubscribeToPartitions: empty group_id and job_filter, no streams.
constexpr size_t kSubscribeTail = 2 + 2 + 4;
constexpr size_t kPartitionStartEntrySize = 16;
constexpr size_t kSubscribedPartitionCountAt = kBody + 12;
constexpr size_t kStreamGapMissingToAt = kBody + 16;
// STREAM_GAP's last field: "cyan" in GapInCyan.
constexpr size_t kStreamGapStreamLength = 4;
// The bytes of SubscribedWithFolder's segment_dir, "/dev/shm", the last field of its frame.
constexpr size_t kSegmentDirLength = 8;
constexpr size_t kProduceFlagsAt = kBody;
constexpr size_t kProduceTopicAt = kBody + 4 + 2;

std::string Hex(const std::vector<uint8_t>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (const uint8_t byte : bytes) {
    text.push_back(kDigits[byte >> 4]);
    text.push_back(kDigits[byte & 0xF]);
  }
  return text;
}

template <typename T, typename Format>
std::string Join(const std::vector<T>& items, Format format) {
  std::string text;
  for (const T& item : items) {
    if (!text.empty()) text.push_back(',');
    text.append(format(item));
  }
  return text;
}

void DescribeBody(const Subscribe& m, Fields& out) {
  out.emplace_back("slot_count", std::to_string(m.slot_count));
  out.emplace_back("local_leaders", m.local_leaders ? "true" : "false");
  out.emplace_back("read_uncommitted", m.read_uncommitted ? "true" : "false");
  out.emplace_back("slot_size", std::to_string(m.slot_size));
  out.emplace_back("reorder_window_bytes", std::to_string(m.reorder_window_bytes));
  out.emplace_back("mode", NameOf(m.mode));
  out.emplace_back("default_start", NameOf(m.default_start));
  out.emplace_back("partitions", Join(m.partitions, [](const PartitionStart& p) {
                     return std::to_string(p.partition) + ":" + std::string(NameOf(p.start)) + ":" +
                            std::to_string(p.offset);
                   }));
  out.emplace_back("topic", m.topic);
  out.emplace_back("group_id", m.group_id);
  out.emplace_back("job_filter", m.job_filter);
  out.emplace_back("streams", Join(m.streams, [](const StreamStart& s) {
                     return s.job + "/" + s.stream + ":" + std::to_string(s.next_seq);
                   }));
}

void DescribeBody(const Subscribed& m, Fields& out) {
  out.emplace_back("subscription_id", std::to_string(m.subscription_id));
  out.emplace_back("object_kind", NameOf(m.object_kind));
  out.emplace_back("lane_hint", std::to_string(m.lane_hint));
  out.emplace_back("partitions",
                   Join(m.partitions, [](int32_t partition) { return std::to_string(partition); }));
  out.emplace_back("segment_name", m.segment_name);
  out.emplace_back("schema", Hex(m.schema));
  out.emplace_back("segment_dir", m.segment_dir);
}

void DescribeBody(const Release& m, Fields& out) {
  out.emplace_back("subscription_id", std::to_string(m.subscription_id));
  out.emplace_back("processed_through", std::to_string(m.processed_through));
}

void DescribeBody(const Heartbeat& m, Fields& out) {
  out.emplace_back("time_ns", std::to_string(m.time_ns));
  out.emplace_back("timeout_ns", std::to_string(m.timeout_ns));
}

void DescribeBody(const ErrorMessage& m, Fields& out) {
  out.emplace_back("subscription_id", std::to_string(m.subscription_id));
  out.emplace_back("code", NameOf(m.code));
  out.emplace_back("min_version", std::to_string(m.min_version));
  out.emplace_back("max_version", std::to_string(m.max_version));
  out.emplace_back("message", m.message);
}

void DescribeBody(const Close& m, Fields& out) {
  out.emplace_back("subscription_id", std::to_string(m.subscription_id));
}

void DescribeBody(const StreamGap& m, Fields& out) {
  out.emplace_back("subscription_id", std::to_string(m.subscription_id));
  out.emplace_back("missing_from", std::to_string(m.missing_from));
  out.emplace_back("missing_to", std::to_string(m.missing_to));
  out.emplace_back("waited_ns", std::to_string(m.waited_ns));
  out.emplace_back("job", m.job);
  out.emplace_back("stream", m.stream);
}

void DescribeBody(const Produce& m, Fields& out) {
  out.emplace_back("topic", m.topic);
  out.emplace_back("segment_path", m.segment_path);
}

void DescribeBody(const Producing& m, Fields& out) {
  out.emplace_back("producer_id", std::to_string(m.producer_id));
}

// An Arrow Schema message is opaque to the codec, so the vectors carry stand-in bytes that
// do not change when Arrow's flatbuffers do.
const std::vector<uint8_t> kSchema = {0xFF, 0xFF, 0xFF, 0xFF, 0x10, 0x00, 0x00, 0x00,
                                      0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                      0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10};

Subscribe SubscribeToPartitions() {
  Subscribe m;
  m.slot_count = 64;
  m.slot_size = 1 << 20;
  m.mode = Mode::kRecords;
  m.default_start = StartPosition::kLatest;
  m.partitions = {{0, StartPosition::kOffset, 42},
                  {3, StartPosition::kEarliest, 0},
                  {5, StartPosition::kLatest, 0}};
  m.topic = "orders";
  return m;
}

Subscribe SubscribeToLocalLeaders() {
  Subscribe m;
  m.slot_count = 16;
  m.local_leaders = true;
  m.slot_size = 4 << 20;
  m.reorder_window_bytes = 8 << 20;
  m.mode = Mode::kChunkStreams;
  m.default_start = StartPosition::kEarliest;
  m.partitions = {{2, StartPosition::kOffset, 1000}};
  m.topic = "sluice-chunks";
  m.group_id = "printer-1 readers \u00e9";
  m.job_filter = "packaging-0001";
  m.streams = {{"packaging-0001", "cyan", 12}, {"packaging-0001", "black", 0}};
  return m;
}

Subscribed SubscribedToRecords() {
  return {7, ObjectKind::kRecords, 0, {0, 3, 5}, "sluice-brokerd-4242-7", kSchema, ""};
}

// As a version-2 daemon answers: its name has a random part, and the folder comes along.
Subscribed SubscribedWithFolder() {
  return {7,
          ObjectKind::kRecords,
          0,
          {0, 3, 5},
          "sluice-brokerd.4242.0badf00d.0123456789abcdef",
          kSchema,
          "/dev/shm"};
}

// A version-3 reader of a transactional producer's topic that sees open transactions too.
Subscribe SubscribeReadUncommitted() {
  Subscribe m = SubscribeToLocalLeaders();
  m.read_uncommitted = true;
  return m;
}

StreamGap GapInCyan() { return {7, 12, 14, 5000000000, "packaging-0001", "cyan"}; }

// A producer on printer-1's host offers its segment of chunks for printer-1's chunk topic; the
// path is the last field of its frame.
constexpr std::string_view kProducerSegment = "/dev/shm/sluice-producer.4242.0badf00d";

Produce ProduceToPrinter() { return {"sluice.chunks.printer-1", std::string(kProducerSegment)}; }

constexpr uint16_t kV1 = 1;
constexpr uint16_t kV2 = 2;
constexpr uint16_t kV3 = 3;
constexpr uint16_t kV4 = 4;

// Good frames: every message type in both versions, and the edges of the unsigned fields.
std::vector<std::pair<std::string, Frame>> GoodFrames() {
  return {
      {"subscribe-partitions.bin", {1, SubscribeToPartitions(), kV1}},
      {"subscribe-local-leaders.bin", {2, SubscribeToLocalLeaders(), kV1}},
      {"subscribed.bin", {1, SubscribedToRecords(), kV1}},
      {"subscribed-chunks.bin",
       {2,
        Subscribed{8, ObjectKind::kChunks, kNoLaneHint, {}, "sluice-brokerd-4242-8", kSchema, ""},
        kV1}},
      {"release.bin", {3, Release{7, 41}, kV1}},
      {"release-high-ids.bin", {UINT64_MAX, Release{(uint64_t{1} << 63) + 1, UINT64_MAX}, kV1}},
      {"heartbeat.bin", {0, Heartbeat{123456789012345, 5000000000}, kV1}},
      {"error.bin",
       {2,
        ErrorMessage{0, ErrorCode::kUnknownTopic, 1, 1,
                     "topic \"nope\" does not exist \u2014 checked in the metadata"},
        kV1}},
      {"error-unsupported-version.bin",
       {9, ErrorMessage{0, ErrorCode::kUnsupportedVersion, 1, 1, "version 2 is not spoken here"},
        kV1}},
      {"error-record-too-large.bin",
       {0,
        ErrorMessage{7, ErrorCode::kRecordTooLarge, 1, 1,
                     "partition 3 offset 99: 2000000 bytes do not fit a 1048576-byte slot"},
        kV1}},
      {"close.bin", {4, Close{7}, kV1}},
      {"close-all.bin", {5, Close{kAllSubscriptions}, kV1}},
      {"v2-subscribe-local-leaders.bin", {2, SubscribeToLocalLeaders(), kV2}},
      {"v2-subscribed.bin", {1, SubscribedWithFolder(), kV2}},
      {"v2-subscribed-chunks.bin",
       {2,
        Subscribed{8,
                   ObjectKind::kChunks,
                   kNoLaneHint,
                   {},
                   "sluice-brokerd.1.0badf00d.ffff",
                   kSchema,
                   "/var/lib/sluice/segments \u00e9"},
        kV2}},
      {"v2-release.bin", {3, Release{7, 41}, kV2}},
      {"v2-heartbeat.bin", {0, Heartbeat{123456789012345, 5000000000}, kV2}},
      {"v2-error.bin",
       {0,
        ErrorMessage{7, ErrorCode::kRecordTooLarge, 1, 2,
                     "partition 3 offset 99: 2000000 bytes do not fit a 1048576-byte slot"},
        kV2}},
      // UNSUPPORTED_VERSION goes in version 1 whatever the daemon speaks.
      {"v2-error-unsupported-version.bin",
       {9, ErrorMessage{0, ErrorCode::kUnsupportedVersion, 1, 2, "version 3 is not spoken here"},
        kV1}},
      {"v2-close.bin", {4, Close{7}, kV2}},
      {"v3-subscribe-partitions.bin", {1, SubscribeToPartitions(), kV3}},
      {"v3-subscribe-read-uncommitted.bin", {2, SubscribeReadUncommitted(), kV3}},
      {"v3-subscribed.bin", {1, SubscribedWithFolder(), kV3}},
      {"v3-release.bin", {3, Release{7, 41}, kV3}},
      {"v3-heartbeat.bin", {0, Heartbeat{123456789012345, 5000000000}, kV3}},
      {"v3-error.bin",
       {2,
        ErrorMessage{0, ErrorCode::kUnexpectedMessage, 1, 3,
                     "type = STREAM_GAP: only the daemon sends it"},
        kV3}},
      {"v3-close.bin", {4, Close{kAllSubscriptions}, kV3}},
      {"v3-stream-gap.bin", {0, GapInCyan(), kV3}},
      // A one-seq hole, and the largest values.
      {"v3-stream-gap-edges.bin",
       {0, StreamGap{UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, "j", "s"}, kV3}},
      {"v4-subscribe-read-uncommitted.bin", {2, SubscribeReadUncommitted(), kV4}},
      {"v4-subscribed.bin", {1, SubscribedWithFolder(), kV4}},
      {"v4-release.bin", {3, Release{7, 41}, kV4}},
      {"v4-heartbeat.bin", {0, Heartbeat{123456789012345, 5000000000}, kV4}},
      {"v4-stream-gap.bin", {0, GapInCyan(), kV4}},
      {"v4-produce.bin", {5, ProduceToPrinter(), kV4}},
      // The longest topic and a path outside /dev/shm with a non-ASCII byte.
      {"v4-produce-edges.bin",
       {6, Produce{std::string(249, 't'), "/var/lib/sluice/producers \u00e9/p"}, kV4}},
      {"v4-producing.bin", {5, Producing{8}, kV4}},
      {"v4-producing-high-id.bin", {5, Producing{UINT64_MAX}, kV4}},
      // A PRODUCE refused, naming the path.
      {"v4-error-bad-request.bin",
       {5,
        ErrorMessage{0, ErrorCode::kBadRequest, 1, 4,
                     "segment_path = \"/dev/shm/sluice-producer.4242.0badf00d\": owned by uid "
                     "1001, not by the peer's uid 1000"},
        kV4}},
      // A producer ends: CLOSE with its producer id.
      {"v4-close.bin", {7, Close{8}, kV4}},
  };
}

void PutU16(std::vector<uint8_t>& bytes, size_t at, uint16_t value) {
  bytes[at] = static_cast<uint8_t>(value);
  bytes[at + 1] = static_cast<uint8_t>(value >> 8);
}

void PutU32(std::vector<uint8_t>& bytes, size_t at, uint32_t value) {
  for (size_t i = 0; i < 4; ++i) bytes[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

// frame_length after the bytes of a frame were cut or extended.
void FixLength(std::vector<uint8_t>& bytes) {
  PutU32(bytes, 0, static_cast<uint32_t>(bytes.size() - 4));
}

struct Broken {
  std::string file;
  std::string field;
  std::vector<uint8_t> bytes;
};

Result<std::vector<Broken>> BrokenFrames() {
  SLUICE_ASSIGN_OR_RETURN(const std::vector<uint8_t> subscribe,
                          EncodeFrame({1, SubscribeToPartitions(), kV1}));
  SLUICE_ASSIGN_OR_RETURN(const std::vector<uint8_t> subscribed,
                          EncodeFrame({1, SubscribedToRecords(), kV1}));
  SLUICE_ASSIGN_OR_RETURN(const std::vector<uint8_t> subscribed_v2,
                          EncodeFrame({1, SubscribedWithFolder(), kV2}));
  SLUICE_ASSIGN_OR_RETURN(const std::vector<uint8_t> release,
                          EncodeFrame({3, Release{7, 41}, kV1}));
  SLUICE_ASSIGN_OR_RETURN(const std::vector<uint8_t> heartbeat,
                          EncodeFrame({0, Heartbeat{1, 5000000000}, kV1}));
  SLUICE_ASSIGN_OR_RETURN(const std::vector<uint8_t> subscribe_v2,
                          EncodeFrame({1, SubscribeToPartitions(), kV2}));
  SLUICE_ASSIGN_OR_RETURN(const std::vector<uint8_t> subscribe_v3,
                          EncodeFrame({1, SubscribeToPartitions(), kV3}));
  SLUICE_ASSIGN_OR_RETURN(const std::vector<uint8_t> stream_gap,
                          EncodeFrame({0, GapInCyan(), kV3}));
  SLUICE_ASSIGN_OR_RETURN(const std::vector<uint8_t> produce,
                          EncodeFrame({5, ProduceToPrinter(), kV4}));
  SLUICE_ASSIGN_OR_RETURN(const std::vector<uint8_t> producing,
                          EncodeFrame({5, Producing{8}, kV4}));
  SLUICE_ASSIGN_OR_RETURN(
      const std::vector<uint8_t> error,
      EncodeFrame({2, ErrorMessage{0, ErrorCode::kInternal, 1, 1, "bad: XX"}, kV1}));
  std::vector<Broken> broken;
  auto add = [&broken](std::string file, std::string field, std::vector<uint8_t> bytes,
                       auto&& tamper) {
    tamper(bytes);
    broken.push_back({std::move(file), std::move(field), std::move(bytes)});
  };

  add("truncated.bin", "frame_length", release, [](auto& b) { b.resize(b.size() - 3); });
  add("short-body.bin", "processed_through", release, [](auto& b) {
    b.resize(b.size() - 8);
    FixLength(b);
  });
  add("length-too-small.bin", "frame_length", heartbeat, [](auto& b) { PutU32(b, 0, 8); });
  add("length-too-large.bin", "frame_length", heartbeat,
      [](auto& b) { PutU32(b, 0, kMaxFrameLength + 1); });
  add("bad-version.bin", "version", heartbeat,
      [](auto& b) { PutU16(b, kVersionAt, static_cast<uint16_t>(kMaxVersion + 1)); });
  add("version-zero.bin", "version", heartbeat, [](auto& b) { PutU16(b, kVersionAt, 0); });
  add("unknown-type.bin", "type", heartbeat, [](auto& b) { PutU16(b, kTypeAt, 7); });
  add("trailing-bytes.bin", "frame_length", release, [](auto& b) {
    b.insert(b.end(), {0, 0, 0, 0});
    FixLength(b);
  });
  // The topic is followed by two empty strings and an empty stream list (eight bytes); claim 200
  // bytes instead of 6.
  add("string-beyond-frame.bin", "topic", subscribe,
      [](auto& b) { PutU16(b, b.size() - kSubscribeTail - 6 - 2, 200); });
  add("bad-mode.bin", "mode", subscribe, [](auto& b) { PutU16(b, kSubscribeModeAt, 3); });
  // Bit 1 (READ_UNCOMMITTED) is reserved before version 3.
  add("undefined-flag.bin", "flags", subscribe, [](auto& b) { PutU32(b, kSubscribeFlagsAt, 2); });
  add("v2-subscribe-read-uncommitted.bin", "flags", subscribe_v2,
      [](auto& b) { PutU32(b, kSubscribeFlagsAt, 2); });
  add("v3-undefined-flag.bin", "flags", subscribe_v3,
      [](auto& b) { PutU32(b, kSubscribeFlagsAt, 4); });
  // STREAM_GAP is not a message of version 2: its type is unknown there.
  add("v2-stream-gap.bin", "type", stream_gap, [](auto& b) { PutU16(b, kVersionAt, kV2); });
  add("v3-stream-gap-backwards.bin", "missing_to", stream_gap,
      [](auto& b) { b[kStreamGapMissingToAt] = 11; });
  add("v3-stream-gap-subscription-id-zero.bin", "subscription_id", stream_gap,
      [](auto& b) { std::fill(b.begin() + kBody, b.begin() + kBody + 8, 0); });
  add("v3-stream-gap-bad-stream.bin", "stream", stream_gap,
      [](auto& b) { b[b.size() - kStreamGapStreamLength] = '/'; });
  add("v3-stream-gap-short.bin", "stream", stream_gap, [](auto& b) {
    b.resize(b.size() - kStreamGapStreamLength);
    FixLength(b);
  });
  add("bad-partition-start.bin", "partitions[1].start", subscribe,
      [](auto& b) { PutU16(b, kSubscribePartitionsAt + kPartitionStartEntrySize + 4, 7); });
  add("partition-count-beyond-frame.bin", "partition_count", subscribed,
      [](auto& b) { PutU32(b, kSubscribedPartitionCountAt, 1000000); });
  add("subscription-id-zero.bin", "subscription_id", release,
      [](auto& b) { std::fill(b.begin() + kBody, b.begin() + kBody + 8, 0); });
  // "XX" becomes C0 AF, an overlong encoding of '/'.
  add("bad-utf8.bin", "message", error, [](auto& b) {
    b[b.size() - 2] = 0xC0;
    b[b.size() - 1] = 0xAF;
  });
  add("bad-topic-name.bin", "topic", subscribe,
      [](auto& b) { b[b.size() - kSubscribeTail - 3] = '/'; });
  // A version-1 SUBSCRIBED under a version-2 header: the folder is missing.
  add("v2-subscribed-without-dir.bin", "segment_dir", subscribed,
      [](auto& b) { PutU16(b, kVersionAt, kV2); });
  // And the other way: a version-1 frame ends at the schema.
  add("v1-subscribed-with-dir.bin", "frame_length", subscribed_v2,
      [](auto& b) { PutU16(b, kVersionAt, kV1); });
  // "/dev/shm" becomes "dev/shm/": a folder relative to what?
  add("v2-subscribed-relative-dir.bin", "segment_dir", subscribed_v2, [](auto& b) {
    std::rotate(b.end() - kSegmentDirLength, b.end() - kSegmentDirLength + 1, b.end());
  });
  // PRODUCE's flags are reserved: none is defined.
  add("v4-produce-flags.bin", "flags", produce, [](auto& b) { PutU32(b, kProduceFlagsAt, 1); });
  add("v4-produce-bad-topic.bin", "topic", produce, [](auto& b) { b[kProduceTopicAt + 7] = '/'; });
  add("v4-produce-empty-path.bin", "segment_path", produce, [](auto& b) {
    b.resize(b.size() - kProducerSegment.size());
    PutU16(b, b.size() - 2, 0);
    FixLength(b);
  });
  // "/dev/shm/sluice-producer..." becomes "dev/shm/sluice-producer.../".
  add("v4-produce-relative-path.bin", "segment_path", produce, [](auto& b) {
    std::rotate(b.end() - kProducerSegment.size(), b.end() - kProducerSegment.size() + 1, b.end());
  });
  // "/dev/shm/" becomes "/dev/shm\0": a path the daemon would open cut at the NUL.
  add("v4-produce-nul-in-path.bin", "segment_path", produce,
      [](auto& b) { b[b.size() - kProducerSegment.size() + 8] = 0; });
  add("v4-producing-id-zero.bin", "producer_id", producing,
      [](auto& b) { std::fill(b.begin() + kBody, b.begin() + kBody + 8, 0); });
  // PRODUCE and PRODUCING are not messages of version 3: their types are unknown there.
  add("v3-produce.bin", "type", produce, [](auto& b) { PutU16(b, kVersionAt, kV3); });
  add("v3-producing.bin", "type", producing, [](auto& b) { PutU16(b, kVersionAt, kV3); });
  return broken;
}

}  // namespace

Fields Describe(const Frame& frame) {
  Fields fields = {{"version", std::to_string(frame.version)},
                   {"type", std::string(NameOf(TypeOf(frame.message)))},
                   {"request_id", std::to_string(frame.request_id)}};
  std::visit([&fields](const auto& message) { DescribeBody(message, fields); }, frame.message);
  return fields;
}

Result<std::vector<Vector>> All() {
  std::vector<Vector> all;
  for (auto& [file, frame] : GoodFrames()) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, EncodeFrame(frame));
    all.push_back({file, std::move(bytes), frame, ""});
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<Broken> broken, BrokenFrames());
  for (Broken& b : broken) all.push_back({b.file, std::move(b.bytes), std::nullopt, b.field});
  return all;
}

Status WriteAll(const std::string& directory) {
  SLUICE_ASSIGN_OR_RETURN(const std::vector<Vector> all, All());
  std::ofstream manifest(directory + "/manifest.txt", std::ios::binary);
  manifest << "# The control protocol's test vectors: docs/formats.md, \"Test vectors\".\n"
              "# Written by sluice-protocol-vectors; do not edit.\n";
  for (const Vector& v : all) {
    std::ofstream file(directory + "/" + v.file, std::ios::binary);
    file.write(reinterpret_cast<const char*>(v.bytes.data()),
               static_cast<std::streamsize>(v.bytes.size()));
    if (!file) return Status::FromErrno("write " + v.file, errno);
    manifest << "\n[" << v.file << "]\n";
    if (v.frame) {
      manifest << "result=ok\n";
      for (const auto& [key, value] : Describe(*v.frame)) manifest << key << "=" << value << "\n";
    } else {
      manifest << "result=error\nfield=" << v.error_field << "\n";
    }
  }
  if (!manifest) return Status::FromErrno("write manifest.txt", errno);
  return Status::OK();
}

}  // namespace sluice::brokerd::protocol::vectors
