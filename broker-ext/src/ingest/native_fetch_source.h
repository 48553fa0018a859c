// RECORDS mode's source on the native fetch path: the pump's thread sends Kafka Fetch requests to
// the partitions' leaders (or followers, below) itself and walks the record batches of each
// response in place, so a record costs a few varint reads on its way into shared memory instead of
// librdkafka's op per record (docs/brokerd.md, "Native fetch path").
//
// One request is in flight per broker: when a response arrives, the next request goes out
// before its records are read, and a receiver thread per connection reads that next response
// while the pump parses this one. Without it the broker's response waited in socket buffers of a
// few hundred KiB until the pump came to read, and broker and pump took turns (the daemon idled
// a third of the time at 100 B records). Paused partitions are left out of requests; what was
// fetched before the pause still arrives, bounded by one response per broker.
//
// Rack awareness (KIP-392): with client.rack set, requests name the rack, and a leader that
// prefers a follower in that rack says so in its response; the partition is then fetched from
// that follower until it fails or the preference expires, and from its leader again after
// (docs/brokerd.md, "Rack awareness"). A partition with an in-sync replica on the daemon's own
// broker starts there, leased the same way, without asking its leader first. Offsets are the same
// on every replica, and a follower returns nothing beyond its high watermark, so where a partition
// is read from changes neither order nor what is read; a partition is in at most one request at a
// time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/metrics.h"
#include "ingest/fetch_session.h"
#include "ingest/message_source.h"
#include "ingest/partition_pauses.h"
#include "kafka/broker_connection.h"
#include "kafka/fetch_protocol.h"
#include "kafka/record_batch_reader.h"

namespace sluice::brokerd {

// The Fetch request settings, read from librdkafka's properties of the same meaning so that a
// deployment tunes both paths alike: fetch.wait.max.ms, fetch.min.bytes, fetch.max.bytes,
// max.partition.fetch.bytes, isolation.level, client.id, client.rack, metadata.max.age.ms.
struct NativeFetchSettings {
  int32_t max_wait_ms = 500;
  int32_t min_bytes = 1;
  int32_t max_bytes = 50 << 20;
  int32_t partition_max_bytes = 1 << 20;
  bool read_committed = true;
  std::string client_id = "sluice-brokerd";
  // The daemon's rack, sent in every Fetch; empty: none, and leaders never name a follower.
  std::string rack;
  // How long a follower a leader named is read from before the leader is asked again: Java's
  // consumer keeps the preference for metadata.max.age.ms, 5 minutes by default, as librdkafka
  // keeps its lease.
  std::chrono::milliseconds replica_lease{300'000};
  // The broker on the daemon's host (sluice.broker.id), -1 when unknown. With a rack, a partition
  // that has an in-sync replica there is read from it at once, not after its leader names it:
  // while the leader's host is unreachable, the partition is still read up to its high watermark.
  int32_t own_broker = -1;

  static Result<NativeFetchSettings> From(const KafkaSettings& settings);
  // Whether the settings leave the connection plaintext, the only one this path speaks; TLS and
  // SASL subscriptions go through librdkafka.
  static bool Applies(const KafkaSettings& settings);
};

class NativeFetchSource final : public MessageSource {
 public:
  // What the source asks the cluster, through the session's librdkafka handle.
  struct Cluster {
    // Each partition's leader and every broker's address.
    std::function<Result<TopicLeaders>()> leaders;
    // A partition's low and high watermarks.
    std::function<Result<std::pair<int64_t, int64_t>>(int32_t)> watermarks;
  };

  ~NativeFetchSource();
  NativeFetchSource(const NativeFetchSource&) = delete;
  NativeFetchSource& operator=(const NativeFetchSource&) = delete;

  // `starts` as the subscription plan has them (offsets, or librdkafka's logical
  // BEGINNING / END, resolved here through `cluster`). With `metrics`, the records received are
  // counted per broker in sluice_fetch_records_total{broker="host:port"}, and the broker each
  // partition is read from is sluice_fetch_replica{topic,partition}.
  static Result<std::unique_ptr<NativeFetchSource>> Create(
      std::string topic, const std::map<int32_t, int64_t>& starts, NativeFetchSettings settings,
      Cluster cluster, const PartitionPauses& pauses, Metrics* metrics = nullptr);

  Status Poll(std::chrono::milliseconds timeout, std::vector<ReadyMessage>& out) override;
  const SourceStats& stats() const override { return stats_; }
  bool takes_offsets() const override { return false; }

  // Records between each partition's next fetch offset and its high watermark, as of the last
  // responses.
  int64_t lag() const;

 private:
  using Clock = std::chrono::steady_clock;

  struct PartitionState {
    int64_t offset = 0;  // the next offset to fetch
    int64_t high_watermark = -1;
    int32_t leader = -1;   // its leader's broker id, from the last metadata
    int32_t replica = -1;  // the broker it is fetched from: its leader, or a follower it named
    Clock::time_point lease_end{};   // when a follower's preference expires
    int32_t requested_from = -1;     // the broker whose request in flight names it, or -1
    Gauge* replica_gauge = nullptr;  // sluice_fetch_replica; null without metrics
  };
  // A connection to one broker, and the thread that reads its responses.
  class Link {
   public:
    Link(int32_t id, std::unique_ptr<kafka::BrokerConnection> connection, NativeFetchSource& source,
         Counter* records_counter);
    ~Link();  // shuts the connection down, which ends the receiver, and joins it
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;

    // Sends a request; its response arrives in the source's `arrivals_`.
    Status Send(std::string_view frame);
    const std::string& address() const { return connection_->address(); }

    const int32_t broker;
    bool in_flight = false;
    int32_t correlation_id = 0;
    Counter* const records_counter;        // received from this broker; null without metrics
    std::map<int32_t, int64_t> requested;  // partition -> fetch offset of the request in flight

   private:
    void Receive();

    std::unique_ptr<kafka::BrokerConnection> connection_;
    NativeFetchSource& source_;
    bool due_ = false;  // a response is due; guarded by source_.mutex_
    bool closing_ = false;
    std::thread receiver_;
  };
  // A response read by a link's receiver, or why none could be.
  struct Arrival {
    Link* link;
    std::shared_ptr<kafka::FrameBuffer> buffer;
    Status status;
  };

  NativeFetchSource(std::string topic, NativeFetchSettings settings, Cluster cluster,
                    const PartitionPauses& pauses, Metrics* metrics);
  // Looks the leaders up; every partition is then fetched from the in-sync replica on the
  // daemon's host, or else from its leader.
  Status Locate();
  // Whether the partition is read from the daemon's own broker, an in-sync replica of it, rather
  // than from its leader.
  bool ReadsOwnReplica(const std::vector<int32_t>& in_sync) const;
  // Connects to every broker a partition is fetched from that has no link yet. A follower that
  // cannot be reached sends its partitions back to their leaders; a leader fails the call.
  Status LinkUp();
  // Sends the link's next request, unless every partition of it is paused or in another request.
  Status SendNext(Link& link);
  // Takes the link's response, sends the next request, then hands its records to `out`.
  Status Take(Link& link, const std::shared_ptr<kafka::FrameBuffer>& buffer,
              std::vector<ReadyMessage>& out);
  // A link failed: when its broker leads none of its partitions they go back to their leaders
  // (true); otherwise false, and the caller reconnects.
  bool FallBack(int32_t broker, const Status& why);
  // Reads `partition` from `broker` from now on, logging and counting the change.
  void ReadFrom(int32_t partition, PartitionState& state, int32_t broker, std::string_view why);
  // Sends the partitions whose follower's lease ended back to their leaders.
  void EndLeases();
  // Drops the connections and looks the leaders up again after a backoff: a broker went away or
  // stopped leading a partition.
  void Reconnect(const Status& why);
  // Drops one link; its request's partitions may be named in another.
  void Unlink(int32_t broker);
  std::shared_ptr<kafka::FrameBuffer> FreeBuffer();

  const std::string topic_;
  const NativeFetchSettings settings_;
  const Cluster cluster_;
  const PartitionPauses& pauses_;
  Metrics* const metrics_;
  std::map<int32_t, PartitionState> partitions_;
  std::map<int32_t, std::string> brokers_;  // broker id -> host:port, from the last metadata
  bool located_ = false;                    // partitions_ know their leaders
  std::map<int32_t, std::unique_ptr<Link>> links_;  // by broker id
  // Until then requests name no rack, after a follower failed: its leader would name it again
  // until the controller fences it (docs/brokerd.md, "Rack awareness").
  Clock::time_point rack_resumes_at_{};
  Clock::time_point retry_at_{};
  std::chrono::milliseconds backoff_{0};
  int32_t next_correlation_id_ = 1;
  // Between the pump's thread and the receivers.
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Arrival> arrivals_;
  // Response buffers: one is reused once no record views it any more.
  std::vector<std::shared_ptr<kafka::FrameBuffer>> buffers_;
  kafka::FetchedRecord scratch_;
  SourceStats stats_;
};

}  // namespace sluice::brokerd
