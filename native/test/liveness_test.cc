#include "sluice/liveness.h"

#include <gtest/gtest.h>

#include <atomic>

#include "test_util.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

TEST(Liveness, StaleOnlyPastTheTimeout) {
  EXPECT_FALSE(IsStale(1000, 500, 1400));
  EXPECT_FALSE(IsStale(1000, 500, 1500));
  EXPECT_TRUE(IsStale(1000, 500, 1501));
  EXPECT_FALSE(IsStale(2000, 500, 1000));  // a heartbeat from "the future" is fresh
}

TEST(Liveness, MonotonicClockAdvances) {
  const uint64_t first = MonotonicNanos();
  EXPECT_TRUE(testing::Eventually("the monotonic clock to advance",
                                  [&] { return MonotonicNanos() > first; }));
}

TEST(Liveness, HeartbeatStampsUntilDestroyed) {
  alignas(8) uint64_t field = 0;
  auto read = [&] { return std::atomic_ref<uint64_t>(field).load(); };
  {
    Heartbeat heartbeat(&field, 5ms);
    const uint64_t first = read();
    EXPECT_NE(first, 0u);
    EXPECT_TRUE(testing::Eventually("a second stamp", [&] { return read() > first; }));
  }
  const uint64_t last = read();
  const uint64_t stopped_at = MonotonicNanos();
  // Past several intervals the field has not moved: the thread is gone.
  ASSERT_TRUE(testing::Eventually("30 ms past the heartbeat's end",
                                  [&] { return MonotonicNanos() - stopped_at > 30'000'000; }));
  EXPECT_EQ(read(), last);
}

}  // namespace
}  // namespace sluice
