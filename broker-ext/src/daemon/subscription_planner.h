// How the daemon turns a SUBSCRIBE into a SubscriptionPlan, or refuses it with the code of the
// ERROR the reader is sent (docs/formats.md, "ERROR"; docs/brokerd.md, "Security model" for the
// limits): first the request against the daemon's limits, then its partitions and their start
// offsets against the topic's metadata and the group's committed offsets.
//
// Why a planner of its own: every refusal carries its own code (BAD_REQUEST, SUBSCRIPTION_LIMIT,
// UNKNOWN_TOPIC, INTERNAL) and a message naming what is wrong and what to set, and each is a
// branch that a reader acts on differently. Returning them as a typed outcome keeps the code and
// the message together, and asking Kafka through PartitionDirectory lets every branch be tested
// without a broker (test/subscription_planner_test.cc).
//
// The planner holds the daemon's configuration by reference (it outlives the planner) and numbers
// the plans it makes; a plan owns its copies of what it takes from the request and configuration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "daemon/daemon_config.h"
#include "daemon/subscription.h"
#include "ingest/fetch_session.h"
#include "protocol/messages.h"
#include "sluice/limits.h"
#include "sluice/status.h"

namespace sluice::brokerd {

// A SUBSCRIBE the daemon refuses: the ERROR's code, and its message.
struct SubscribeRefusal {
  protocol::ErrorCode code = protocol::ErrorCode::kInternal;
  std::string message;
};

// What a SUBSCRIBE comes to: a plan to start, or a refusal to send.
using PlanOutcome = std::variant<SubscriptionPlan, SubscribeRefusal>;

// What the daemon holds when a SUBSCRIBE arrives; its limits are on these totals.
struct DaemonLoad {
  size_t subscriptions = 0;
  uint64_t segment_bytes = 0;  // slot bytes of every subscription's segment
};

// The two questions a plan asks Kafka. The daemon answers them through a fetch session's
// librdkafka handle.
class PartitionDirectory {
 public:
  virtual ~PartitionDirectory() = default;
  // The topic's partitions and their leaders; kInvalidArgument when the cluster has no such
  // topic, any other failure the daemon's.
  virtual Result<std::vector<PartitionLeader>> Describe(const std::string& topic) = 0;
  // The group's committed offset of each of `partitions` that has one.
  virtual Result<std::map<int32_t, int64_t>> Committed(const std::string& topic,
                                                       const std::vector<int32_t>& partitions) = 0;
};

class SubscriptionPlanner {
 public:
  explicit SubscriptionPlanner(const DaemonConfig& config) : config_(config) {}

  // The request against the daemon's limits, without asking Kafka: BAD_REQUEST for a reorder
  // window above sluice.reorder.window.bytes, a segment above limits::kMaxSegmentBytes, or
  // LOCAL_LEADERS without sluice.broker.id; SUBSCRIPTION_LIMIT at limits::kMaxSubscriptions, or
  // when the segment does not fit in what sluice.segment.max.total.bytes leaves beside `load`.
  // Nothing: admitted.
  std::optional<SubscribeRefusal> Admit(const protocol::Subscribe& request,
                                        const DaemonLoad& load) const;

  // The plan of an admitted request, as the codec decodes it (naming a partition unless
  // LOCAL_LEADERS), under the next subscription id: its partitions (those it names, or with
  // LOCAL_LEADERS those led by sluice.broker.id), each starting where the request
  // says, else at the group's committed offset, else at the request's default start. Refused
  // with UNKNOWN_TOPIC for a topic or partition the cluster does not have, BAD_REQUEST for
  // LOCAL_LEADERS when no partition is led here, and INTERNAL when Kafka does not answer.
  PlanOutcome Plan(const protocol::Subscribe& request, bool read_committed,
                   PartitionDirectory& kafka);

  // The next id of the counter subscription ids come from, for a local producer: CLOSE names
  // either, so they never meet (docs/formats.md, "PRODUCING").
  uint64_t TakeId() { return next_id_++; }

 private:
  // The partitions the plan reads, or its refusal.
  std::variant<std::vector<int32_t>, SubscribeRefusal> Partitions(
      const protocol::Subscribe& request, PartitionDirectory& kafka) const;
  // The plan of `request` reading from `starts`, with the settings it takes from the
  // configuration.
  SubscriptionPlan Build(const protocol::Subscribe& request, bool read_committed,
                         std::map<int32_t, int64_t> starts);

  const DaemonConfig& config_;
  uint64_t next_id_ = 1;
};

}  // namespace sluice::brokerd
