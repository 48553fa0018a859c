#include "ingest/native_fetch_source.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <set>
#include <thread>
#include <utility>

#include "daemon/daemon_config.h"
#include "daemon/log.h"

namespace sluice::brokerd {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kConnectTimeout = 5s;
constexpr auto kFirstBackoff = 100ms;
constexpr auto kMaxBackoff = 5s;
// Responses beyond fetch.max.bytes by this much are refused: the broker may exceed the limit by
// a batch larger than it (KIP-74), never by more than the largest batch it accepts.
constexpr size_t kFrameSlack = 64u << 20;
constexpr size_t kPooledBuffers = 4;
// After a follower failed, requests name no rack for this long. Its leader keeps naming it until
// the controller fences it (broker.session.timeout.ms, 9 s by default) or it falls out of sync,
// and answers with no records meanwhile; librdkafka likewise refuses a new lease within a minute
// of the last.
constexpr auto kRackPause = 60s;

// librdkafka's sizes and times are non-negative 32-bit integers.
Result<int32_t> ParseInt(const std::string& key, const std::string& value) {
  SLUICE_ASSIGN_OR_RETURN(const int32_t parsed, ParseNumber<int32_t>(key, value));
  if (parsed < 0)
    return Status::InvalidArgument(key + " = \"" + value + "\": must not be negative");
  return parsed;
}

std::string Lower(std::string text) {
  std::ranges::transform(text, text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Errors of a leader after which the partition is fetched again from its leader as cluster
// metadata names it then: leadership moved, or the broker is not ready for it yet.
bool LeaderMayHaveMoved(int16_t error) {
  switch (error) {
    case 3:    // UNKNOWN_TOPIC_OR_PARTITION
    case 5:    // LEADER_NOT_AVAILABLE
    case 6:    // NOT_LEADER_OR_FOLLOWER
    case 7:    // REQUEST_TIMED_OUT
    case 9:    // REPLICA_NOT_AVAILABLE
    case 13:   // NETWORK_EXCEPTION
    case 56:   // KAFKA_STORAGE_ERROR
    case 74:   // FENCED_LEADER_EPOCH
    case 75:   // UNKNOWN_LEADER_EPOCH
    case 78:   // OFFSET_NOT_AVAILABLE
    case 100:  // UNKNOWN_TOPIC_ID
      return true;
    default:
      return false;
  }
}

}  // namespace

Result<NativeFetchSettings> NativeFetchSettings::From(const KafkaSettings& settings) {
  NativeFetchSettings result;
  for (const auto& [key, value] : settings) {
    if (key == "fetch.wait.max.ms") {
      SLUICE_ASSIGN_OR_RETURN(result.max_wait_ms, ParseInt(key, value));
    } else if (key == "fetch.min.bytes") {
      SLUICE_ASSIGN_OR_RETURN(result.min_bytes, ParseInt(key, value));
    } else if (key == "fetch.max.bytes") {
      SLUICE_ASSIGN_OR_RETURN(result.max_bytes, ParseInt(key, value));
    } else if (key == "max.partition.fetch.bytes") {
      SLUICE_ASSIGN_OR_RETURN(result.partition_max_bytes, ParseInt(key, value));
    } else if (key == "isolation.level") {
      const std::string level = Lower(value);
      if (level != "read_committed" && level != "read_uncommitted") {
        return Status::InvalidArgument(key + " = " + value +
                                       ": read_committed or read_uncommitted");
      }
      result.read_committed = level == "read_committed";
    } else if (key == "client.id") {
      result.client_id = value;
    } else if (key == "client.rack") {
      result.rack = value;
    } else if (key == "metadata.max.age.ms") {
      SLUICE_ASSIGN_OR_RETURN(const int32_t lease, ParseInt(key, value));
      result.replica_lease = std::chrono::milliseconds(lease);
    }
  }
  return result;
}

bool NativeFetchSettings::Applies(const KafkaSettings& settings) {
  bool plaintext = true;
  for (const auto& [key, value] : settings) {
    if (key == "security.protocol") plaintext = Lower(value) == "plaintext";
  }
  return plaintext;
}

Result<std::unique_ptr<NativeFetchSource>> NativeFetchSource::Create(
    std::string topic, const std::map<int32_t, int64_t>& starts, NativeFetchSettings settings,
    Cluster cluster, const PartitionPauses& pauses, Metrics* metrics) {
  std::unique_ptr<NativeFetchSource> source(new NativeFetchSource(
      std::move(topic), std::move(settings), std::move(cluster), pauses, metrics));
  for (const auto& [partition, start] : starts) {
    int64_t offset = start;
    if (start == RD_KAFKA_OFFSET_BEGINNING || start == RD_KAFKA_OFFSET_END) {
      SLUICE_ASSIGN_OR_RETURN(auto marks, source->cluster_.watermarks(partition));
      offset = start == RD_KAFKA_OFFSET_BEGINNING ? marks.first : marks.second;
    } else if (start < 0) {
      return Status::InvalidArgument("start of " + source->topic_ + " [" +
                                     std::to_string(partition) + "]: " + std::to_string(start));
    }
    PartitionState& state = source->partitions_[partition];
    state.offset = offset;
    if (metrics != nullptr) {
      state.replica_gauge = &metrics->gauge(
          "sluice_fetch_replica",
          "The broker the native fetch path reads a partition from: its leader, or the follower "
          "in the daemon's rack that the leader named",
          {{"topic", source->topic_}, {"partition", std::to_string(partition)}});
    }
  }
  return source;
}

NativeFetchSource::NativeFetchSource(std::string topic, NativeFetchSettings settings,
                                     Cluster cluster, const PartitionPauses& pauses,
                                     Metrics* metrics)
    : topic_(std::move(topic)),
      settings_(std::move(settings)),
      cluster_(std::move(cluster)),
      pauses_(pauses),
      metrics_(metrics) {}

int64_t NativeFetchSource::lag() const {
  int64_t lag = 0;
  for (const auto& [partition, state] : partitions_) {
    if (state.high_watermark >= 0) lag += std::max<int64_t>(0, state.high_watermark - state.offset);
  }
  return lag;
}

NativeFetchSource::~NativeFetchSource() { links_.clear(); }

NativeFetchSource::Link::Link(int32_t id, std::unique_ptr<kafka::BrokerConnection> connection,
                              NativeFetchSource& source, Counter* records)
    : broker(id),
      records_counter(records),
      connection_(std::move(connection)),
      source_(source),
      receiver_([this] { Receive(); }) {}

NativeFetchSource::Link::~Link() {
  {
    std::lock_guard lock(source_.mutex_);
    closing_ = true;
  }
  source_.changed_.notify_all();
  connection_->Shutdown();
  receiver_.join();
}

Status NativeFetchSource::Link::Send(std::string_view frame) {
  SLUICE_RETURN_NOT_OK(connection_->Send(frame));
  {
    std::lock_guard lock(source_.mutex_);
    due_ = true;
  }
  source_.changed_.notify_all();
  return Status::OK();
}

void NativeFetchSource::Link::Receive() {
  while (true) {
    std::shared_ptr<kafka::FrameBuffer> buffer;
    {
      std::unique_lock lock(source_.mutex_);
      source_.changed_.wait(lock, [this] { return due_ || closing_; });
      if (closing_) return;
      due_ = false;
      buffer = source_.FreeBuffer();
    }
    Status status = connection_->Receive(
        *buffer, static_cast<size_t>(source_.settings_.max_bytes) + kFrameSlack);
    {
      std::lock_guard lock(source_.mutex_);
      if (closing_) return;  // the failure is the shutdown's
      source_.arrivals_.push_back({this, std::move(buffer), status});
    }
    source_.changed_.notify_all();
    if (!status.ok()) return;
  }
}

Status NativeFetchSource::Poll(std::chrono::milliseconds timeout, std::vector<ReadyMessage>& out) {
  const Clock::time_point deadline = Clock::now() + timeout;
  if (!located_) {
    if (Clock::now() < retry_at_) {
      std::this_thread::sleep_until(std::min(deadline, retry_at_));
      return Status::OK();
    }
    if (Status located = Locate(); !located.ok()) {
      if (located.code() != StatusCode::kIoError) return located;
      Reconnect(located);
      return Status::OK();
    }
  }
  EndLeases();
  if (Status linked = LinkUp(); !linked.ok()) {
    Reconnect(linked);
    return Status::OK();
  }
  backoff_ = 0ms;
  bool any_in_flight = false;
  for (auto next = links_.begin(); next != links_.end();) {
    Link& link = *(next++)->second;  // FallBack may drop this link, never the next
    if (!link.in_flight) {
      if (Status sent = SendNext(link); !sent.ok()) {
        if (FallBack(link.broker, sent)) continue;
        Reconnect(sent);
        return Status::OK();
      }
    }
    any_in_flight |= link.in_flight;
  }
  if (!any_in_flight) return Status::OK();  // every partition is paused
  std::deque<Arrival> arrived;
  {
    std::unique_lock lock(mutex_);
    changed_.wait_until(lock, deadline, [this] { return !arrivals_.empty(); });
    arrived.swap(arrivals_);
  }
  for (Arrival& arrival : arrived) {
    Status taken = arrival.status.ok() ? Take(*arrival.link, arrival.buffer, out) : arrival.status;
    if (!taken.ok()) {
      if (taken.code() != StatusCode::kIoError) return taken;
      if (FallBack(arrival.link->broker, taken)) continue;
      Reconnect(taken);
      return Status::OK();
    }
  }
  return Status::OK();
}

Status NativeFetchSource::Locate() {
  Result<TopicLeaders> found = cluster_.leaders();
  // Retried, as librdkafka retries: a topic's metadata can lag its creation, or a leader's move.
  if (!found.ok()) return Status(StatusCode::kIoError, found.status().message());
  brokers_ = std::move(found->brokers);
  for (const auto& [partition, state] : partitions_) {
    if (!found->leaders.contains(partition) && !ReadsOwnReplica(found->in_sync[partition])) {
      return Status(StatusCode::kIoError,
                    topic_ + " [" + std::to_string(partition) + "] has no leader");
    }
  }
  for (auto& [partition, state] : partitions_) {
    auto leader = found->leaders.find(partition);
    state.leader = leader == found->leaders.end() ? -1 : leader->second;
    if (state.leader != settings_.own_broker && ReadsOwnReplica(found->in_sync[partition])) {
      // A lease, as if the leader had named it: the leader is asked again when it ends.
      state.lease_end = Clock::now() + settings_.replica_lease;
      ReadFrom(partition, state, settings_.own_broker,
               state.leader < 0 ? "in-sync replica on the daemon's host, no leader"
                                : "in-sync replica on the daemon's host");
    } else {
      ReadFrom(partition, state, state.leader, "leader");
    }
  }
  located_ = true;
  return Status::OK();
}

bool NativeFetchSource::ReadsOwnReplica(const std::vector<int32_t>& in_sync) const {
  // Without a rack the deployment asked for no reads from followers; after a follower failed,
  // none for a while either (kRackPause).
  return !settings_.rack.empty() && settings_.own_broker >= 0 && Clock::now() >= rack_resumes_at_ &&
         brokers_.contains(settings_.own_broker) &&
         std::ranges::find(in_sync, settings_.own_broker) != in_sync.end();
}

Status NativeFetchSource::LinkUp() {
  std::set<int32_t> wanted;
  for (const auto& [partition, state] : partitions_) wanted.insert(state.replica);
  for (const int32_t broker : wanted) {
    if (links_.contains(broker)) continue;
    auto address = brokers_.find(broker);
    Result<std::unique_ptr<kafka::BrokerConnection>> connection =
        address == brokers_.end()
            ? Result<std::unique_ptr<kafka::BrokerConnection>>(
                  Status(StatusCode::kIoError,
                         "broker " + std::to_string(broker) + " is not in the cluster's metadata"))
            : kafka::BrokerConnection::Connect(address->second, kConnectTimeout);
    if (!connection.ok()) {
      if (FallBack(broker, connection.status())) continue;
      return connection.status();
    }
    // Per broker, as the daemon connects to it: a cluster check can tell that each daemon
    // fetched from its own host's broker only (docs/brokerd.md, "Metrics").
    Counter* records =
        metrics_ == nullptr
            ? nullptr
            : &metrics_->counter("sluice_fetch_records_total",
                                 "Records the native fetch path received, by the broker it "
                                 "fetched them from",
                                 {{"broker", address->second}});
    links_[broker] = std::make_unique<Link>(broker, connection.MoveValue(), *this, records);
  }
  return Status::OK();
}

bool NativeFetchSource::FallBack(int32_t broker, const Status& why) {
  for (const auto& [partition, state] : partitions_) {
    if (state.replica == broker && state.leader == broker) return false;
  }
  Unlink(broker);
  rack_resumes_at_ = Clock::now() + kRackPause;
  Log(LogLevel::kWarn, "fetch_replica_failed",
      {{"topic", topic_},
       {"broker", std::to_string(broker)},
       {"error", why.message()},
       {"rack_resumes_in_ms", std::to_string(kRackPause / 1ms)}});
  for (auto& [partition, state] : partitions_) {
    if (state.replica == broker) ReadFrom(partition, state, state.leader, "replica failed");
  }
  return true;
}

void NativeFetchSource::ReadFrom(int32_t partition, PartitionState& state, int32_t broker,
                                 std::string_view why) {
  if (state.replica == broker) return;
  state.replica = broker;
  if (state.replica_gauge != nullptr) state.replica_gauge->Set(broker);
  auto address = brokers_.find(broker);
  Log(LogLevel::kInfo, "fetch_replica",
      {{"topic", topic_},
       {"partition", std::to_string(partition)},
       {"broker", std::to_string(broker)},
       {"address", address == brokers_.end() ? "" : address->second},
       {"leader", std::to_string(state.leader)},
       {"reason", std::string(why)}});
}

void NativeFetchSource::EndLeases() {
  const Clock::time_point now = Clock::now();
  for (auto& [partition, state] : partitions_) {
    if (state.replica != state.leader && now >= state.lease_end) {
      ReadFrom(partition, state, state.leader, "lease ended");
    }
  }
}

void NativeFetchSource::Unlink(int32_t broker) {
  auto link = links_.find(broker);
  if (link == links_.end()) return;
  for (const auto& [partition, offset] : link->second->requested) {
    if (partitions_[partition].requested_from == broker) partitions_[partition].requested_from = -1;
  }
  const Link* gone = link->second.get();
  links_.erase(link);  // joins its receiver: nothing adds to arrivals_ for it any more
  std::lock_guard lock(mutex_);
  std::erase_if(arrivals_, [gone](const Arrival& arrival) { return arrival.link == gone; });
}

void NativeFetchSource::Reconnect(const Status& why) {
  links_.clear();
  arrivals_.clear();  // the receivers are gone: nobody else touches it
  located_ = false;
  for (auto& [partition, state] : partitions_) state.requested_from = -1;
  backoff_ = std::clamp<std::chrono::milliseconds>(backoff_ * 2, kFirstBackoff, kMaxBackoff);
  retry_at_ = Clock::now() + backoff_;
  Log(LogLevel::kWarn, "native_fetch_retry",
      {{"topic", topic_},
       {"error", why.message()},
       {"retry_in_ms", std::to_string(backoff_.count())}});
}

Status NativeFetchSource::SendNext(Link& link) {
  kafka::FetchRequest request;
  request.correlation_id = next_correlation_id_++;
  request.client_id = settings_.client_id;
  request.max_wait_ms = settings_.max_wait_ms;
  request.min_bytes = settings_.min_bytes;
  request.max_bytes = settings_.max_bytes;
  request.read_committed = settings_.read_committed;
  request.topic = topic_;
  if (Clock::now() >= rack_resumes_at_) request.rack_id = settings_.rack;
  link.requested.clear();
  for (const auto& [partition, state] : partitions_) {
    // A partition whose replica changed may still be in the old replica's request: it waits for
    // that answer, so that no offset is asked twice.
    if (state.replica != link.broker || state.requested_from != -1 || pauses_.paused(partition)) {
      continue;
    }
    request.partitions.push_back({partition, state.offset, settings_.partition_max_bytes});
    link.requested[partition] = state.offset;
  }
  if (request.partitions.empty()) return Status::OK();
  SLUICE_RETURN_NOT_OK(link.Send(kafka::EncodeFetchRequest(request)));
  for (const auto& [partition, offset] : link.requested) {
    partitions_[partition].requested_from = link.broker;
  }
  link.correlation_id = request.correlation_id;
  link.in_flight = true;
  return Status::OK();
}

// Called by the receivers, under mutex_.
std::shared_ptr<kafka::FrameBuffer> NativeFetchSource::FreeBuffer() {
  for (const auto& buffer : buffers_) {
    if (buffer.use_count() == 1) {
      // The last record's owner let go with a release decrement; this orders its reads of the
      // buffer before the receiver's writes.
      std::atomic_thread_fence(std::memory_order_acquire);
      return buffer;
    }
  }
  auto buffer = std::make_shared<kafka::FrameBuffer>();
  // A few are kept: of one broker, the response being read, the one being parsed and the one
  // whose last records wait in an object; more leaders allocate more.
  if (buffers_.size() < kPooledBuffers) buffers_.push_back(buffer);
  return buffer;
}

Status NativeFetchSource::Take(Link& link, const std::shared_ptr<kafka::FrameBuffer>& buffer,
                               std::vector<ReadyMessage>& out) {
  link.in_flight = false;
  for (const auto& [partition, offset] : link.requested) partitions_[partition].requested_from = -1;
  Result<kafka::FetchResponse> decoded = kafka::DecodeFetchResponse(buffer->view());
  if (!decoded.ok()) {
    return Status(StatusCode::kIoError, "fetch response from broker " + link.address() + ": " +
                                            decoded.status().message());
  }
  const kafka::FetchResponse& response = *decoded;
  if (response.correlation_id != link.correlation_id) {
    return Status(StatusCode::kIoError, "fetch response from broker " + link.address() +
                                            " answers request " +
                                            std::to_string(response.correlation_id) + ", not " +
                                            std::to_string(link.correlation_id));
  }
  if (response.error_code != kafka::kNone) {
    return Status(StatusCode::kIoError, "fetch from broker " + link.address() + ": Kafka error " +
                                            std::to_string(response.error_code));
  }

  // Offsets move on before any record is read, so the next request can go out first.
  struct ToRead {
    const kafka::FetchedPartition* fetched;
    int64_t from;
  };
  std::vector<ToRead> to_read;
  Status moved = Status::OK();  // a partition whose leader may have moved: reconnect afterwards
  for (size_t i = 0; i < response.partitions.size(); ++i) {
    const kafka::FetchedPartition& fetched = response.partitions[i];
    auto requested = link.requested.find(fetched.partition);
    if (response.topics[i] != topic_ || requested == link.requested.end()) continue;
    const std::string where = topic_ + " [" + std::to_string(fetched.partition) + "]";
    PartitionState& state = partitions_[fetched.partition];
    if (link.broker != state.leader && fetched.error_code != kafka::kNone) {
      // A follower's error is no verdict on the partition (KIP-392): an offset out of range or
      // not available there may be in range at the leader, which decides.
      rack_resumes_at_ = Clock::now() + kRackPause;
      ReadFrom(fetched.partition, state, state.leader,
               "follower answered Kafka error " + std::to_string(fetched.error_code));
      continue;
    }
    if (fetched.error_code == kafka::kOffsetOutOfRange) {
      SLUICE_ASSIGN_OR_RETURN(auto marks, cluster_.watermarks(fetched.partition));
      if (requested->second > marks.second) {
        return Status::InvalidState("offset " + std::to_string(requested->second) + " of " + where +
                                    " is beyond its high watermark " +
                                    std::to_string(marks.second));
      }
      if (requested->second < marks.first) {
        Log(LogLevel::kWarn, "records_lost_to_retention",
            {{"partition", where},
             {"from", std::to_string(requested->second)},
             {"to", std::to_string(marks.first)}});
        state.offset = marks.first;
      }
      continue;
    }
    if (LeaderMayHaveMoved(fetched.error_code)) {
      moved = Status(StatusCode::kIoError,
                     "fetch " + where + ": Kafka error " + std::to_string(fetched.error_code));
      continue;
    }
    if (fetched.error_code != kafka::kNone) {
      return Status::InvalidState("fetch " + where + ": Kafka error " +
                                  std::to_string(fetched.error_code));
    }
    if (fetched.preferred_read_replica >= 0 && fetched.preferred_read_replica != link.broker) {
      // The leader sends the partition to a follower in the daemon's rack, with no records.
      if (brokers_.contains(fetched.preferred_read_replica)) {
        state.lease_end = Clock::now() + settings_.replica_lease;
        ReadFrom(fetched.partition, state, fetched.preferred_read_replica,
                 "the leader's preferred read replica");
      } else {
        // Not in the metadata yet: the leader answers with no records while it prefers a
        // replica, so ask without a rack until the metadata has caught up.
        rack_resumes_at_ = Clock::now() + kRackPause;
        Log(LogLevel::kWarn, "fetch_replica_unknown",
            {{"topic", topic_},
             {"partition", std::to_string(fetched.partition)},
             {"broker", std::to_string(fetched.preferred_read_replica)}});
      }
    }
    state.high_watermark = fetched.high_watermark;
    state.offset = kafka::NextFetchOffset(fetched.records, requested->second);
    to_read.push_back({&fetched, requested->second});
  }
  if (moved.ok()) SLUICE_RETURN_NOT_OK(SendNext(link));

  static const std::vector<kafka::AbortedTransaction> kReadUncommitted;
  const size_t before = out.size();
  for (const ToRead& partition : to_read) {
    const kafka::FetchedPartition& fetched = *partition.fetched;
    kafka::RecordBatchReader batches(fetched.records,
                                     settings_.read_committed ? fetched.aborted : kReadUncommitted,
                                     partition.from);
    while (true) {
      Result<bool> next = batches.Next(scratch_);
      if (!next.ok()) {
        return Status::Corrupt(topic_ + " [" + std::to_string(fetched.partition) +
                               "]: " + next.status().message());
      }
      if (!*next) break;
      ReadyMessage& ready = out.emplace_back();
      ConsumedRecord& record = ready.record;
      record.topic = topic_;
      record.partition = fetched.partition;
      record.offset = scratch_.offset;
      record.timestamp_ms = scratch_.timestamp_ms;
      record.key = scratch_.key;
      record.value = scratch_.value;
      if (!scratch_.headers.empty()) record.headers = scratch_.headers;
      if (batches.decompressed() != nullptr) {
        ready.owner = batches.decompressed();
      } else {
        ready.owner = buffer;
      }
      ++stats_.records;
      stats_.bytes += record.key_size() + record.value_size();
    }
  }
  if (link.records_counter != nullptr) link.records_counter->Add(out.size() - before);
  return moved;
}

}  // namespace sluice::brokerd
