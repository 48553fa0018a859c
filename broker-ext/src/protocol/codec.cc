#include "protocol/codec.h"

#include <set>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include "protocol/wire.h"

namespace sluice::brokerd::protocol {
namespace {

constexpr uint32_t kLocalLeadersFlag = 1;
constexpr uint32_t kReadUncommittedFlag = 2;  // version 3 on
constexpr size_t kPartitionStartSize = 16;
// A stream start: next_seq, then job and stream of at least one byte each.
constexpr size_t kMinStreamStartSize = 8 + 3 + 3;
constexpr size_t kPartitionSize = 4;
constexpr size_t kMaxSchemaLength = 65536;
constexpr size_t kMaxPathLength = 4095;  // PATH_MAX less its NUL
constexpr uint16_t kLastLane = limits::kMaxLanes - 1;

// Every enumeration of the protocol runs from 1 to its last value without gaps.
template <typename Enum>
Result<Enum> ReadEnum(WireReader& in, std::string_view field, Enum last) {
  SLUICE_ASSIGN_OR_RETURN(const uint16_t value, in.U16(field));
  const auto last_value = static_cast<uint16_t>(last);
  if (value < 1 || value > last_value) {
    return FieldError(field, value,
                      "expected 1 (" + std::string(NameOf(static_cast<Enum>(1))) + ") to " +
                          std::to_string(last_value) + " (" + std::string(NameOf(last)) + ")");
  }
  return static_cast<Enum>(value);
}

// A count of fixed-size entries must fit in what is left of the frame, checked before anything
// is allocated for them.
Status CheckCount(WireReader& in, std::string_view field, uint32_t count, size_t entry_size) {
  if (count <= in.remaining() / entry_size) return Status::OK();
  return FieldError(
      field, count,
      "more entries than the " + std::to_string(in.remaining()) + " bytes left in the frame hold");
}

Result<PartitionStart> DecodePartitionStart(WireReader& in, size_t index) {
  const std::string at = "partitions[" + std::to_string(index) + "].";
  PartitionStart entry;
  SLUICE_ASSIGN_OR_RETURN(entry.partition, in.I32(at + "partition"));
  if (entry.partition < 0) {
    return FieldError(at + "partition", std::to_string(entry.partition), "must be >= 0");
  }
  SLUICE_ASSIGN_OR_RETURN(entry.start, ReadEnum(in, at + "start", StartPosition::kOffset));
  SLUICE_ASSIGN_OR_RETURN(const uint16_t reserved, in.U16(at + "reserved"));
  if (reserved != 0) return FieldError(at + "reserved", reserved, "must be 0");
  SLUICE_ASSIGN_OR_RETURN(entry.offset, in.I64(at + "offset"));
  if (entry.start == StartPosition::kOffset && entry.offset < 0) {
    return FieldError(at + "offset", std::to_string(entry.offset), "must be >= 0");
  }
  if (entry.start != StartPosition::kOffset && entry.offset != 0) {
    return FieldError(at + "offset", std::to_string(entry.offset),
                      "must be 0 unless start is OFFSET");
  }
  return entry;
}

Status CheckSubscribeFlags(uint32_t flags, uint16_t version) {
  if (version < kIsolationAndGapVersion) {
    if ((flags & ~kLocalLeadersFlag) == 0) return Status::OK();
    return FieldError("flags", flags,
                      "only bit 0 (LOCAL_LEADERS) is defined in version " +
                          std::to_string(version) + "; bit 1 (READ_UNCOMMITTED) is version 3 on");
  }
  if ((flags & ~(kLocalLeadersFlag | kReadUncommittedFlag)) == 0) return Status::OK();
  return FieldError("flags", flags,
                    "only bits 0 (LOCAL_LEADERS) and 1 (READ_UNCOMMITTED) are defined");
}

// slot_count and slot_size have bounds of the format (the segment's), so a frame outside them is
// malformed: BAD_FRAME. What the daemon is configured to serve within them is its own business,
// answered BAD_REQUEST (docs/formats.md, "ERROR").
Result<Subscribe> DecodeSubscribe(WireReader& in, uint16_t version) {
  Subscribe m;
  SLUICE_ASSIGN_OR_RETURN(m.slot_count, in.U32("slot_count"));
  if (m.slot_count < 1 || m.slot_count > limits::kMaxSlots) {
    return FieldError("slot_count", m.slot_count, "expected 1 to 65536");
  }
  SLUICE_ASSIGN_OR_RETURN(const uint32_t flags, in.U32("flags"));
  SLUICE_RETURN_NOT_OK(CheckSubscribeFlags(flags, version));
  m.local_leaders = (flags & kLocalLeadersFlag) != 0;
  m.read_uncommitted = (flags & kReadUncommittedFlag) != 0;
  SLUICE_ASSIGN_OR_RETURN(m.slot_size, in.U64("slot_size"));
  if (m.slot_size < limits::kMinSlotSize || m.slot_size > limits::kMaxSlotSize ||
      m.slot_size % limits::kSlotAlignment != 0) {
    return FieldError("slot_size", m.slot_size, "expected a multiple of 64 from 256 to 2^31 - 64");
  }
  SLUICE_ASSIGN_OR_RETURN(m.reorder_window_bytes, in.U64("reorder_window_bytes"));
  SLUICE_ASSIGN_OR_RETURN(m.mode, ReadEnum(in, "mode", Mode::kChunkStreams));
  if (m.mode == Mode::kRecords && m.reorder_window_bytes != 0) {
    return FieldError("reorder_window_bytes", m.reorder_window_bytes, "must be 0 in mode RECORDS");
  }
  SLUICE_ASSIGN_OR_RETURN(m.default_start, ReadEnum(in, "default_start", StartPosition::kLatest));
  SLUICE_ASSIGN_OR_RETURN(const uint32_t count, in.U32("partition_count"));
  SLUICE_RETURN_NOT_OK(CheckCount(in, "partition_count", count, kPartitionStartSize));
  if (count == 0 && !m.local_leaders) {
    return FieldError("partition_count", count, "at least one partition without LOCAL_LEADERS");
  }
  std::unordered_set<int32_t> seen;
  for (size_t i = 0; i < count; ++i) {
    SLUICE_ASSIGN_OR_RETURN(PartitionStart entry, DecodePartitionStart(in, i));
    if (!seen.insert(entry.partition).second) {
      return FieldError("partitions[" + std::to_string(i) + "].partition",
                        std::to_string(entry.partition), "repeated");
    }
    m.partitions.push_back(entry);
  }
  SLUICE_ASSIGN_OR_RETURN(m.topic, in.Str16("topic"));
  SLUICE_RETURN_NOT_OK(CheckName("topic", m.topic, 1, limits::kMaxTopicLength));
  SLUICE_ASSIGN_OR_RETURN(m.group_id, in.Str16("group_id"));
  if (m.group_id.size() > limits::kMaxGroupIdLength) {
    return FieldError("group_id", Quote(m.group_id), "expected at most 255 bytes");
  }
  SLUICE_ASSIGN_OR_RETURN(m.job_filter, in.Str16("job_filter"));
  SLUICE_RETURN_NOT_OK(CheckName("job_filter", m.job_filter, 0, limits::kMaxNameLength));
  if (m.mode == Mode::kRecords && !m.job_filter.empty()) {
    return FieldError("job_filter", Quote(m.job_filter), "must be empty in mode RECORDS");
  }
  SLUICE_ASSIGN_OR_RETURN(const uint32_t streams, in.U32("stream_count"));
  SLUICE_RETURN_NOT_OK(CheckCount(in, "stream_count", streams, kMinStreamStartSize));
  if (m.mode == Mode::kRecords && streams != 0) {
    return FieldError("stream_count", streams, "must be 0 in mode RECORDS");
  }
  std::set<std::pair<std::string, std::string>> seen_streams;
  for (size_t i = 0; i < streams; ++i) {
    const std::string at = "streams[" + std::to_string(i) + "].";
    StreamStart entry;
    SLUICE_ASSIGN_OR_RETURN(entry.next_seq, in.U64(at + "next_seq"));
    SLUICE_ASSIGN_OR_RETURN(entry.job, in.Str16(at + "job"));
    SLUICE_RETURN_NOT_OK(CheckName(at + "job", entry.job, 1, limits::kMaxNameLength));
    SLUICE_ASSIGN_OR_RETURN(entry.stream, in.Str16(at + "stream"));
    SLUICE_RETURN_NOT_OK(CheckName(at + "stream", entry.stream, 1, limits::kMaxNameLength));
    if (!seen_streams.insert({entry.job, entry.stream}).second) {
      return FieldError(at + "stream", Quote(entry.stream), "repeated for job " + entry.job);
    }
    m.streams.push_back(std::move(entry));
  }
  return m;
}

Status EncodeBody(const Subscribe& m, WireWriter& out) {
  out.U32(m.slot_count);
  out.U32((m.local_leaders ? kLocalLeadersFlag : 0) |
          (m.read_uncommitted ? kReadUncommittedFlag : 0));
  out.U64(m.slot_size);
  out.U64(m.reorder_window_bytes);
  out.U16(static_cast<uint16_t>(m.mode));
  out.U16(static_cast<uint16_t>(m.default_start));
  out.U32(static_cast<uint32_t>(m.partitions.size()));
  for (const PartitionStart& entry : m.partitions) {
    out.I32(entry.partition);
    out.U16(static_cast<uint16_t>(entry.start));
    out.U16(0);
    out.I64(entry.offset);
  }
  SLUICE_RETURN_NOT_OK(out.Str16("topic", m.topic));
  SLUICE_RETURN_NOT_OK(out.Str16("group_id", m.group_id));
  SLUICE_RETURN_NOT_OK(out.Str16("job_filter", m.job_filter));
  out.U32(static_cast<uint32_t>(m.streams.size()));
  for (const StreamStart& entry : m.streams) {
    out.U64(entry.next_seq);
    SLUICE_RETURN_NOT_OK(out.Str16("job", entry.job));
    SLUICE_RETURN_NOT_OK(out.Str16("stream", entry.stream));
  }
  return Status::OK();
}

// A subscription id, or a producer id from the same counter: 0 is none.
Result<uint64_t> ReadId(WireReader& in, std::string_view field) {
  SLUICE_ASSIGN_OR_RETURN(const uint64_t id, in.U64(field));
  if (id == 0) return FieldError(field, id, "must be >= 1");
  return id;
}

Result<uint64_t> ReadSubscriptionId(WireReader& in) { return ReadId(in, "subscription_id"); }

// SUBSCRIBED's segment_dir and PRODUCE's segment_path: a path the peer opens as it is, so it is
// absolute and fits PATH_MAX.
Status CheckAbsolutePath(std::string_view field, std::string_view path) {
  if (path.empty() || path.size() > kMaxPathLength) {
    return FieldError(field, Quote(path), "expected 1 to 4095 bytes");
  }
  if (path.front() != '/') return FieldError(field, Quote(path), "not an absolute path");
  if (path.find('\0') != std::string_view::npos) {
    return FieldError(field, Quote(path), "a path has no NUL byte");
  }
  return Status::OK();
}

Result<Subscribed> DecodeSubscribed(WireReader& in, uint16_t version) {
  Subscribed m;
  SLUICE_ASSIGN_OR_RETURN(m.subscription_id, ReadSubscriptionId(in));
  SLUICE_ASSIGN_OR_RETURN(m.object_kind, ReadEnum(in, "object_kind", ObjectKind::kChunks));
  SLUICE_ASSIGN_OR_RETURN(m.lane_hint, in.U16("lane_hint"));
  if (m.lane_hint > kLastLane && m.lane_hint != kNoLaneHint) {
    return FieldError("lane_hint", m.lane_hint, "expected 0 to 30, or 65535 for none");
  }
  SLUICE_ASSIGN_OR_RETURN(const uint32_t count, in.U32("partition_count"));
  SLUICE_RETURN_NOT_OK(CheckCount(in, "partition_count", count, kPartitionSize));
  std::unordered_set<int32_t> seen;
  for (size_t i = 0; i < count; ++i) {
    const std::string field = "partitions[" + std::to_string(i) + "]";
    SLUICE_ASSIGN_OR_RETURN(const int32_t partition, in.I32(field));
    if (partition < 0) return FieldError(field, std::to_string(partition), "must be >= 0");
    if (!seen.insert(partition).second) {
      return FieldError(field, std::to_string(partition), "repeated");
    }
    m.partitions.push_back(partition);
  }
  SLUICE_ASSIGN_OR_RETURN(m.segment_name, in.Str16("segment_name"));
  SLUICE_RETURN_NOT_OK(CheckName("segment_name", m.segment_name, 1, limits::kMaxSegmentNameLength));
  if (m.segment_name == "." || m.segment_name == "..") {
    return FieldError("segment_name", Quote(m.segment_name), "not a file name");
  }
  SLUICE_ASSIGN_OR_RETURN(m.schema, in.Bytes32("schema"));
  if (m.schema.empty() || m.schema.size() > kMaxSchemaLength) {
    return FieldError("schema", std::to_string(m.schema.size()) + " bytes",
                      "expected 1 to 65536 bytes");
  }
  if (version >= kSegmentDirVersion) {
    SLUICE_ASSIGN_OR_RETURN(m.segment_dir, in.Str16("segment_dir"));
    SLUICE_RETURN_NOT_OK(CheckAbsolutePath("segment_dir", m.segment_dir));
  }
  return m;
}

Status EncodeBody(const Subscribed& m, uint16_t version, WireWriter& out) {
  out.U64(m.subscription_id);
  out.U16(static_cast<uint16_t>(m.object_kind));
  out.U16(m.lane_hint);
  out.U32(static_cast<uint32_t>(m.partitions.size()));
  for (const int32_t partition : m.partitions) out.I32(partition);
  SLUICE_RETURN_NOT_OK(out.Str16("segment_name", m.segment_name));
  SLUICE_RETURN_NOT_OK(out.Bytes32("schema", m.schema));
  if (version < kSegmentDirVersion) {
    // Dropping it would leave the reader to guess the folder.
    if (!m.segment_dir.empty()) {
      return FieldError("segment_dir", Quote(m.segment_dir), "version 1 has no segment_dir");
    }
    return Status::OK();
  }
  return out.Str16("segment_dir", m.segment_dir);
}

Result<Release> DecodeRelease(WireReader& in) {
  Release m;
  SLUICE_ASSIGN_OR_RETURN(m.subscription_id, ReadSubscriptionId(in));
  SLUICE_ASSIGN_OR_RETURN(m.processed_through, in.U64("processed_through"));
  return m;
}

Status EncodeBody(const Release& m, WireWriter& out) {
  out.U64(m.subscription_id);
  out.U64(m.processed_through);
  return Status::OK();
}

Result<Heartbeat> DecodeHeartbeat(WireReader& in) {
  Heartbeat m;
  SLUICE_ASSIGN_OR_RETURN(m.time_ns, in.U64("time_ns"));
  SLUICE_ASSIGN_OR_RETURN(m.timeout_ns, in.U64("timeout_ns"));
  if (m.timeout_ns == 0) return FieldError("timeout_ns", m.timeout_ns, "must be >= 1");
  return m;
}

Status EncodeBody(const Heartbeat& m, WireWriter& out) {
  out.U64(m.time_ns);
  out.U64(m.timeout_ns);
  return Status::OK();
}

Result<ErrorMessage> DecodeError(WireReader& in) {
  ErrorMessage m;
  SLUICE_ASSIGN_OR_RETURN(m.subscription_id, in.U64("subscription_id"));
  SLUICE_ASSIGN_OR_RETURN(m.code, ReadEnum(in, "code", ErrorCode::kInternal));
  SLUICE_ASSIGN_OR_RETURN(m.min_version, in.U16("min_version"));
  if (m.min_version == 0) return FieldError("min_version", m.min_version, "must be >= 1");
  SLUICE_ASSIGN_OR_RETURN(m.max_version, in.U16("max_version"));
  if (m.max_version < m.min_version) {
    return FieldError("max_version", m.max_version,
                      "must be >= min_version " + std::to_string(m.min_version));
  }
  SLUICE_ASSIGN_OR_RETURN(m.message, in.Str16("message"));
  return m;
}

Status EncodeBody(const ErrorMessage& m, WireWriter& out) {
  out.U64(m.subscription_id);
  out.U16(static_cast<uint16_t>(m.code));
  out.U16(m.min_version);
  out.U16(m.max_version);
  return out.Str16("message", m.message);
}

Result<Close> DecodeClose(WireReader& in) {
  Close m;
  SLUICE_ASSIGN_OR_RETURN(m.subscription_id, in.U64("subscription_id"));
  return m;
}

Status EncodeBody(const Close& m, WireWriter& out) {
  out.U64(m.subscription_id);
  return Status::OK();
}

Result<StreamGap> DecodeStreamGap(WireReader& in) {
  StreamGap m;
  SLUICE_ASSIGN_OR_RETURN(m.subscription_id, ReadSubscriptionId(in));
  SLUICE_ASSIGN_OR_RETURN(m.missing_from, in.U64("missing_from"));
  SLUICE_ASSIGN_OR_RETURN(m.missing_to, in.U64("missing_to"));
  if (m.missing_to < m.missing_from) {
    return FieldError("missing_to", m.missing_to,
                      "must be >= missing_from " + std::to_string(m.missing_from));
  }
  SLUICE_ASSIGN_OR_RETURN(m.waited_ns, in.U64("waited_ns"));
  SLUICE_ASSIGN_OR_RETURN(m.job, in.Str16("job"));
  SLUICE_RETURN_NOT_OK(CheckName("job", m.job, 1, limits::kMaxNameLength));
  SLUICE_ASSIGN_OR_RETURN(m.stream, in.Str16("stream"));
  SLUICE_RETURN_NOT_OK(CheckName("stream", m.stream, 1, limits::kMaxNameLength));
  return m;
}

Status EncodeBody(const StreamGap& m, WireWriter& out) {
  out.U64(m.subscription_id);
  out.U64(m.missing_from);
  out.U64(m.missing_to);
  out.U64(m.waited_ns);
  SLUICE_RETURN_NOT_OK(out.Str16("job", m.job));
  return out.Str16("stream", m.stream);
}

Result<Produce> DecodeProduce(WireReader& in) {
  Produce m;
  SLUICE_ASSIGN_OR_RETURN(const uint32_t flags, in.U32("flags"));
  if (flags != 0) return FieldError("flags", flags, "no flag is defined in PRODUCE: must be 0");
  SLUICE_ASSIGN_OR_RETURN(m.topic, in.Str16("topic"));
  SLUICE_RETURN_NOT_OK(CheckName("topic", m.topic, 1, limits::kMaxTopicLength));
  SLUICE_ASSIGN_OR_RETURN(m.segment_path, in.Str16("segment_path"));
  SLUICE_RETURN_NOT_OK(CheckAbsolutePath("segment_path", m.segment_path));
  return m;
}

Status EncodeBody(const Produce& m, WireWriter& out) {
  out.U32(0);  // flags
  SLUICE_RETURN_NOT_OK(out.Str16("topic", m.topic));
  return out.Str16("segment_path", m.segment_path);
}

Result<Producing> DecodeProducing(WireReader& in) {
  Producing m;
  SLUICE_ASSIGN_OR_RETURN(m.producer_id, ReadId(in, "producer_id"));
  return m;
}

Status EncodeBody(const Producing& m, WireWriter& out) {
  out.U64(m.producer_id);
  return Status::OK();
}

// Wraps a body decoder's result into the frame's Message.
template <typename T>
Result<Message> AsMessage(Result<T> body) {
  if (!body.ok()) return body.status();
  return Message(body.MoveValue());
}

Result<Message> DecodeBody(MessageType type, uint16_t version, WireReader& in) {
  switch (type) {
    case MessageType::kSubscribe:
      return AsMessage(DecodeSubscribe(in, version));
    case MessageType::kSubscribed:
      return AsMessage(DecodeSubscribed(in, version));
    case MessageType::kRelease:
      return AsMessage(DecodeRelease(in));
    case MessageType::kHeartbeat:
      return AsMessage(DecodeHeartbeat(in));
    case MessageType::kError:
      return AsMessage(DecodeError(in));
    case MessageType::kClose:
      return AsMessage(DecodeClose(in));
    case MessageType::kStreamGap:
      return AsMessage(DecodeStreamGap(in));
    case MessageType::kProduce:
      return AsMessage(DecodeProduce(in));
    case MessageType::kProducing:
      return AsMessage(DecodeProducing(in));
  }
  return FieldError("type", static_cast<uint16_t>(type), "not a message type");
}

Status CheckVersion(uint16_t version) {
  if (version >= kMinVersion && version <= kMaxVersion) return Status::OK();
  return FieldError("version", version,
                    "this side speaks versions " + std::to_string(kMinVersion) + " to " +
                        std::to_string(kMaxVersion));
}

// The type with the highest number in a version: the types are numbered in the order the
// versions added them.
MessageType LastTypeOf(uint16_t version) {
  auto type = MessageType::kProducing;
  while (FirstVersionOf(type) > version)
    type = static_cast<MessageType>(static_cast<uint16_t>(type) - 1);
  return type;
}

std::string Numbered(MessageType type) {
  return std::to_string(static_cast<uint16_t>(type)) + " (" + std::string(NameOf(type)) + ")";
}

// A type is a message of the versions that define it: STREAM_GAP is version 3 on, PRODUCE and
// PRODUCING version 4 on.
Result<MessageType> ReadType(WireReader& in, uint16_t version) {
  SLUICE_ASSIGN_OR_RETURN(const MessageType type, ReadEnum(in, "type", MessageType::kProducing));
  if (version < FirstVersionOf(type)) {
    return FieldError("type", static_cast<uint16_t>(type),
                      "expected 1 (SUBSCRIBE) to " + Numbered(LastTypeOf(version)) +
                          " in version " + std::to_string(version) + "; " + Numbered(type) +
                          " is version " + std::to_string(FirstVersionOf(type)) + " on");
  }
  return type;
}

// The frame length's checks, the first DecodeHeader applies; RefusalCode follows the same order
// so that the code and the decoder's message agree.
Status CheckWholeFrame(std::span<const uint8_t> bytes) {
  if (bytes.size() < 4) {
    return FieldError(
        "frame_length", "missing",
        "a frame starts with a 4-byte length, got " + std::to_string(bytes.size()) + " bytes");
  }
  const uint32_t length = DeclaredFrameLength(bytes.first<4>());
  SLUICE_RETURN_NOT_OK(CheckFrameLength(length));
  if (bytes.size() - 4 != length) {
    return FieldError("frame_length", length,
                      "the buffer holds " + std::to_string(bytes.size() - 4) + " bytes after it");
  }
  return Status::OK();
}

}  // namespace

uint32_t DeclaredFrameLength(std::span<const uint8_t, 4> prefix) {
  return static_cast<uint32_t>(prefix[0]) | static_cast<uint32_t>(prefix[1]) << 8 |
         static_cast<uint32_t>(prefix[2]) << 16 | static_cast<uint32_t>(prefix[3]) << 24;
}

Status CheckFrameLength(uint32_t frame_length) {
  if (frame_length >= kMinFrameLength && frame_length <= kMaxFrameLength) return Status::OK();
  return FieldError("frame_length", frame_length, "expected 12 to 1048576");
}

Result<FrameHeader> DecodeHeader(std::span<const uint8_t> bytes) {
  SLUICE_RETURN_NOT_OK(CheckWholeFrame(bytes));
  WireReader in(bytes.subspan(4));
  FrameHeader header;
  SLUICE_ASSIGN_OR_RETURN(header.version, in.U16("version"));
  SLUICE_RETURN_NOT_OK(CheckVersion(header.version));
  SLUICE_ASSIGN_OR_RETURN(header.type, ReadType(in, header.version));
  SLUICE_ASSIGN_OR_RETURN(header.request_id, in.U64("request_id"));
  return header;
}

Result<Frame> DecodeFrame(std::span<const uint8_t> bytes) {
  SLUICE_ASSIGN_OR_RETURN(const FrameHeader header, DecodeHeader(bytes));
  WireReader in(bytes.subspan(kFrameHeaderSize));
  Frame frame;
  frame.version = header.version;
  frame.request_id = header.request_id;
  SLUICE_ASSIGN_OR_RETURN(frame.message, DecodeBody(header.type, header.version, in));
  if (in.remaining() != 0) {
    return FieldError("frame_length", bytes.size() - 4,
                      std::to_string(in.remaining()) + " bytes after the end of the " +
                          std::string(NameOf(header.type)) + " body");
  }
  return frame;
}

ErrorCode RefusalCode(std::span<const uint8_t> bytes) {
  if (!CheckWholeFrame(bytes).ok()) return ErrorCode::kBadFrame;
  WireReader in(bytes.subspan(4));
  const uint16_t version = *in.U16("version");
  if (!CheckVersion(version).ok()) return ErrorCode::kUnsupportedVersion;
  if (!ReadType(in, version).ok()) return ErrorCode::kUnknownType;
  return ErrorCode::kBadFrame;
}

Result<std::vector<uint8_t>> EncodeFrame(const Frame& frame) {
  SLUICE_RETURN_NOT_OK(CheckVersion(frame.version));
  WireWriter out;
  out.U32(0);  // frame_length, known at the end
  out.U16(frame.version);
  out.U16(static_cast<uint16_t>(TypeOf(frame.message)));
  out.U64(frame.request_id);
  SLUICE_RETURN_NOT_OK(std::visit(
      [&out, &frame](const auto& message) {
        if constexpr (std::is_same_v<std::decay_t<decltype(message)>, Subscribed>) {
          return EncodeBody(message, frame.version, out);
        } else {
          return EncodeBody(message, out);
        }
      },
      frame.message));
  const size_t length = out.size() - 4;
  if (length > kMaxFrameLength) return FieldError("frame_length", length, "expected 12 to 1048576");
  out.PatchU32(0, static_cast<uint32_t>(length));
  std::vector<uint8_t> bytes = out.Take();
  // The decoder holds the format's rules; running it here keeps one copy of them.
  SLUICE_RETURN_NOT_OK(DecodeFrame(bytes).status());
  return bytes;
}

}  // namespace sluice::brokerd::protocol
