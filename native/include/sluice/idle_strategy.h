// How a side that has nothing to do waits: spin a little, then yield the CPU, then park. Both
// phases before parking are bounded, so on a 2-core machine no side burns a core for long. The
// Java twin (client/.../segment/IdleStrategy.java) has the same defaults and steps; the rule both
// follow is docs/architecture.md, "Segment": "Both sides idle alike".
#pragma once

#include <chrono>
#include <cstdint>

#include "sluice/export.h"

namespace sluice {

class SLUICE_EXPORT IdleStrategy {
 public:
  struct Options {
    uint32_t spins = 64;
    uint32_t yields = 16;
    // Parking without a doorbell sleeps from min_backoff, doubling up to max_backoff.
    std::chrono::nanoseconds min_backoff = std::chrono::microseconds(10);
    std::chrono::nanoseconds max_backoff = std::chrono::milliseconds(1);
  };
  enum class Step { kSpun, kYielded, kPark };

  IdleStrategy() = default;
  explicit IdleStrategy(Options options) : options_(options) {}

  // Spins or yields once and says so, or, once both budgets are spent, returns kPark: the caller
  // then parks (sets its waiting flag, checks once more, waits with a bound).
  Step Idle();
  // How long a park without a doorbell sleeps: doubles at every call up to max_backoff.
  std::chrono::nanoseconds NextBackoff();
  // Work arrived: start again from spinning.
  void Reset();

 private:
  Options options_;
  uint32_t spun_ = 0;
  uint32_t yielded_ = 0;
  std::chrono::nanoseconds backoff_{0};
};

}  // namespace sluice
