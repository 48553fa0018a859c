#include "sluice/idle_strategy.h"

#include <algorithm>
#include <thread>

namespace sluice {

IdleStrategy::Step IdleStrategy::Idle() {
  if (spun_ < options_.spins) {
    ++spun_;
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
    return Step::kSpun;
  }
  if (yielded_ < options_.yields) {
    ++yielded_;
    std::this_thread::yield();
    return Step::kYielded;
  }
  return Step::kPark;
}

std::chrono::nanoseconds IdleStrategy::NextBackoff() {
  backoff_ =
      backoff_.count() == 0 ? options_.min_backoff : std::min(backoff_ * 2, options_.max_backoff);
  return std::min(backoff_, options_.max_backoff);
}

void IdleStrategy::Reset() {
  spun_ = 0;
  yielded_ = 0;
  backoff_ = std::chrono::nanoseconds(0);
}

}  // namespace sluice
