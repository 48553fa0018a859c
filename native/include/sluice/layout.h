// The segment's byte layout, as docs/formats.md "Segment" gives it: every offset a named
// constant, and the geometry (region offsets and sizes) derived from the parameters.
#pragma once

#include <cstdint>

#include "sluice/export.h"
#include "sluice/limits.h"
#include "sluice/status.h"

namespace sluice {

namespace layout {

inline constexpr char kMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'S', 'G'};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint64_t kPageSize = 4096;
inline constexpr uint64_t kMinFileSize = 4096;

// Header fields, offsets from the start of the file.
namespace header {
inline constexpr uint64_t kMagic = 0;
inline constexpr uint64_t kVersion = 8;
inline constexpr uint64_t kFlags = 12;
inline constexpr uint64_t kSlotCount = 16;
inline constexpr uint64_t kLaneCount = 20;
inline constexpr uint64_t kSlotSize = 24;
inline constexpr uint64_t kSegmentSize = 32;
inline constexpr uint64_t kLaneTableOffset = 40;
inline constexpr uint64_t kLaneSize = 48;
inline constexpr uint64_t kRingCapacity = 56;
inline constexpr uint64_t kSchemaLength = 60;
inline constexpr uint64_t kDescriptorTableOffset = 64;
inline constexpr uint64_t kSlotDataOffset = 72;
inline constexpr uint64_t kLivenessTimeoutNs = 80;
inline constexpr uint64_t kObjectKind = 88;
inline constexpr uint64_t kHeaderSize = 92;
inline constexpr uint64_t kWriterPid = 128;
inline constexpr uint64_t kWriterHeartbeatNs = 136;
inline constexpr uint64_t kWriterState = 144;
inline constexpr uint64_t kObjectsPublished = 152;
inline constexpr uint64_t kWriterWaiting = 192;
inline constexpr uint64_t kSchema = 256;

inline constexpr uint32_t kFlagChecksums = 1u << 0;
inline constexpr uint32_t kWriterActive = 1;
inline constexpr uint32_t kWriterClosed = 2;
}  // namespace header

// Lane fields, offsets from the start of the lane.
namespace lane {
inline constexpr uint64_t kLaneWord = 0;
inline constexpr uint64_t kReaderPid = 8;
inline constexpr uint64_t kWritePos = 64;
inline constexpr uint64_t kReadPos = 128;
inline constexpr uint64_t kReaderHeartbeatNs = 136;
inline constexpr uint64_t kReaderWaiting = 144;
inline constexpr uint64_t kRing = 192;

inline constexpr uint32_t kFree = 0;
inline constexpr uint32_t kAttached = 1;
inline constexpr uint32_t kClosed = 2;
inline constexpr uint32_t kReclaiming = 3;

constexpr uint64_t Word(uint32_t epoch, uint32_t state) {
  return static_cast<uint64_t>(epoch) << 32 | state;
}
constexpr uint32_t Epoch(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
constexpr uint32_t State(uint64_t word) { return static_cast<uint32_t>(word); }
}  // namespace lane

// Slot descriptor fields, offsets from the start of the descriptor.
namespace slot {
inline constexpr uint64_t kStateWord = 0;
inline constexpr uint64_t kFlags = 8;
inline constexpr uint64_t kLength = 12;
inline constexpr uint64_t kObjectId = 16;
inline constexpr uint64_t kRecordCount = 24;
inline constexpr uint64_t kPartition = 28;
inline constexpr uint64_t kFirstOffset = 32;
inline constexpr uint64_t kLastOffset = 40;
inline constexpr uint64_t kChecksum = 48;
inline constexpr uint64_t kDescriptorSize = 64;

inline constexpr uint32_t kHasChecksum = 1u << 0;
inline constexpr uint32_t kWriterBit = 1u << 31;
inline constexpr uint32_t kLaneBits = kWriterBit - 1;

constexpr uint64_t Word(uint32_t generation, uint32_t holders) {
  return static_cast<uint64_t>(generation) << 32 | holders;
}
constexpr uint32_t Generation(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
constexpr uint32_t Holders(uint64_t word) { return static_cast<uint32_t>(word); }
}  // namespace slot

// A lane ring entry: generation << 32 | slot_index.
namespace ring {
constexpr uint64_t Entry(uint32_t generation, uint32_t slot_index) {
  return static_cast<uint64_t>(generation) << 32 | slot_index;
}
constexpr uint32_t Generation(uint64_t entry) { return static_cast<uint32_t>(entry >> 32); }
constexpr uint32_t SlotIndex(uint64_t entry) { return static_cast<uint32_t>(entry); }
}  // namespace ring

constexpr uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}
constexpr uint32_t RingCapacity(uint32_t slot_count) {
  uint32_t capacity = 1;
  while (capacity < slot_count) capacity <<= 1;
  return capacity;
}
constexpr uint64_t LaneSize(uint32_t ring_capacity) {
  return AlignUp(lane::kRing + 8 * static_cast<uint64_t>(ring_capacity), 64);
}

}  // namespace layout

enum class ObjectKind : uint32_t { kRecords = 1, kChunks = 2 };

// Where every region of a segment lies, derived from its parameters.
struct SLUICE_EXPORT SegmentLayout {
  uint32_t slot_count = 0;
  uint32_t lane_count = 0;
  uint64_t slot_size = 0;
  uint32_t ring_capacity = 0;
  uint64_t lane_size = 0;
  uint64_t header_size = 0;
  uint64_t lane_table_offset = 0;
  uint64_t descriptor_table_offset = 0;
  uint64_t slot_data_offset = 0;
  uint64_t segment_size = 0;

  // Checks the parameters against the format's limits; header_size is the smallest multiple of
  // the page size that holds the fixed header and a schema message of schema_length bytes.
  static Result<SegmentLayout> Plan(uint32_t slot_count, uint32_t lane_count, uint64_t slot_size,
                                    uint64_t schema_length);
  // The geometry a header with these fields implies; the parameters must already be in range.
  static SegmentLayout Derive(uint32_t slot_count, uint32_t lane_count, uint64_t slot_size,
                              uint64_t header_size);

  uint64_t LaneOffset(uint32_t lane) const { return lane_table_offset + lane * lane_size; }
  uint64_t DescriptorOffset(uint32_t slot) const {
    return descriptor_table_offset + slot * layout::slot::kDescriptorSize;
  }
  uint64_t SlotDataOffset(uint32_t slot) const { return slot_data_offset + slot * slot_size; }
};

}  // namespace sluice
