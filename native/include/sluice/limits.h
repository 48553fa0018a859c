// The bounds and the name alphabet that the segment, the control protocol, chunk records and the
// daemon's settings share, kept once for C++ (libsluice and sluice-brokerd both include this).
// Python keeps its own copy in python/src/sluice/limits.py, which python/tests/test_twins.py pins
// to the values here by name; the Java client checks the same bounds (docs/formats.md,
// "Validation" and "Control protocol").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice::limits {

// ---- The segment (docs/formats.md, "Header" and "Validation") ----

// Readers of one segment: a slot's holders word gives each lane a bit of its low 31 and the
// writer bit 31 (docs/formats.md, "Slot descriptor (64 bytes, 64-aligned)").
inline constexpr uint32_t kMaxLanes = 31;
// Slots of one segment. It bounds the lane table: each lane's ring holds the smallest power of two
// of entries at least slot_count, 8 bytes each, so 31 lanes take at most 16 MiB.
inline constexpr uint32_t kMaxSlots = 65536;
// Every slot starts 64-aligned, a cache line, so that no two slots share one.
inline constexpr uint64_t kSlotAlignment = 64;
// Room for the smallest Arrow IPC record-batch message, and a multiple of the alignment.
inline constexpr uint64_t kMinSlotSize = 256;
// What one Java mapping holds (a ByteBuffer is indexed by int), less one alignment so that the
// bound is itself aligned; it also keeps segment_size far from overflow.
inline constexpr uint64_t kMaxSlotSize = (uint64_t{1} << 31) - kSlotAlignment;

// ---- Names (docs/formats.md, "Control protocol") ----

// Job ids and stream names travel into file names, logs, metric labels and topic names, so they
// are kept to these bytes: no separator, no space, nothing to quote. Kafka allows the same
// alphabet in a topic name (org.apache.kafka.common.internals.Topic).
inline constexpr std::string_view kNameAlphabet = "A-Za-z0-9._-";
constexpr bool IsNameCharacter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}
// The longest job id or stream name: the job spec's bound for every name, which travels in Kafka
// keys and headers and in file names on output nodes (docs/formats.md, "Job commands and
// statuses").
inline constexpr size_t kMaxNameLength = 128;
// Kafka's own limit on a topic name (org.apache.kafka.common.internals.Topic).
inline constexpr size_t kMaxTopicLength = 249;
// A consumer group id: Kafka sets no bound of its own; this one bounds what the daemon holds and
// quotes in its logs and errors.
inline constexpr size_t kMaxGroupIdLength = 255;
// A segment is a file in the segment folder, and a file name has at most 255 bytes (NAME_MAX).
inline constexpr size_t kMaxSegmentNameLength = 255;

// ---- The daemon's own (docs/brokerd.md, "Segment memory") ----

// The subscriptions one daemon holds at most: each holds a thread, a segment and a librdkafka
// handle or fetch session, so a peer's SUBSCRIBEs are bounded.
inline constexpr size_t kMaxSubscriptions = 256;
// Shared memory is RAM: one subscription's segment may not ask for more than this, whatever
// sluice.segment.max.total.bytes allows all of them.
inline constexpr uint64_t kMaxSegmentBytes = 4ull << 30;

}  // namespace sluice::limits
