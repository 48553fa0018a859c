// The daemon's control plane: the Unix socket readers connect to, the protocol of
// docs/formats.md "Control protocol", the subscriptions and the fetch sessions they share, and
// the local producers whose chunks go to the subscriptions without the broker (docs/brokerd.md,
// "Local producers").
//
// One thread runs it all with poll(2): control traffic is a frame per subscription change and a
// heartbeat every few seconds, while the records flow through the subscriptions' own threads and
// the segments. Requests are answered in order; the slow ones (metadata, committed offsets) are
// bounded by timeouts.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/daemon_config.h"
#include "daemon/metrics.h"
#include "daemon/segment_names.h"
#include "daemon/subscription.h"
#include "daemon/subscription_planner.h"
#include "ingest/fetch_session.h"
#include "ingest/local_chunk_router.h"
#include "ingest/local_producer.h"
#include "protocol/frame_reader.h"
#include "protocol/messages.h"
#include "sluice/status.h"

namespace sluice::brokerd {

class ControlServer {
 public:
  // Removes the segments of daemons that are gone (daemon/segment_names.h) and those of local
  // producers whose writer is gone, and binds the socket (mode 0600). Fails when another daemon
  // answers on it.
  static Result<std::unique_ptr<ControlServer>> Listen(const DaemonConfig& config,
                                                       Metrics& metrics);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Serves until `stop_fd` (a signalfd or eventfd) becomes readable, then tells every reader
  // SHUTTING_DOWN, ends every local producer (taking what it published) and every subscription
  // (committing what RELEASE allows), removes the segments and the socket.
  Status Run(int stop_fd);

  // This run's token in the segment names.
  const std::string& run() const { return names_.run(); }

 private:
  using Clock = std::chrono::steady_clock;

  // A PRODUCE whose producer is started off the control thread: LocalProducer::Start waits up
  // to DoorbellClient::kConnectTimeout for the producer's doorbell, and the other connections
  // are served meanwhile (docs/brokerd.md, "Local producers"). The connection's later frames
  // wait unread until it is answered, so that its answers stay in order.
  struct PendingProduce {
    uint64_t request_id = 0;
    uint64_t id = 0;
    protocol::Produce request;
    std::thread thread;
    // Set by the thread under pending_mutex_; read once the thread is joined.
    std::optional<Result<std::unique_ptr<LocalProducer>>> started;
  };

  struct Connection {
    int fd = -1;
    ucred peer{};
    protocol::FrameReader reader;
    std::map<uint64_t, std::unique_ptr<Subscription>> subscriptions;
    std::map<uint64_t, std::unique_ptr<LocalProducer>> producers;
    std::unique_ptr<PendingProduce> pending;
    Clock::time_point last_received;
    Clock::time_point last_sent;
    std::chrono::nanoseconds peer_timeout{0};  // from the peer's heartbeats; 0 until one came
    // The version of the peer's last frame, which the daemon answers in; version 1, which every
    // reader speaks, until the peer has sent one.
    uint16_t version = protocol::kMinVersion;
    bool closing = false;
  };

  ControlServer(const DaemonConfig& config, Metrics& metrics, int listener, int wake_fd,
                SegmentNames names);
  void Accept();
  // Reads what the peer sent and serves it, unless a PRODUCE of the connection is pending.
  void Receive(Connection& connection);
  // Serves the frames read already, in order, until a PRODUCE is pending or none is left.
  void ServeFrames(Connection& connection);
  void Handle(Connection& connection, const protocol::Frame& frame);
  void Subscribe(Connection& connection, uint64_t request_id, const protocol::Subscribe& request);
  // The planner's outcome for `request`, asking Kafka through a session of its group and level
  // once the request is within the daemon's limits.
  PlanOutcome Plan(const protocol::Subscribe& request, bool read_committed);
  // A session of the group and isolation level that can take the partitions, made if none can.
  Result<FetchSession*> SessionFor(const std::string& group_id, bool read_committed,
                                   const std::string& topic,
                                   const std::vector<int32_t>& partitions);
  void EndSubscription(Connection& connection, uint64_t id);
  // PRODUCE: the topic's grant and the limits, then the producer's segment, opened on a thread
  // of its own (docs/formats.md, "PRODUCE").
  void Produce(Connection& connection, uint64_t request_id, const protocol::Produce& request);
  // Answers the PRODUCEs whose producers' threads are done, and serves what their connections
  // sent meanwhile.
  void FinishPendingProduces();
  // Why a PRODUCE of `uid` is refused, or nothing when sluice.producers.max and
  // sluice.producers.max.per.uid leave room for one more producer.
  std::optional<std::string> ProducerLimitRefusal(uid_t uid) const;
  // Stops the producer, once it took what its segment had published.
  void EndProducer(Connection& connection, uint64_t id);
  // Ends the connection's subscriptions and producers that CLOSE names (0: all of them); false
  // when it names neither.
  bool CloseNamed(Connection& connection, uint64_t id);
  // Tells the peers of the producers that ended by themselves why, if they failed, and ends them.
  void EndEndedProducers(Connection& connection);
  void Send(Connection& connection, uint64_t request_id, protocol::Message message);
  void SendError(Connection& connection, uint64_t request_id, uint64_t subscription_id,
                 protocol::ErrorCode code, const std::string& message);
  // Ends the connection's producers and subscriptions and marks it for removal.
  void Drop(Connection& connection, const std::string& reason);
  void Tick();
  bool Allowed(const ucred& peer) const;

  const DaemonConfig& config_;
  Metrics& metrics_;
  int listener_;
  // An eventfd: a PRODUCE's thread is done.
  int wake_fd_;
  std::mutex pending_mutex_;
  SegmentNames names_;
  // Declared before the connections, whose subscriptions leave it when they end.
  LocalChunkRouter local_chunks_;
  LocalProducerCounters producer_counters_;
  // What failed producers' threads reported, by producer id, for the control thread to send.
  std::mutex producer_failures_mutex_;
  std::map<uint64_t, std::string> producer_failures_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<std::unique_ptr<FetchSession>> sessions_;
  SubscriptionPlanner planner_;
  size_t subscription_count_ = 0;
  // Slot bytes of every subscription's segment, bounded by sluice.segment.max.total.bytes.
  uint64_t segment_bytes_ = 0;
  // The daemon is stopping: connections dropped now did not end by their peer's doing.
  bool stopping_ = false;

  Gauge& connections_gauge_;
  Gauge& subscriptions_gauge_;
};

}  // namespace sluice::brokerd
