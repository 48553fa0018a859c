#include "daemon/metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sluice::brokerd {
namespace {

TEST(Metrics, RendersTheExpositionFormat) {
  Metrics metrics;
  metrics.counter("sluice_records_in_total", "Records consumed.", {{"topic", "t"}}).Add(3);
  metrics.counter("sluice_records_in_total", "Records consumed.", {{"topic", "u"}}).Add();
  metrics.gauge("sluice_free_slots", "Free slots.\nPer segment.").Set(-2);
  EXPECT_EQ(metrics.Render(),
            "# HELP sluice_free_slots Free slots.\\nPer segment.\n"
            "# TYPE sluice_free_slots gauge\n"
            "sluice_free_slots -2\n"
            "# HELP sluice_records_in_total Records consumed.\n"
            "# TYPE sluice_records_in_total counter\n"
            "sluice_records_in_total{topic=\"t\"} 3\n"
            "sluice_records_in_total{topic=\"u\"} 1\n");
}

TEST(Metrics, OneLabelSetIsOneCell) {
  Metrics metrics;
  Counter& a = metrics.counter("c", "h", {{"kind", "x"}});
  Counter& b = metrics.counter("c", "h", {{"kind", "x"}});
  EXPECT_EQ(&a, &b);
}

TEST(Metrics, LabelValuesAreEscaped) {
  Metrics metrics;
  metrics.counter("c", "h", {{"topic", "a\"b\\c\nd"}}).Add();
  EXPECT_NE(metrics.Render().find("c{topic=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos)
      << metrics.Render();
}

// A subscription's series end with it (docs/brokerd.md, "Metrics"): however many came and went,
// a scrape shows the live ones only.
TEST(Metrics, RemovingALabelsSeriesKeepsTheScrapeBoundedByWhatLives) {
  Metrics metrics;
  Counter& total = metrics.counter("sluice_records_out_total", "h", {{"topic", "t"}});
  for (int id = 1; id <= 1000; ++id) {
    const std::string subscription = std::to_string(id);
    metrics.gauge("sluice_free_slots", "h", {{"subscription", subscription}}).Set(8);
    metrics.gauge("sluice_subscription_lag", "h", {{"subscription", subscription}, {"topic", "t"}})
        .Set(id);
    total.Add(10);
    if (id != 1000) metrics.RemoveSeries("subscription", subscription);
  }
  EXPECT_EQ(metrics.Render(),
            "# HELP sluice_free_slots h\n"
            "# TYPE sluice_free_slots gauge\n"
            "sluice_free_slots{subscription=\"1000\"} 8\n"
            "# HELP sluice_records_out_total h\n"
            "# TYPE sluice_records_out_total counter\n"
            "sluice_records_out_total{topic=\"t\"} 10000\n"
            "# HELP sluice_subscription_lag h\n"
            "# TYPE sluice_subscription_lag gauge\n"
            "sluice_subscription_lag{subscription=\"1000\",topic=\"t\"} 1000\n");
}

TEST(Metrics, RemoveSeriesMatchesWholeLabelsOnly) {
  Metrics metrics;
  metrics.gauge("g", "h", {{"subscription", "1"}}).Set(1);
  metrics.gauge("g", "h", {{"subscription", "10"}}).Set(10);
  metrics.gauge("g", "h", {{"other_subscription", "1"}}).Set(2);
  metrics.gauge("g", "h", {{"topic", "subscription=\"1\""}}).Set(3);
  metrics.RemoveSeries("subscription", "1");
  const std::string text = metrics.Render();
  EXPECT_EQ(text.find("g{subscription=\"1\"}"), std::string::npos) << text;
  EXPECT_NE(text.find("g{subscription=\"10\"} 10\n"), std::string::npos) << text;
  EXPECT_NE(text.find("g{other_subscription=\"1\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("} 3\n"), std::string::npos) << text;
  // A removed series registered again starts afresh.
  EXPECT_EQ(metrics.gauge("g", "h", {{"subscription", "1"}}).value(), 0);
}

bool Contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// No exception: the registration is refused, logged and counted, and its cell is never scraped.
TEST(Metrics, InvalidNamesAndTypeClashesAreRefusedLoggedAndCounted) {
  Metrics metrics;
  metrics.counter("ok_total", "h").Add(2);
  ::testing::internal::CaptureStderr();
  metrics.gauge("ok_total", "h").Set(7);
  metrics.counter("9lives", "h").Add();
  metrics.counter("has-dash", "h").Add();
  metrics.counter("c", "h", {{"__reserved", "v"}}).Add();
  metrics.gauge("g", "h", {{"a:b", "v"}}).Set(1);
  const std::string logged = ::testing::internal::GetCapturedStderr();
  EXPECT_PRED2(Contains, logged,
               "event=metric_refused name=ok_total reason=\"registered as the other type\"");
  EXPECT_PRED2(Contains, logged, "name=9lives reason=\"invalid metric name\"");
  EXPECT_PRED2(Contains, logged, "name=c reason=\"invalid label name __reserved\"");
  EXPECT_PRED2(Contains, logged, "name=g reason=\"invalid label name a:b\"");

  const std::string scraped = metrics.Render();
  EXPECT_PRED2(Contains, scraped, "\nok_total 2\n");
  EXPECT_PRED2(Contains, scraped, "\nsluice_metrics_refused_total 5\n");
  for (const char* refused : {"ok_total 7", "9lives", "has-dash", "__reserved", "a:b", "\ng "}) {
    EXPECT_FALSE(Contains(scraped, refused)) << scraped;
  }
}

TEST(Metrics, ConcurrentAddsAreAllCounted) {
  Metrics metrics;
  Counter& counter = metrics.counter("c", "h");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) counter.Add();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(counter.value(), 40000u);
}

}  // namespace
}  // namespace sluice::brokerd
