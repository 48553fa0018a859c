// Which Kafka offsets may be committed: only those of records the daemon no longer holds
// (docs/brokerd.md, "How it works": a committed offset only covers records whose objects were
// released).
//
// A record range is *taken* when the daemon becomes responsible for it (consumed into a chunk
// reorder window, or sealed into an object) and *settled* when it is done with it: its object
// released by the readers, or the record dropped as a duplicate or sent to the dead-letter
// topic. Ranges settle out of offset order (CHUNK_STREAMS mode hands chunks on in `seq` order,
// not offset order), so a partition's committable offset is the start of its oldest range still
// taken, or one past the last offset settled when none is.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "sluice/status.h"

namespace sluice::brokerd {

struct OffsetRange {
  int32_t partition;
  int64_t first_offset;
  int64_t last_offset;
};

struct PartitionOffset {
  int32_t partition;
  int64_t offset;  // the next offset to consume, as Kafka commits it
  bool operator==(const PartitionOffset&) const = default;
};

// A call out of that order (a range taken twice or settled untaken, an object id that does not
// increase) is refused with kInvalidState: a bug of the caller's, which ends the subscription
// with that error rather than committing an offset the tracker can no longer vouch for.
class CommitTracker {
 public:
  Status Take(const OffsetRange& range);
  Status Settle(const OffsetRange& range);

  // Objects: `object_id` holds these taken ranges; ids increase from one call to the next.
  Status Published(uint64_t object_id, std::span<const OffsetRange> ranges);
  // Readers release objects through a watermark: every object up to `object_id` settles. A
  // watermark below an earlier one changes nothing.
  Status ReleasedThrough(uint64_t object_id);

  // The partitions whose committable offset moved since the last call, with that offset.
  std::vector<PartitionOffset> TakeCommittable();

  size_t outstanding_objects() const { return objects_.size(); }

 private:
  struct Partition {
    std::map<int64_t, int64_t> taken;  // first offset -> last offset
    int64_t settled_end = -1;          // one past the highest offset settled; -1: none yet
    int64_t reported = -1;
  };
  std::map<int32_t, Partition> partitions_;
  std::map<uint64_t, std::vector<OffsetRange>> objects_;
};

}  // namespace sluice::brokerd
