#include "ingest/commit_tracker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gtest_util.h"

namespace sluice::brokerd {
namespace {

using Offsets = std::vector<PartitionOffset>;

TEST(CommitTracker, NothingIsCommittableBeforeAnyRelease) {
  CommitTracker tracker;
  const OffsetRange range{0, 0, 9};
  ASSERT_OK(tracker.Take(range));
  ASSERT_OK(tracker.Published(0, {&range, 1}));
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{0, 0}}));  // the start, not past it
}

TEST(CommitTracker, ReleasedObjectsMoveTheirPartitionsForward) {
  CommitTracker tracker;
  const std::vector<OffsetRange> first = {{0, 0, 9}, {1, 100, 104}};
  const std::vector<OffsetRange> second = {{0, 10, 19}};
  for (const auto& r : first) ASSERT_OK(tracker.Take(r));
  ASSERT_OK(tracker.Published(7, first));
  for (const auto& r : second) ASSERT_OK(tracker.Take(r));
  ASSERT_OK(tracker.Published(8, second));
  tracker.TakeCommittable();

  ASSERT_OK(tracker.ReleasedThrough(7));
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{0, 10}, {1, 105}}));
  EXPECT_EQ(tracker.outstanding_objects(), 1u);
  ASSERT_OK(tracker.ReleasedThrough(8));
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{0, 20}}));
  EXPECT_TRUE(tracker.TakeCommittable().empty()) << "reported once";
}

TEST(CommitTracker, AnOldWatermarkChangesNothing) {
  CommitTracker tracker;
  const OffsetRange range{0, 0, 0};
  ASSERT_OK(tracker.Take(range));
  ASSERT_OK(tracker.Published(3, {&range, 1}));
  ASSERT_OK(tracker.ReleasedThrough(3));
  tracker.TakeCommittable();
  ASSERT_OK(tracker.ReleasedThrough(2));
  EXPECT_TRUE(tracker.TakeCommittable().empty());
}

TEST(CommitTracker, ARangeHeldOutOfOrderCapsItsPartition) {
  // CHUNK_STREAMS: offset 5 waits in the reorder window while offset 6 is published first.
  CommitTracker tracker;
  const OffsetRange held{0, 5, 5};
  const OffsetRange early{0, 6, 6};
  ASSERT_OK(tracker.Take(held));
  ASSERT_OK(tracker.Take(early));
  ASSERT_OK(tracker.Published(0, {&early, 1}));
  ASSERT_OK(tracker.ReleasedThrough(0));
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{0, 5}}));

  ASSERT_OK(tracker.Published(1, {&held, 1}));
  ASSERT_OK(tracker.ReleasedThrough(1));
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{0, 7}}));
}

TEST(CommitTracker, DroppedRecordsSettleWithoutAnObject) {
  CommitTracker tracker;
  const OffsetRange duplicate{2, 40, 40};
  ASSERT_OK(tracker.Take(duplicate));
  ASSERT_OK(tracker.Settle(duplicate));
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{2, 41}}));
}

// Each misuse is refused naming what was wrong, and the tracker goes on.
TEST(CommitTracker, MisuseIsRefused) {
  CommitTracker tracker;
  ASSERT_OK(tracker.Take({0, 1, 1}));
  EXPECT_RAISES_WITH_MESSAGE(InvalidState, "offset 1 of partition 0 is taken twice",
                             tracker.Take({0, 1, 3}));
  EXPECT_RAISES_WITH_MESSAGE(InvalidState,
                             "offset range 9 to 8 of partition 0 ends before it starts",
                             tracker.Take({0, 9, 8}));
  EXPECT_RAISES_WITH_MESSAGE(InvalidState, "offset 2 of partition 0 was not taken",
                             tracker.Settle({0, 2, 2}));
  ASSERT_OK(tracker.Published(5, {}));
  EXPECT_RAISES_WITH_MESSAGE(InvalidState, "object 5 published after object 5",
                             tracker.Published(5, {}));
  ASSERT_OK(tracker.Settle({0, 1, 1}));
  EXPECT_EQ(tracker.TakeCommittable(), (Offsets{{0, 2}}));
}

}  // namespace
}  // namespace sluice::brokerd
