// The daemon's counters and gauges, rendered in the Prometheus text exposition format (0.0.4).
//
// The hot path only touches relaxed atomics; registration and rendering take a lock. Cells live
// as long as the registry, so callers keep plain references to them, except the cells of a
// series removed with RemoveSeries: a subscription's, when it ends (docs/brokerd.md, "Metrics").
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::brokerd {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  void Add(int64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

class Metrics {
 public:
  // The cell of `name` with these labels, created on first use. A name registered as the other
  // type, or a name or label name that Prometheus would not accept, is a programming error, but no
  // daemon thread may see an exception: the registration is refused, logged (metric_refused),
  // counted in sluice_metrics_refused_total, and the caller gets a cell that no scrape shows.
  Counter& counter(std::string_view name, std::string_view help, const Labels& labels = {});
  Gauge& gauge(std::string_view name, std::string_view help, const Labels& labels = {});

  // Removes every series, of any family, that has the label `name` = `value`, so that a
  // scrape's series are bounded by what lives (a subscription's series end with it). References
  // to their cells must not be used again; a later registration makes a fresh cell.
  void RemoveSeries(std::string_view name, std::string_view value);

  std::string Render() const;

 private:
  enum class Type { kCounter, kGauge };
  struct Family {
    Type type;
    std::string help;
    // Keyed by the rendered label set, so one label set is one cell and output is stable.
    std::map<std::string, std::unique_ptr<Counter>> counters;
    std::map<std::string, std::unique_ptr<Gauge>> gauges;
  };
  static constexpr std::string_view kRefusedName = "sluice_metrics_refused_total";

  // Why `name` with `labels` cannot be a series of `type`, empty when it can; mutex_ held.
  std::string Refusal(std::string_view name, Type type, const Labels& labels) const;
  Family& FamilyOf(std::string_view name, std::string_view help, Type type);
  void Refuse(std::string_view name, const std::string& reason);

  mutable std::mutex mutex_;
  std::map<std::string, Family, std::less<>> families_;
  // The cells every refused registration gets: never rendered, so one of each type serves all.
  Counter refused_counter_;
  Gauge refused_gauge_;
};

}  // namespace sluice::brokerd
