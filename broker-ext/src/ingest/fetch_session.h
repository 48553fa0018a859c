// One librdkafka consumer shared by the subscriptions of one consumer group and one isolation
// level, so that the readers of a host cost the broker one fetch session, not one each
// (docs/flink-source.md, "One subscription per TaskManager, shared"). The level is the consumer's,
// so subscriptions that read committed records only and those that read every record do not share
// one (docs/formats.md, SUBSCRIBE's READ_UNCOMMITTED).
//
// Each subscription gets its partitions' messages on a queue of its own: librdkafka forwards the
// partition queues there, so subscriptions are fed, paused and resumed independently while the
// consumer fetches for all of them at once. A partition is in at most one subscription of a
// session; a second subscription wanting it gets a session of its own.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sluice/status.h"

namespace sluice::brokerd {

using KafkaSettings = std::vector<std::pair<std::string, std::string>>;

// The isolation level `settings` give: librdkafka's isolation.level, read_committed by default.
bool ReadsCommitted(const KafkaSettings& settings);

struct PartitionLeader {
  int32_t partition;
  int32_t leader;  // a broker id, -1 without one
};

// Who serves a topic's partitions, for the native fetch path: each partition's leader and
// in-sync replicas, and the address of every broker, followers included, since a rack-aware
// reader may be sent to a follower, or read the one on its host (KIP-392, docs/brokerd.md "Rack
// awareness").
struct TopicLeaders {
  std::map<int32_t, int32_t> leaders;  // partition -> its leader's broker id, when it has one
  std::map<int32_t, std::vector<int32_t>> in_sync;  // partition -> its in-sync replicas
  std::map<int32_t, std::string> brokers;           // broker id -> host:port
};

class FetchSession {
 public:
  // `group_id` empty: offsets are neither read from nor committed to any group.
  // `read_committed` is the consumer's isolation.level, whatever `settings` say.
  static Result<std::unique_ptr<FetchSession>> Create(const KafkaSettings& settings,
                                                      const std::string& group_id,
                                                      bool read_committed);
  ~FetchSession();
  FetchSession(const FetchSession&) = delete;
  FetchSession& operator=(const FetchSession&) = delete;

  rd_kafka_t* consumer() const { return consumer_; }
  const std::string& group_id() const { return group_id_; }
  bool read_committed() const { return read_committed_; }

  // The topic's partitions and their leaders, from cluster metadata; kInvalidArgument when the
  // cluster has no such topic.
  Result<std::vector<PartitionLeader>> Describe(const std::string& topic,
                                                std::chrono::milliseconds timeout) const;
  // The group's committed offset of each partition that has one.
  Result<std::map<int32_t, int64_t>> Committed(const std::string& topic,
                                               const std::vector<int32_t>& partitions,
                                               std::chrono::milliseconds timeout) const;

  // Each partition's leader and in-sync replicas and every broker's address, from cluster
  // metadata.
  Result<TopicLeaders> LeaderAddresses(const std::string& topic,
                                       std::chrono::milliseconds timeout) const;
  // The partition's low and high watermarks, asked of its leader.
  Result<std::pair<int64_t, int64_t>> Watermarks(const std::string& topic, int32_t partition,
                                                 std::chrono::milliseconds timeout) const;

  // Whether none of `partitions` of `topic` is assigned or claimed yet.
  bool CanTake(const std::string& topic, const std::vector<int32_t>& partitions) const;
  // Routes the partitions to `queue`, then adds them to the assignment, each starting at its
  // offset (an offset, or RD_KAFKA_OFFSET_BEGINNING / _END).
  Status Assign(const std::string& topic, const std::map<int32_t, int64_t>& starts,
                rd_kafka_queue_t* queue);
  Status Unassign(const std::string& topic, const std::vector<int32_t>& partitions);
  // Marks the partitions as taken by a subscription that fetches them natively: librdkafka's
  // consumer does not fetch them, but commits for them go through it.
  void Claim(const std::string& topic, const std::vector<int32_t>& partitions);
  void Unclaim(const std::string& topic, const std::vector<int32_t>& partitions);
  // Commits to the group; `wait` blocks until the broker answered.
  Status Commit(const std::string& topic, const std::vector<std::pair<int32_t, int64_t>>& offsets,
                bool wait);
  bool empty() const;

  // Serves the consumer's own events (errors, commit results), logging them. Called regularly.
  void Serve();

 private:
  FetchSession(rd_kafka_t* consumer, std::string group_id, bool read_committed);

  rd_kafka_t* consumer_;
  std::string group_id_;
  bool read_committed_;
  mutable std::mutex mutex_;
  std::set<std::pair<std::string, int32_t>> assigned_;
};

}  // namespace sluice::brokerd
