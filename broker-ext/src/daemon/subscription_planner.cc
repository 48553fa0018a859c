#include "daemon/subscription_planner.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <utility>

#include "ingest/native_fetch_source.h"

namespace sluice::brokerd {
namespace {

using protocol::ErrorCode;

SubscribeRefusal Refuse(ErrorCode code, std::string message) { return {code, std::move(message)}; }

int64_t KafkaStart(protocol::StartPosition start, int64_t offset) {
  switch (start) {
    case protocol::StartPosition::kEarliest:
      return RD_KAFKA_OFFSET_BEGINNING;
    case protocol::StartPosition::kLatest:
      return RD_KAFKA_OFFSET_END;
    case protocol::StartPosition::kOffset:
      return offset;
  }
  return RD_KAFKA_OFFSET_BEGINNING;
}

}  // namespace

std::optional<SubscribeRefusal> SubscriptionPlanner::Admit(const protocol::Subscribe& request,
                                                           const DaemonLoad& load) const {
  if (request.reorder_window_bytes > config_.reorder_window_bytes) {
    return Refuse(ErrorCode::kBadRequest,
                  "reorder_window_bytes = " + std::to_string(request.reorder_window_bytes) +
                      ": above sluice.reorder.window.bytes, " +
                      std::to_string(config_.reorder_window_bytes));
  }
  // slot_count and slot_size are within the format's bounds (docs/formats.md, SUBSCRIBE), so
  // their product does not wrap.
  const uint64_t asked = uint64_t{request.slot_count} * request.slot_size;
  if (asked > limits::kMaxSegmentBytes) {
    return Refuse(ErrorCode::kBadRequest, "slot_count × slot_size = " + std::to_string(asked) +
                                              " bytes: the daemon allows at most " +
                                              std::to_string(limits::kMaxSegmentBytes));
  }
  if (request.local_leaders && !config_.broker_id.has_value()) {
    return Refuse(ErrorCode::kBadRequest,
                  "flags = LOCAL_LEADERS: sluice.broker.id is not configured");
  }
  if (load.subscriptions >= limits::kMaxSubscriptions) {
    return Refuse(ErrorCode::kSubscriptionLimit, "the daemon holds " +
                                                     std::to_string(limits::kMaxSubscriptions) +
                                                     " subscriptions, its limit");
  }
  // Every segment's memory is reserved when it is made (docs/formats.md, "File layout"), so the
  // total is what the segments take of the host's RAM, whatever the readers do with them.
  const uint64_t room = config_.segment_max_total_bytes -
                        std::min(load.segment_bytes, config_.segment_max_total_bytes);
  if (asked > room) {
    return Refuse(ErrorCode::kSubscriptionLimit,
                  "segment folder " + config_.segment_dir +
                      ": slot_count × slot_size = " + std::to_string(asked) + " bytes beside the " +
                      std::to_string(load.segment_bytes) +
                      " of the daemon's segments would exceed sluice.segment.max.total.bytes = " +
                      std::to_string(config_.segment_max_total_bytes));
  }
  return std::nullopt;
}

PlanOutcome SubscriptionPlanner::Plan(const protocol::Subscribe& request, bool read_committed,
                                      PartitionDirectory& kafka) {
  std::variant<std::vector<int32_t>, SubscribeRefusal> partitions = Partitions(request, kafka);
  if (auto* refusal = std::get_if<SubscribeRefusal>(&partitions)) return std::move(*refusal);
  const std::vector<int32_t>& read = std::get<std::vector<int32_t>>(partitions);
  Result<std::map<int32_t, int64_t>> committed = kafka.Committed(request.topic, read);
  if (!committed.ok()) return Refuse(ErrorCode::kInternal, committed.status().message());
  std::map<int32_t, int64_t> starts;
  for (int32_t partition : read) {
    auto entry =
        std::ranges::find(request.partitions, partition, &protocol::PartitionStart::partition);
    if (entry != request.partitions.end()) {
      starts[partition] = KafkaStart(entry->start, entry->offset);
    } else if (auto found = committed->find(partition); found != committed->end()) {
      starts[partition] = found->second;
    } else {
      starts[partition] = KafkaStart(request.default_start, 0);
    }
  }
  return Build(request, read_committed, std::move(starts));
}

std::variant<std::vector<int32_t>, SubscribeRefusal> SubscriptionPlanner::Partitions(
    const protocol::Subscribe& request, PartitionDirectory& kafka) const {
  Result<std::vector<PartitionLeader>> described = kafka.Describe(request.topic);
  if (!described.ok()) {
    const bool unknown = described.status().code() == StatusCode::kInvalidArgument;
    return Refuse(unknown ? ErrorCode::kUnknownTopic : ErrorCode::kInternal,
                  described.status().message());
  }
  std::vector<int32_t> partitions;
  if (request.local_leaders) {
    for (const PartitionLeader& p : *described) {
      if (p.leader == *config_.broker_id) partitions.push_back(p.partition);
    }
    if (partitions.empty()) {
      return Refuse(ErrorCode::kBadRequest, "flags = LOCAL_LEADERS: no partition of " +
                                                request.topic + " has its leader on broker " +
                                                std::to_string(*config_.broker_id));
    }
    return partitions;
  }
  for (const protocol::PartitionStart& entry : request.partitions) {
    const bool exists = std::ranges::any_of(
        *described, [&](const PartitionLeader& p) { return p.partition == entry.partition; });
    if (!exists) {
      return Refuse(ErrorCode::kUnknownTopic, "partitions: topic " + request.topic +
                                                  " has no partition " +
                                                  std::to_string(entry.partition));
    }
    partitions.push_back(entry.partition);
  }
  return partitions;
}

SubscriptionPlan SubscriptionPlanner::Build(const protocol::Subscribe& request, bool read_committed,
                                            std::map<int32_t, int64_t> starts) {
  SubscriptionPlan plan;
  plan.id = TakeId();
  plan.topic = request.topic;
  plan.starts = std::move(starts);
  plan.slot_count = request.slot_count;
  plan.slot_size = request.slot_size;
  plan.segment_dir = config_.segment_dir;
  plan.liveness_timeout = config_.liveness_timeout;
  plan.pause_after = config_.pause_after;
  plan.kafka = config_.kafka;
  plan.native_fetch = request.mode == protocol::Mode::kRecords && config_.native_fetch &&
                      NativeFetchSettings::Applies(config_.kafka);
  plan.own_broker = config_.broker_id;
  plan.read_committed = read_committed;
  if (request.mode == protocol::Mode::kChunkStreams) {
    plan.kind = ObjectKind::kChunks;
    plan.sequencing.window_bytes = request.reorder_window_bytes != 0 ? request.reorder_window_bytes
                                                                     : config_.reorder_window_bytes;
    plan.sequencing.gap_timeout = config_.gap_timeout;
    plan.sequencing.job_filter = request.job_filter;
    for (const protocol::StreamStart& start : request.streams) {
      plan.sequencing.resume.push_back({StreamKey{start.job, start.stream}, start.next_seq});
    }
    plan.dead_letter_topic = config_.dead_letter_topic;
  }
  return plan;
}

}  // namespace sluice::brokerd
