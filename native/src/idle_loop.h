// The wait both sides run when they have nothing to do: spin, yield, then park with a bound.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "sluice/idle_strategy.h"
#include "sluice/liveness.h"

namespace sluice::internal {

// The instant `timeout` from now, saturating (a timeout of nanoseconds::max() never expires).
inline uint64_t DeadlineAfter(std::chrono::nanoseconds timeout) {
  const uint64_t now = MonotonicNanos();
  if (timeout.count() <= 0) return now;
  const auto span = static_cast<uint64_t>(timeout.count());
  return span > UINT64_MAX - now ? UINT64_MAX : now + span;
}

// Waits for `ready()` until `deadline`; returns whether it holds. `park(wait)` parks for at most
// `wait` (the caller sets its waiting flag, checks once more, waits on its doorbell, or sleeps
// `backoff` without one); `poll()` runs at every round before parking (liveness checks) and may
// stop the wait by returning false. Parks last at most `max_park`.
template <typename Ready, typename Park>
bool IdleUntil(IdleStrategy& idle, uint64_t deadline, std::chrono::nanoseconds max_park,
               Ready ready, Park park) {
  for (;;) {
    if (ready()) return true;
    const uint64_t now = MonotonicNanos();
    if (now >= deadline) return false;
    if (idle.Idle() != IdleStrategy::Step::kPark) continue;
    const auto left = std::chrono::nanoseconds(static_cast<int64_t>(
        std::min<uint64_t>(deadline - now, static_cast<uint64_t>(max_park.count()))));
    park(left);
  }
}

}  // namespace sluice::internal
