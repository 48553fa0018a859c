// Liveness: both sides stamp a CLOCK_MONOTONIC heartbeat into the segment, which every process
// under one kernel reads the same, so each can tell whether the other is still there.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "sluice/export.h"

namespace sluice {

// CLOCK_MONOTONIC in nanoseconds, the clock of every time field in a segment.
SLUICE_EXPORT uint64_t MonotonicNanos();

// True when a heartbeat stamped at `heartbeat_ns` is older than `timeout_ns` at `now_ns`.
constexpr bool IsStale(uint64_t heartbeat_ns, uint64_t timeout_ns, uint64_t now_ns) {
  return now_ns > heartbeat_ns && now_ns - heartbeat_ns > timeout_ns;
}

// How often a side stamps its heartbeat, and the longest it parks, for a segment's liveness
// timeout: a quarter of it, kept within [1 ms, 1 s] so that neither turns into a busy loop or a
// wait too long to notice anything.
SLUICE_EXPORT std::chrono::nanoseconds HeartbeatInterval(uint64_t liveness_timeout_ns);

// Stamps MonotonicNanos() into a 64-bit atomic field of the mapping every `interval`, from its
// own thread, so a side that is busy elsewhere (or blocked in the application) is not taken for
// dead. Stops, and stops stamping, when destroyed.
class SLUICE_EXPORT Heartbeat {
 public:
  Heartbeat(uint64_t* field, std::chrono::nanoseconds interval);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  void Run();

  uint64_t* field_;
  std::chrono::nanoseconds interval_;
  std::mutex mutex_;
  std::condition_variable stop_requested_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sluice
