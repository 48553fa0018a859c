#include "sluice/layout.h"

#include <string>

namespace sluice {

SegmentLayout SegmentLayout::Derive(uint32_t slot_count, uint32_t lane_count, uint64_t slot_size,
                                    uint64_t header_size) {
  SegmentLayout l;
  l.slot_count = slot_count;
  l.lane_count = lane_count;
  l.slot_size = slot_size;
  l.ring_capacity = layout::RingCapacity(slot_count);
  l.lane_size = layout::LaneSize(l.ring_capacity);
  l.header_size = header_size;
  l.lane_table_offset = header_size;
  l.descriptor_table_offset = l.lane_table_offset + lane_count * l.lane_size;
  l.slot_data_offset = layout::AlignUp(
      l.descriptor_table_offset + slot_count * layout::slot::kDescriptorSize, layout::kPageSize);
  l.segment_size = l.slot_data_offset + slot_count * slot_size;
  return l;
}

Result<SegmentLayout> SegmentLayout::Plan(uint32_t slot_count, uint32_t lane_count,
                                          uint64_t slot_size, uint64_t schema_length) {
  if (slot_count < 1 || slot_count > limits::kMaxSlots) {
    return Status::InvalidArgument("slot_count = " + std::to_string(slot_count) +
                                   ": must be 1 to 65536");
  }
  if (lane_count < 1 || lane_count > limits::kMaxLanes) {
    return Status::InvalidArgument("lane_count = " + std::to_string(lane_count) +
                                   ": must be 1 to 31");
  }
  // The upper bound keeps segment_size far from overflow and inside what Java can map per slot.
  if (slot_size < limits::kMinSlotSize || slot_size % limits::kSlotAlignment != 0 ||
      slot_size > limits::kMaxSlotSize) {
    return Status::InvalidArgument("slot_size = " + std::to_string(slot_size) +
                                   ": must be a multiple of 64 from 256 to 2 GiB - 64");
  }
  if (schema_length < 1 || schema_length > (1ull << 20)) {
    return Status::InvalidArgument("schema_length = " + std::to_string(schema_length) +
                                   ": must be 1 to 1 MiB");
  }
  const uint64_t header_size =
      layout::AlignUp(layout::header::kSchema + schema_length, layout::kPageSize);
  return Derive(slot_count, lane_count, slot_size, header_size);
}

}  // namespace sluice
