#include "ingest/fetch_session.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <thread>

#include "daemon/log.h"

namespace sluice::brokerd {
namespace {

using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t,
                                      decltype(&rd_kafka_topic_partition_list_destroy)>;

PartitionList NewList(size_t size) {
  return {rd_kafka_topic_partition_list_new(static_cast<int>(size)),
          &rd_kafka_topic_partition_list_destroy};
}

Status KafkaError(const std::string& what, rd_kafka_resp_err_t err) {
  return Status(StatusCode::kIoError, what + ": " + rd_kafka_err2str(err));
}

Status KafkaError(const std::string& what, rd_kafka_error_t* error) {
  Status status(StatusCode::kIoError, what + ": " + rd_kafka_error_string(error));
  rd_kafka_error_destroy(error);
  return status;
}

void LogFromLibrdkafka(const rd_kafka_t* /*consumer*/, int level, const char* facility,
                       const char* message) {
  // syslog levels: 0-3 errors, 4 warnings, 5-6 notices and information, 7 debugging.
  const LogLevel ours = level <= 3   ? LogLevel::kError
                        : level == 4 ? LogLevel::kWarn
                        : level <= 6 ? LogLevel::kInfo
                                     : LogLevel::kDebug;
  Log(ours, "librdkafka", {{"facility", facility}, {"message", message}});
}

void LogCommit(rd_kafka_t* /*consumer*/, rd_kafka_resp_err_t err,
               rd_kafka_topic_partition_list_t* offsets, void* /*opaque*/) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET) return;
  Log(LogLevel::kWarn, "commit_failed",
      {{"error", rd_kafka_err2str(err)},
       {"partitions", std::to_string(offsets == nullptr ? 0 : offsets->cnt)}});
}

using Metadata = std::unique_ptr<const rd_kafka_metadata_t, decltype(&rd_kafka_metadata_destroy)>;

// The cluster's metadata of one topic; kInvalidArgument when the cluster has no such topic.
Result<Metadata> TopicMetadata(rd_kafka_t* consumer, const std::string& topic,
                               std::chrono::milliseconds timeout) {
  rd_kafka_topic_t* handle = rd_kafka_topic_new(consumer, topic.c_str(), nullptr);
  if (handle == nullptr) return KafkaError("topic " + topic, rd_kafka_last_error());
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(consumer, 0, handle, &raw, static_cast<int>(timeout.count()));
  rd_kafka_topic_destroy(handle);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError("metadata of " + topic, err);
  Metadata metadata(raw, &rd_kafka_metadata_destroy);
  if (metadata->topic_cnt != 1 || metadata->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR ||
      metadata->topics[0].partition_cnt == 0) {
    const rd_kafka_resp_err_t topic_err = metadata->topic_cnt == 1
                                              ? metadata->topics[0].err
                                              : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    return Status::InvalidArgument("topic " + topic + ": " + rd_kafka_err2str(topic_err));
  }
  return metadata;
}

// Subscriptions without a group still need a group.id for librdkafka's consumer; this one is
// never committed to and never read from.
constexpr const char* kNoGroup = "sluice-brokerd.no-group";

}  // namespace

bool ReadsCommitted(const KafkaSettings& settings) {
  bool committed = true;
  for (const auto& [key, value] : settings) {
    if (key != "isolation.level") continue;
    std::string level = value;
    std::ranges::transform(level, level.begin(), [](unsigned char c) { return std::tolower(c); });
    committed = level != "read_uncommitted";
  }
  return committed;
}

Result<std::unique_ptr<FetchSession>> FetchSession::Create(const KafkaSettings& settings,
                                                           const std::string& group_id,
                                                           bool read_committed) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::array<char, 512> error{};
  auto set = [&](const std::string& key, const std::string& value) -> Status {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error.data(), error.size()) !=
        RD_KAFKA_CONF_OK) {
      return Status::InvalidArgument(key + ": " + error.data());
    }
    return Status::OK();
  };
  Status status = Status::OK();
  for (const auto& [key, value] : settings) {
    if (status.ok()) status = set(key, value);
  }
  // What the daemon's correctness rests on comes last, so no setting overrides it: offsets are
  // committed only as readers release, topics are never created by reading them, and the
  // isolation level is the subscriptions'.
  for (const auto& [key, value] :
       KafkaSettings{{"group.id", group_id.empty() ? kNoGroup : group_id},
                     {"enable.auto.commit", "false"},
                     {"enable.auto.offset.store", "false"},
                     {"allow.auto.create.topics", "false"},
                     {"isolation.level", read_committed ? "read_committed" : "read_uncommitted"}}) {
    if (status.ok()) status = set(key, value);
  }
  if (!status.ok()) {
    rd_kafka_conf_destroy(conf);
    return status;
  }
  rd_kafka_conf_set_log_cb(conf, &LogFromLibrdkafka);
  rd_kafka_conf_set_offset_commit_cb(conf, &LogCommit);
  rd_kafka_t* consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error.data(), error.size());
  if (consumer == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(std::string("librdkafka consumer: ") + error.data());
  }
  rd_kafka_poll_set_consumer(consumer);
  return std::unique_ptr<FetchSession>(new FetchSession(consumer, group_id, read_committed));
}

FetchSession::FetchSession(rd_kafka_t* consumer, std::string group_id, bool read_committed)
    : consumer_(consumer), group_id_(std::move(group_id)), read_committed_(read_committed) {}

FetchSession::~FetchSession() {
  rd_kafka_consumer_close(consumer_);
  rd_kafka_destroy(consumer_);
}

Result<std::vector<PartitionLeader>> FetchSession::Describe(
    const std::string& topic, std::chrono::milliseconds timeout) const {
  SLUICE_ASSIGN_OR_RETURN(Metadata metadata, TopicMetadata(consumer_, topic, timeout));
  std::vector<PartitionLeader> partitions;
  const rd_kafka_metadata_topic_t& described = metadata->topics[0];
  for (int i = 0; i < described.partition_cnt; ++i) {
    partitions.push_back({described.partitions[i].id, described.partitions[i].leader});
  }
  return partitions;
}

Result<std::map<int32_t, int64_t>> FetchSession::Committed(
    const std::string& topic, const std::vector<int32_t>& partitions,
    std::chrono::milliseconds timeout) const {
  std::map<int32_t, int64_t> committed;
  if (group_id_.empty() || partitions.empty()) return committed;
  PartitionList list = NewList(partitions.size());
  for (int32_t partition : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition);
  }
  using namespace std::chrono_literals;
  // A group the cluster has not seen yet has no coordinator at first: librdkafka 2.0 hands
  // NOT_COORDINATOR (and its kin) back instead of retrying, so retry within the bound.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  rd_kafka_resp_err_t err;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    err = rd_kafka_committed(consumer_, list.get(),
                             static_cast<int>(std::max<int64_t>(left.count(), 1)));
    const bool coordinator_moving = err == RD_KAFKA_RESP_ERR_NOT_COORDINATOR ||
                                    err == RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE ||
                                    err == RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS;
    if (!coordinator_moving || std::chrono::steady_clock::now() + 50ms >= deadline) break;
    std::this_thread::sleep_for(50ms);
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaError("committed offsets of group " + group_id_, err);
  }
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& entry = list->elems[i];
    if (entry.err == RD_KAFKA_RESP_ERR_NO_ERROR && entry.offset >= 0) {
      committed[entry.partition] = entry.offset;
    }
  }
  return committed;
}

Result<TopicLeaders> FetchSession::LeaderAddresses(const std::string& topic,
                                                   std::chrono::milliseconds timeout) const {
  SLUICE_ASSIGN_OR_RETURN(Metadata metadata, TopicMetadata(consumer_, topic, timeout));
  TopicLeaders found;
  for (int i = 0; i < metadata->broker_cnt; ++i) {
    const rd_kafka_metadata_broker_t& broker = metadata->brokers[i];
    const std::string host = broker.host;
    found.brokers[broker.id] = (host.find(':') != std::string::npos ? "[" + host + "]" : host) +
                               ":" + std::to_string(broker.port);
  }
  const rd_kafka_metadata_topic_t& described = metadata->topics[0];
  for (int i = 0; i < described.partition_cnt; ++i) {
    const rd_kafka_metadata_partition_t& partition = described.partitions[i];
    if (found.brokers.contains(partition.leader)) found.leaders[partition.id] = partition.leader;
    found.in_sync[partition.id].assign(partition.isrs, partition.isrs + partition.isr_cnt);
  }
  return found;
}

Result<std::pair<int64_t, int64_t>> FetchSession::Watermarks(
    const std::string& topic, int32_t partition, std::chrono::milliseconds timeout) const {
  int64_t low = 0;
  int64_t high = 0;
  const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
      consumer_, topic.c_str(), partition, &low, &high, static_cast<int>(timeout.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaError("watermarks of " + topic + " [" + std::to_string(partition) + "]", err);
  }
  return std::pair{low, high};
}

bool FetchSession::CanTake(const std::string& topic, const std::vector<int32_t>& partitions) const {
  std::lock_guard lock(mutex_);
  for (int32_t partition : partitions) {
    if (assigned_.contains({topic, partition})) return false;
  }
  return true;
}

Status FetchSession::Assign(const std::string& topic, const std::map<int32_t, int64_t>& starts,
                            rd_kafka_queue_t* queue) {
  std::lock_guard lock(mutex_);
  PartitionList list = NewList(starts.size());
  for (const auto& [partition, offset] : starts) {
    rd_kafka_queue_t* partition_queue =
        rd_kafka_queue_get_partition(consumer_, topic.c_str(), partition);
    if (partition_queue == nullptr) {
      return Status(StatusCode::kIoError,
                    "no queue for " + topic + " [" + std::to_string(partition) + "]");
    }
    rd_kafka_queue_forward(partition_queue, queue);
    rd_kafka_queue_destroy(partition_queue);
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition)->offset = offset;
  }
  if (rd_kafka_error_t* error = rd_kafka_incremental_assign(consumer_, list.get())) {
    return KafkaError("assign " + topic, error);
  }
  for (const auto& [partition, offset] : starts) assigned_.insert({topic, partition});
  return Status::OK();
}

Status FetchSession::Unassign(const std::string& topic, const std::vector<int32_t>& partitions) {
  std::lock_guard lock(mutex_);
  PartitionList list = NewList(partitions.size());
  for (int32_t partition : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition);
  }
  rd_kafka_error_t* error = rd_kafka_incremental_unassign(consumer_, list.get());
  for (int32_t partition : partitions) {
    assigned_.erase({topic, partition});
    if (rd_kafka_queue_t* partition_queue =
            rd_kafka_queue_get_partition(consumer_, topic.c_str(), partition)) {
      rd_kafka_queue_forward(partition_queue, nullptr);
      rd_kafka_queue_destroy(partition_queue);
    }
  }
  if (error != nullptr) return KafkaError("unassign " + topic, error);
  return Status::OK();
}

Status FetchSession::Commit(const std::string& topic,
                            const std::vector<std::pair<int32_t, int64_t>>& offsets, bool wait) {
  if (group_id_.empty() || offsets.empty()) return Status::OK();
  PartitionList list = NewList(offsets.size());
  for (const auto& [partition, offset] : offsets) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition)->offset = offset;
  }
  const rd_kafka_resp_err_t err = rd_kafka_commit(consumer_, list.get(), wait ? 0 : 1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError("commit to " + group_id_, err);
  return Status::OK();
}

void FetchSession::Claim(const std::string& topic, const std::vector<int32_t>& partitions) {
  std::lock_guard lock(mutex_);
  for (int32_t partition : partitions) assigned_.insert({topic, partition});
}

void FetchSession::Unclaim(const std::string& topic, const std::vector<int32_t>& partitions) {
  std::lock_guard lock(mutex_);
  for (int32_t partition : partitions) assigned_.erase({topic, partition});
}

bool FetchSession::empty() const {
  std::lock_guard lock(mutex_);
  return assigned_.empty();
}

void FetchSession::Serve() {
  while (rd_kafka_message_t* event = rd_kafka_consumer_poll(consumer_, 0)) {
    if (event->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      Log(LogLevel::kWarn, "consumer_error", {{"error", rd_kafka_message_errstr(event)}});
    }
    rd_kafka_message_destroy(event);
  }
}

}  // namespace sluice::brokerd
