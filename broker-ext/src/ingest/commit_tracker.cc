#include "ingest/commit_tracker.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace sluice::brokerd {

void CommitTracker::Take(const OffsetRange& range) {
  if (range.last_offset < range.first_offset) {
    throw std::invalid_argument("offset range ends before it starts");
  }
  auto [it, inserted] =
      partitions_[range.partition].taken.emplace(range.first_offset, range.last_offset);
  if (!inserted) {
    throw std::invalid_argument("offset " + std::to_string(range.first_offset) + " of partition " +
                                std::to_string(range.partition) + " is taken twice");
  }
}

void CommitTracker::Settle(const OffsetRange& range) {
  Partition& partition = partitions_[range.partition];
  if (partition.taken.erase(range.first_offset) == 0) {
    throw std::invalid_argument("offset " + std::to_string(range.first_offset) + " of partition " +
                                std::to_string(range.partition) + " was not taken");
  }
  partition.settled_end = std::max(partition.settled_end, range.last_offset + 1);
}

void CommitTracker::Published(uint64_t object_id, std::span<const OffsetRange> ranges) {
  if (!objects_.empty() && object_id <= objects_.rbegin()->first) {
    throw std::invalid_argument("object ids must increase");
  }
  objects_.emplace(object_id, std::vector<OffsetRange>(ranges.begin(), ranges.end()));
}

void CommitTracker::ReleasedThrough(uint64_t object_id) {
  auto end = objects_.upper_bound(object_id);
  for (auto it = objects_.begin(); it != end; ++it) {
    for (const OffsetRange& range : it->second) Settle(range);
  }
  objects_.erase(objects_.begin(), end);
}

std::vector<PartitionOffset> CommitTracker::TakeCommittable() {
  std::vector<PartitionOffset> moved;
  for (auto& [number, partition] : partitions_) {
    const int64_t offset =
        partition.taken.empty() ? partition.settled_end : partition.taken.begin()->first;
    if (offset > partition.reported) {
      partition.reported = offset;
      moved.push_back({number, offset});
    }
  }
  return moved;
}

}  // namespace sluice::brokerd
