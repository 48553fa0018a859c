#include "sluice/liveness.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <ctime>

namespace sluice {

uint64_t MonotonicNanos() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

std::chrono::nanoseconds HeartbeatInterval(uint64_t liveness_timeout_ns) {
  using std::chrono::nanoseconds;
  const auto quarter = static_cast<int64_t>(std::min<uint64_t>(liveness_timeout_ns / 4, INT64_MAX));
  return std::clamp(nanoseconds(quarter), nanoseconds(std::chrono::milliseconds(1)),
                    nanoseconds(std::chrono::seconds(1)));
}

Heartbeat::Heartbeat(uint64_t* field, std::chrono::nanoseconds interval)
    : field_(field), interval_(interval) {
  std::atomic_ref<uint64_t>(*field_).store(MonotonicNanos(), std::memory_order_release);
  thread_ = std::thread([this] { Run(); });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_requested_.notify_one();
  thread_.join();
}

void Heartbeat::Run() {
  std::unique_lock lock(mutex_);
  while (!stop_requested_.wait_for(lock, interval_, [this] { return stopping_; })) {
    std::atomic_ref<uint64_t>(*field_).store(MonotonicNanos(), std::memory_order_release);
  }
}

}  // namespace sluice
