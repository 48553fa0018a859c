// The control protocol's messages (docs/formats.md, "Control protocol"): one struct per message,
// holding the decoded values; the codec turns them into frames and back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sluice/layout.h"

namespace sluice::brokerd::protocol {

// The versions this side speaks (docs/formats.md, "Versions"). Version 2 adds SUBSCRIBED's
// segment_dir, so that only the daemon is configured with its segment folder; version 3 the
// subscription's own isolation level (SUBSCRIBE's READ_UNCOMMITTED) and STREAM_GAP; version 4
// PRODUCE and PRODUCING, so that a producer on the daemon's host hands it chunks through a segment
// of its own (docs/formats.md, "PRODUCE").
inline constexpr uint16_t kMinVersion = 1;
inline constexpr uint16_t kMaxVersion = 4;
inline constexpr uint16_t kSegmentDirVersion = 2;
inline constexpr uint16_t kIsolationAndGapVersion = 3;
inline constexpr uint16_t kProduceVersion = 4;
// The frame header: frame_length, version, type, request_id.
inline constexpr size_t kFrameHeaderSize = 16;
// frame_length counts the bytes after itself: at least the rest of the header, at most 1 MiB.
inline constexpr uint32_t kMinFrameLength = kFrameHeaderSize - 4;
inline constexpr uint32_t kMaxFrameLength = 1u << 20;

enum class MessageType : uint16_t {
  kSubscribe = 1,
  kSubscribed = 2,
  kRelease = 3,
  kHeartbeat = 4,
  kError = 5,
  kClose = 6,
  kStreamGap = 7,
  kProduce = 8,
  kProducing = 9,
};

enum class Mode : uint16_t { kRecords = 1, kChunkStreams = 2 };

enum class StartPosition : uint16_t { kEarliest = 1, kLatest = 2, kOffset = 3 };

enum class ErrorCode : uint16_t {
  kBadFrame = 1,
  kUnsupportedVersion = 2,
  kUnknownType = 3,
  kUnexpectedMessage = 4,
  kNotAuthorized = 5,
  kUnknownTopic = 6,
  kUnknownSubscription = 7,
  kBadRequest = 8,
  kRecordTooLarge = 9,
  kSubscriptionLimit = 10,
  kShuttingDown = 11,
  kInternal = 12,
};

struct PartitionStart {
  int32_t partition = 0;
  StartPosition start = StartPosition::kEarliest;
  int64_t offset = 0;  // with kOffset only

  bool operator==(const PartitionStart&) const = default;
};

// Where a stream resumes in CHUNK_STREAMS mode: its chunks below `next_seq` were delivered.
struct StreamStart {
  std::string job;
  std::string stream;
  uint64_t next_seq = 0;
  bool operator==(const StreamStart&) const = default;
};

struct Subscribe {
  uint32_t slot_count = 0;
  bool local_leaders = false;     // flags bit 0
  bool read_uncommitted = false;  // flags bit 1, version 3 on
  uint64_t slot_size = 0;
  uint64_t reorder_window_bytes = 0;
  Mode mode = Mode::kRecords;
  StartPosition default_start = StartPosition::kEarliest;
  std::vector<PartitionStart> partitions;
  std::string topic;
  std::string group_id;
  std::string job_filter;
  std::vector<StreamStart> streams;  // CHUNK_STREAMS only

  bool operator==(const Subscribe&) const = default;
};

inline constexpr uint16_t kNoLaneHint = 65535;

struct Subscribed {
  uint64_t subscription_id = 0;
  ObjectKind object_kind = ObjectKind::kRecords;
  uint16_t lane_hint = kNoLaneHint;
  std::vector<int32_t> partitions;
  std::string segment_name;
  std::vector<uint8_t> schema;  // an Arrow IPC Schema message, opaque to the codec
  std::string segment_dir;      // version 2 on: the folder of the segment; empty in version 1

  bool operator==(const Subscribed&) const = default;
};

struct Release {
  uint64_t subscription_id = 0;
  uint64_t processed_through = 0;  // a segment object_id, inclusive

  bool operator==(const Release&) const = default;
};

struct Heartbeat {
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC
  uint64_t timeout_ns = 0;

  bool operator==(const Heartbeat&) const = default;
};

struct ErrorMessage {
  uint64_t subscription_id = 0;  // 0: the connection, or a SUBSCRIBE that failed
  ErrorCode code = ErrorCode::kInternal;
  uint16_t min_version = kMinVersion;
  uint16_t max_version = kMaxVersion;
  std::string message;

  bool operator==(const ErrorMessage&) const = default;
};

inline constexpr uint64_t kAllSubscriptions = 0;

struct Close {
  uint64_t subscription_id = kAllSubscriptions;

  bool operator==(const Close&) const = default;
};

// A hole in a CHUNK_STREAMS stream that outlived sluice.gap.timeout.ms: seqs missing_from to
// missing_to (inclusive) have not come, and the stream waits for them.
struct StreamGap {
  uint64_t subscription_id = 0;
  uint64_t missing_from = 0;
  uint64_t missing_to = 0;
  uint64_t waited_ns = 0;  // how long the earliest held chunk has waited
  std::string job;
  std::string stream;

  bool operator==(const StreamGap&) const = default;
};

// A producer on the daemon's host offers its segment of chunks (object kind CHUNKS, the producer
// its writer) for the CHUNK_STREAMS subscriptions of `topic` on this daemon.
struct Produce {
  std::string topic;
  std::string segment_path;  // absolute

  bool operator==(const Produce&) const = default;
};

// The answer to a PRODUCE: the daemon reads the segment. CLOSE with the id ends it.
struct Producing {
  uint64_t producer_id = 0;  // from the counter of the subscription ids

  bool operator==(const Producing&) const = default;
};

// In type-number order: TypeOf relies on it.
using Message = std::variant<Subscribe, Subscribed, Release, Heartbeat, ErrorMessage, Close,
                             StreamGap, Produce, Producing>;

struct Frame {
  uint64_t request_id = 0;
  Message message;
  uint16_t version = kMaxVersion;

  bool operator==(const Frame&) const = default;
};

MessageType TypeOf(const Message& message);

// The first version whose frames may carry the type (docs/formats.md, "Versions").
uint16_t FirstVersionOf(MessageType type);

// Whether a client (a reader or a producer) may send the type; the daemon answers any other with
// UNEXPECTED_MESSAGE.
bool SentByClient(MessageType type);

// The names docs/formats.md uses: "SUBSCRIBE", "CHUNK_STREAMS", "RECORD_TOO_LARGE"...; an
// undefined value gives "?".
std::string_view NameOf(MessageType type);
std::string_view NameOf(Mode mode);
std::string_view NameOf(StartPosition start);
std::string_view NameOf(ErrorCode code);
std::string_view NameOf(ObjectKind kind);

}  // namespace sluice::brokerd::protocol
