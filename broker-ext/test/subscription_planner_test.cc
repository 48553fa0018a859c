// SubscriptionPlanner on every outcome of a SUBSCRIBE: each limit refused with its code and a
// message naming the setting, at and just past its bound; the topic's partitions and their
// starts resolved through a scripted PartitionDirectory (the daemon's answers through librdkafka
// are the process tests'), each of its failures refused with its code; and the plan's settings.
#include "daemon/subscription_planner.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <map>
#include <string>
#include <vector>

#include "gtest_util.h"
#include "mentions.h"

namespace sluice::brokerd {
namespace {

using namespace std::chrono_literals;
using protocol::ErrorCode;
using protocol::PartitionStart;
using protocol::StartPosition;

// Answers as scripted, and keeps what it was asked.
class ScriptedDirectory final : public PartitionDirectory {
 public:
  Result<std::vector<PartitionLeader>> described = std::vector<PartitionLeader>{};
  Result<std::map<int32_t, int64_t>> committed = std::map<int32_t, int64_t>{};
  std::vector<std::string> described_topics;
  std::vector<std::vector<int32_t>> committed_asked;

  Result<std::vector<PartitionLeader>> Describe(const std::string& topic) override {
    described_topics.push_back(topic);
    return described;
  }
  Result<std::map<int32_t, int64_t>> Committed(const std::string& topic,
                                               const std::vector<int32_t>& partitions) override {
    EXPECT_EQ(topic, "orders");
    committed_asked.push_back(partitions);
    return committed;
  }
};

class SubscriptionPlannerTest : public ::testing::Test {
 protected:
  SubscriptionPlannerTest() {
    config_.segment_dir = "/dev/shm/sluice-test";
    config_.segment_max_total_bytes = 64ull << 20;
    config_.reorder_window_bytes = 8ull << 20;
    // Partitions 0 to 2 led by broker 1, partition 3 by broker 2.
    kafka_.described = std::vector<PartitionLeader>{{0, 1}, {1, 1}, {2, 1}, {3, 2}};
  }

  // 4 slots of 1 MiB from partition 0.
  static protocol::Subscribe Request() {
    protocol::Subscribe request;
    request.topic = "orders";
    request.slot_count = 4;
    request.slot_size = 1 << 20;
    request.partitions = {{.partition = 0, .start = StartPosition::kEarliest, .offset = 0}};
    return request;
  }

  std::optional<SubscribeRefusal> Admit(const protocol::Subscribe& request, DaemonLoad load = {}) {
    return SubscriptionPlanner(config_).Admit(request, load);
  }

  // The refusal the request comes to, failing the test when it is planned.
  SubscribeRefusal Refusal(SubscriptionPlanner& planner, const protocol::Subscribe& request) {
    PlanOutcome outcome = planner.Plan(request, true, kafka_);
    const auto* refusal = std::get_if<SubscribeRefusal>(&outcome);
    if (refusal == nullptr) {
      ADD_FAILURE() << "planned subscription " << std::get<SubscriptionPlan>(outcome).id;
      return {};
    }
    return *refusal;
  }

  // The plan the request comes to, failing the test when it is refused.
  SubscriptionPlan Planned(SubscriptionPlanner& planner, const protocol::Subscribe& request,
                           bool read_committed = true) {
    PlanOutcome outcome = planner.Plan(request, read_committed, kafka_);
    if (const auto* refusal = std::get_if<SubscribeRefusal>(&outcome)) {
      ADD_FAILURE() << "refused with code " << static_cast<int>(refusal->code) << ": "
                    << refusal->message;
      return {};
    }
    return std::get<SubscriptionPlan>(outcome);
  }

  DaemonConfig config_;
  ScriptedDirectory kafka_;
};

// ---- Admit: the daemon's limits ----

TEST_F(SubscriptionPlannerTest, RequestWithinEveryLimitIsAdmitted) {
  EXPECT_EQ(Admit(Request(), {.subscriptions = 3, .segment_bytes = 10 << 20}), std::nullopt);
}

TEST_F(SubscriptionPlannerTest, ReorderWindowAboveTheDaemonsIsABadRequest) {
  protocol::Subscribe request = Request();
  request.reorder_window_bytes = config_.reorder_window_bytes;
  EXPECT_EQ(Admit(request), std::nullopt);
  request.reorder_window_bytes = config_.reorder_window_bytes + 1;
  std::optional<SubscribeRefusal> refusal = Admit(request);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->code, ErrorCode::kBadRequest);
  EXPECT_TRUE(Mentions(refusal->message, "reorder_window_bytes = 8388609"));
  EXPECT_TRUE(Mentions(refusal->message, "sluice.reorder.window.bytes, 8388608"));
}

TEST_F(SubscriptionPlannerTest, SegmentAboveFourGibibytesIsABadRequest) {
  config_.segment_max_total_bytes = 16ull << 30;
  protocol::Subscribe request = Request();
  request.slot_size = 1 << 30;
  request.slot_count = 4;
  EXPECT_EQ(Admit(request), std::nullopt);
  request.slot_count = 5;
  std::optional<SubscribeRefusal> refusal = Admit(request);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->code, ErrorCode::kBadRequest);
  EXPECT_TRUE(Mentions(refusal->message, "slot_count × slot_size = 5368709120 bytes"));
  EXPECT_TRUE(Mentions(refusal->message, "at most 4294967296"));
}

TEST_F(SubscriptionPlannerTest, LocalLeadersWithoutABrokerIdIsABadRequest) {
  protocol::Subscribe request = Request();
  request.local_leaders = true;
  std::optional<SubscribeRefusal> refusal = Admit(request);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->code, ErrorCode::kBadRequest);
  EXPECT_TRUE(Mentions(refusal->message, "LOCAL_LEADERS: sluice.broker.id is not configured"));
  config_.broker_id = 1;
  EXPECT_EQ(Admit(request), std::nullopt);
}

TEST_F(SubscriptionPlannerTest, TheDaemonsSubscriptionCountIsALimit) {
  const size_t limit = limits::kMaxSubscriptions;
  EXPECT_EQ(Admit(Request(), {.subscriptions = limit - 1}), std::nullopt);
  std::optional<SubscribeRefusal> refusal = Admit(Request(), {.subscriptions = limit});
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->code, ErrorCode::kSubscriptionLimit);
  EXPECT_TRUE(Mentions(refusal->message, "the daemon holds 256 subscriptions, its limit"));
}

TEST_F(SubscriptionPlannerTest, SegmentsBeyondTheirTotalAreALimit) {
  // 4 MiB asked: fits beside 60 MiB of the 64, not beside one byte more.
  EXPECT_EQ(Admit(Request(), {.segment_bytes = 60 << 20}), std::nullopt);
  std::optional<SubscribeRefusal> refusal = Admit(Request(), {.segment_bytes = (60 << 20) + 1});
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->code, ErrorCode::kSubscriptionLimit);
  EXPECT_TRUE(Mentions(refusal->message, "segment folder /dev/shm/sluice-test"));
  EXPECT_TRUE(Mentions(refusal->message, "4194304 bytes beside the 62914561"));
  EXPECT_TRUE(Mentions(refusal->message, "sluice.segment.max.total.bytes = 67108864"));
  // Segments above the total already (the setting lowered): no room at all, not a wrapped one.
  refusal = Admit(Request(), {.segment_bytes = 65 << 20});
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->code, ErrorCode::kSubscriptionLimit);
}

TEST_F(SubscriptionPlannerTest, TheFirstLimitBrokenIsTheOneNamed) {
  protocol::Subscribe request = Request();
  request.reorder_window_bytes = config_.reorder_window_bytes + 1;
  std::optional<SubscribeRefusal> refusal =
      Admit(request, {.subscriptions = limits::kMaxSubscriptions});
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->code, ErrorCode::kBadRequest);
  EXPECT_TRUE(Mentions(refusal->message, "reorder_window_bytes"));
}

// ---- Plan: partitions and starts ----

TEST_F(SubscriptionPlannerTest, TopicTheClusterDoesNotHaveIsAnUnknownTopic) {
  kafka_.described = Status::InvalidArgument("topic orders: Broker: Unknown topic or partition");
  SubscriptionPlanner planner(config_);
  const SubscribeRefusal refusal = Refusal(planner, Request());
  EXPECT_EQ(refusal.code, ErrorCode::kUnknownTopic);
  EXPECT_EQ(refusal.message, "topic orders: Broker: Unknown topic or partition");
  EXPECT_EQ(kafka_.described_topics, (std::vector<std::string>{"orders"}));
  EXPECT_TRUE(kafka_.committed_asked.empty());
}

TEST_F(SubscriptionPlannerTest, MetadataThatFailsOtherwiseIsInternal) {
  kafka_.described = Status(StatusCode::kIoError, "metadata of orders: Local: Timed out");
  SubscriptionPlanner planner(config_);
  const SubscribeRefusal refusal = Refusal(planner, Request());
  EXPECT_EQ(refusal.code, ErrorCode::kInternal);
  EXPECT_EQ(refusal.message, "metadata of orders: Local: Timed out");
}

TEST_F(SubscriptionPlannerTest, PartitionTheTopicDoesNotHaveIsAnUnknownTopic) {
  protocol::Subscribe request = Request();
  request.partitions = {{.partition = 3}, {.partition = 4}};
  SubscriptionPlanner planner(config_);
  const SubscribeRefusal refusal = Refusal(planner, request);
  EXPECT_EQ(refusal.code, ErrorCode::kUnknownTopic);
  EXPECT_EQ(refusal.message, "partitions: topic orders has no partition 4");
  EXPECT_TRUE(kafka_.committed_asked.empty());
}

TEST_F(SubscriptionPlannerTest, LocalLeadersWithNoPartitionLedHereIsABadRequest) {
  config_.broker_id = 7;
  protocol::Subscribe request = Request();
  request.local_leaders = true;
  request.partitions.clear();
  SubscriptionPlanner planner(config_);
  const SubscribeRefusal refusal = Refusal(planner, request);
  EXPECT_EQ(refusal.code, ErrorCode::kBadRequest);
  EXPECT_EQ(refusal.message,
            "flags = LOCAL_LEADERS: no partition of orders has its leader on broker 7");
}

TEST_F(SubscriptionPlannerTest, CommittedOffsetsThatFailAreInternal) {
  kafka_.committed = Status(StatusCode::kIoError, "committed offsets of group g: Timed out");
  SubscriptionPlanner planner(config_);
  const SubscribeRefusal refusal = Refusal(planner, Request());
  EXPECT_EQ(refusal.code, ErrorCode::kInternal);
  EXPECT_EQ(refusal.message, "committed offsets of group g: Timed out");
}

TEST_F(SubscriptionPlannerTest, NamedPartitionsStartWhereTheRequestSays) {
  protocol::Subscribe request = Request();
  request.partitions = {{.partition = 2, .start = StartPosition::kOffset, .offset = 42},
                        {.partition = 0, .start = StartPosition::kEarliest, .offset = 9},
                        {.partition = 3, .start = StartPosition::kLatest, .offset = 9}};
  // A committed offset does not override a start the request names.
  kafka_.committed = std::map<int32_t, int64_t>{{2, 100}, {0, 100}};
  SubscriptionPlanner planner(config_);
  const SubscriptionPlan plan = Planned(planner, request);
  EXPECT_EQ(plan.topic, "orders");
  EXPECT_EQ(plan.starts, (std::map<int32_t, int64_t>{
                             {0, RD_KAFKA_OFFSET_BEGINNING}, {2, 42}, {3, RD_KAFKA_OFFSET_END}}));
  EXPECT_EQ(kafka_.committed_asked, (std::vector<std::vector<int32_t>>{{2, 0, 3}}));
}

TEST_F(SubscriptionPlannerTest, LocalLeadersReadThePartitionsLedHere) {
  config_.broker_id = 1;
  protocol::Subscribe request = Request();
  request.local_leaders = true;
  request.default_start = StartPosition::kLatest;
  // Partition 0 named, 1 committed, 2 neither: the default start. Partition 3 is led elsewhere,
  // whatever the request names.
  request.partitions = {{.partition = 0, .start = StartPosition::kOffset, .offset = 5},
                        {.partition = 3, .start = StartPosition::kOffset, .offset = 6}};
  kafka_.committed = std::map<int32_t, int64_t>{{1, 100}, {3, 300}};
  SubscriptionPlanner planner(config_);
  const SubscriptionPlan plan = Planned(planner, request);
  EXPECT_EQ(plan.starts, (std::map<int32_t, int64_t>{{0, 5}, {1, 100}, {2, RD_KAFKA_OFFSET_END}}));
  EXPECT_EQ(kafka_.committed_asked, (std::vector<std::vector<int32_t>>{{0, 1, 2}}));
}

TEST_F(SubscriptionPlannerTest, PlansAreNumberedAndARefusalTakesNoNumber) {
  SubscriptionPlanner planner(config_);
  EXPECT_EQ(Planned(planner, Request()).id, 1u);
  protocol::Subscribe unknown = Request();
  unknown.partitions = {{.partition = 9}};
  EXPECT_EQ(Refusal(planner, unknown).code, ErrorCode::kUnknownTopic);
  EXPECT_EQ(Planned(planner, Request()).id, 2u);
}

// ---- Plan: the settings a plan takes ----

TEST_F(SubscriptionPlannerTest, RecordsPlanTakesTheDaemonsSettings) {
  config_.liveness_timeout = 7s;
  config_.pause_after = 250ms;
  config_.kafka = {{"bootstrap.servers", "localhost:9092"}};
  SubscriptionPlanner planner(config_);
  const SubscriptionPlan plan = Planned(planner, Request(), /*read_committed=*/false);
  EXPECT_EQ(plan.kind, ObjectKind::kRecords);
  EXPECT_EQ(plan.slot_count, 4u);
  EXPECT_EQ(plan.slot_size, 1u << 20);
  EXPECT_EQ(plan.segment_dir, "/dev/shm/sluice-test");
  EXPECT_EQ(plan.liveness_timeout, 7s);
  EXPECT_EQ(plan.pause_after, 250ms);
  EXPECT_EQ(plan.kafka, config_.kafka);
  EXPECT_FALSE(plan.read_committed);
  EXPECT_TRUE(plan.native_fetch);
  EXPECT_EQ(plan.dead_letter_topic, std::nullopt);
}

TEST_F(SubscriptionPlannerTest, NativeFetchOnlyWhereItApplies) {
  config_.native_fetch = false;
  SubscriptionPlanner librdkafka(config_);
  EXPECT_FALSE(Planned(librdkafka, Request()).native_fetch);
  config_.native_fetch = true;
  config_.kafka = {{"security.protocol", "SSL"}};
  SubscriptionPlanner tls(config_);
  EXPECT_FALSE(Planned(tls, Request()).native_fetch);
}

TEST_F(SubscriptionPlannerTest, ChunkStreamsPlanTakesTheSequencingSettings) {
  config_.gap_timeout = 9s;
  config_.dead_letter_topic = "orders-dead";
  protocol::Subscribe request = Request();
  request.mode = protocol::Mode::kChunkStreams;
  request.job_filter = "job-1";
  request.streams = {{.job = "job-1", .stream = "s0", .next_seq = 12},
                     {.job = "job-1", .stream = "s1", .next_seq = 3}};
  SubscriptionPlanner planner(config_);
  const SubscriptionPlan plan = Planned(planner, request);
  EXPECT_EQ(plan.kind, ObjectKind::kChunks);
  EXPECT_FALSE(plan.native_fetch);  // chunk streams go through librdkafka
  EXPECT_EQ(plan.sequencing.window_bytes, config_.reorder_window_bytes);  // 0: the daemon's
  EXPECT_EQ(plan.sequencing.gap_timeout, 9s);
  EXPECT_EQ(plan.sequencing.job_filter, "job-1");
  ASSERT_EQ(plan.sequencing.resume.size(), 2u);
  EXPECT_EQ(plan.sequencing.resume[0].first, (StreamKey{"job-1", "s0"}));
  EXPECT_EQ(plan.sequencing.resume[0].second, 12u);
  EXPECT_EQ(plan.sequencing.resume[1].first, (StreamKey{"job-1", "s1"}));
  EXPECT_EQ(plan.sequencing.resume[1].second, 3u);
  EXPECT_EQ(plan.dead_letter_topic, "orders-dead");

  request.reorder_window_bytes = 1 << 20;
  EXPECT_EQ(Planned(planner, request).sequencing.window_bytes, 1u << 20);
}

}  // namespace
}  // namespace sluice::brokerd
