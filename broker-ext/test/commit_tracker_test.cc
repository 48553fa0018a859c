#include "ingest/commit_tracker.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace sluice::brokerd {
namespace {

using Offsets = std::vector<PartitionOffset>;

TEST(CommitTracker, NothingIsCommittableBeforeAnyRelease) {
  CommitTracker tracker;
  const OffsetRange range{0, 0, 9};
  tracker.Take(range);
  tracker.Published(0, {&range, 1});
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{0, 0}}));  // the start, not past it
}

TEST(CommitTracker, ReleasedObjectsMoveTheirPartitionsForward) {
  CommitTracker tracker;
  const std::vector<OffsetRange> first = {{0, 0, 9}, {1, 100, 104}};
  const std::vector<OffsetRange> second = {{0, 10, 19}};
  for (const auto& r : first) tracker.Take(r);
  tracker.Published(7, first);
  for (const auto& r : second) tracker.Take(r);
  tracker.Published(8, second);
  tracker.TakeCommittable();

  tracker.ReleasedThrough(7);
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{0, 10}, {1, 105}}));
  EXPECT_EQ(tracker.outstanding_objects(), 1u);
  tracker.ReleasedThrough(8);
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{0, 20}}));
  EXPECT_TRUE(tracker.TakeCommittable().empty()) << "reported once";
}

TEST(CommitTracker, AnOldWatermarkChangesNothing) {
  CommitTracker tracker;
  const OffsetRange range{0, 0, 0};
  tracker.Take(range);
  tracker.Published(3, {&range, 1});
  tracker.ReleasedThrough(3);
  tracker.TakeCommittable();
  tracker.ReleasedThrough(2);
  EXPECT_TRUE(tracker.TakeCommittable().empty());
}

TEST(CommitTracker, ARangeHeldOutOfOrderCapsItsPartition) {
  // CHUNK_STREAMS: offset 5 waits in the reorder window while offset 6 is published first.
  CommitTracker tracker;
  const OffsetRange held{0, 5, 5};
  const OffsetRange early{0, 6, 6};
  tracker.Take(held);
  tracker.Take(early);
  tracker.Published(0, {&early, 1});
  tracker.ReleasedThrough(0);
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{0, 5}}));

  tracker.Published(1, {&held, 1});
  tracker.ReleasedThrough(1);
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{0, 7}}));
}

TEST(CommitTracker, DroppedRecordsSettleWithoutAnObject) {
  CommitTracker tracker;
  const OffsetRange duplicate{2, 40, 40};
  tracker.Take(duplicate);
  tracker.Settle(duplicate);
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{2, 41}}));
}

TEST(CommitTracker, MisuseIsRefused) {
  CommitTracker tracker;
  tracker.Take({0, 1, 1});
  EXPECT_THROW(tracker.Take({0, 1, 3}), std::invalid_argument);
  EXPECT_THROW(tracker.Take({0, 9, 8}), std::invalid_argument);
  EXPECT_THROW(tracker.Settle({0, 2, 2}), std::invalid_argument);
  tracker.Published(5, {});
  EXPECT_THROW(tracker.Published(5, {}), std::invalid_argument);
}

}  // namespace
}  // namespace sluice::brokerd
