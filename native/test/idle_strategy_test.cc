#include "sluice/idle_strategy.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

using namespace std::chrono_literals;

TEST(IdleStrategy, SpinsAndYieldsABoundedNumberOfTimesThenParks) {
  IdleStrategy idle({/*spins=*/5, /*yields=*/3, 10us, 1ms});
  int spun = 0;
  int yielded = 0;
  int parks = 0;
  for (int i = 0; i < 1000; ++i) {
    switch (idle.Idle()) {
      case IdleStrategy::Step::kSpun:
        ++spun;
        break;
      case IdleStrategy::Step::kYielded:
        ++yielded;
        break;
      case IdleStrategy::Step::kPark:
        ++parks;
        break;
    }
  }
  EXPECT_EQ(spun, 5);
  EXPECT_EQ(yielded, 3);
  EXPECT_EQ(parks, 992);
}

TEST(IdleStrategy, BackoffDoublesUpToItsCap) {
  IdleStrategy idle({0, 0, 10us, 1ms});
  EXPECT_EQ(idle.NextBackoff(), 10us);
  EXPECT_EQ(idle.NextBackoff(), 20us);
  std::chrono::nanoseconds last{};
  for (int i = 0; i < 50; ++i) last = idle.NextBackoff();
  EXPECT_EQ(last, 1ms);
}

TEST(IdleStrategy, ResetStartsOverFromSpinning) {
  IdleStrategy idle({1, 1, 10us, 1ms});
  idle.Idle();
  idle.Idle();
  EXPECT_EQ(idle.Idle(), IdleStrategy::Step::kPark);
  (void)idle.NextBackoff();
  (void)idle.NextBackoff();
  idle.Reset();
  EXPECT_EQ(idle.Idle(), IdleStrategy::Step::kSpun);
  EXPECT_EQ(idle.NextBackoff(), 10us);
}

}  // namespace
}  // namespace sluice
