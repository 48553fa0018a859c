#include "ingest/commit_tracker.h"

#include <algorithm>
#include <string>

namespace sluice::brokerd {

namespace {

std::string OffsetOf(const OffsetRange& range) {
  return "offset " + std::to_string(range.first_offset) + " of partition " +
         std::to_string(range.partition);
}

}  // namespace

Status CommitTracker::Take(const OffsetRange& range) {
  if (range.last_offset < range.first_offset) {
    return Status::InvalidState("offset range " + std::to_string(range.first_offset) + " to " +
                                std::to_string(range.last_offset) + " of partition " +
                                std::to_string(range.partition) + " ends before it starts");
  }
  auto [it, inserted] =
      partitions_[range.partition].taken.emplace(range.first_offset, range.last_offset);
  if (!inserted) return Status::InvalidState(OffsetOf(range) + " is taken twice");
  return Status::OK();
}

Status CommitTracker::Settle(const OffsetRange& range) {
  Partition& partition = partitions_[range.partition];
  if (partition.taken.erase(range.first_offset) == 0) {
    return Status::InvalidState(OffsetOf(range) + " was not taken");
  }
  partition.settled_end = std::max(partition.settled_end, range.last_offset + 1);
  return Status::OK();
}

Status CommitTracker::Published(uint64_t object_id, std::span<const OffsetRange> ranges) {
  if (!objects_.empty() && object_id <= objects_.rbegin()->first) {
    return Status::InvalidState("object " + std::to_string(object_id) + " published after object " +
                                std::to_string(objects_.rbegin()->first) +
                                ": object ids must increase");
  }
  objects_.emplace(object_id, std::vector<OffsetRange>(ranges.begin(), ranges.end()));
  return Status::OK();
}

Status CommitTracker::ReleasedThrough(uint64_t object_id) {
  auto end = objects_.upper_bound(object_id);
  for (auto it = objects_.begin(); it != end;) {
    for (const OffsetRange& range : it->second) SLUICE_RETURN_NOT_OK(Settle(range));
    it = objects_.erase(it);
  }
  return Status::OK();
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
