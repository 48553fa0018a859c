#include "daemon/control_server.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <span>
#include <utility>

#include "daemon/log.h"
#include "protocol/codec.h"
#include "sluice/file_access.h"

namespace sluice::brokerd {
namespace {

using namespace std::chrono_literals;
using protocol::ErrorCode;

constexpr auto kTick = 100ms;
// The bound on the metadata and committed-offset lookups of a SUBSCRIBE (docs/brokerd.md, "How
// it works").
constexpr auto kKafkaTimeout = 5000ms;

uint64_t MonotonicNanos() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

sockaddr_un SocketAddress(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

// The socket's folder is created when missing: the default /run/sluice is on a tmpfs that starts
// empty. Owner-only, or with an access group searchable by it and nothing more (0710: a peer
// needs only to reach the socket, not to list the folder), the group given before the mode opens
// it. Missing parents are created alike; an existing folder is the operator's and is used as it
// is (docs/brokerd.md, "Configuration" and "Security model").
Status CreateSocketFolder(const std::string& socket_path, const std::optional<gid_t>& group) {
  const std::filesystem::path folder = std::filesystem::path(socket_path).parent_path();
  const mode_t mode = group ? 0710 : 0700;
  std::filesystem::path path;
  for (const std::filesystem::path& part : folder) {
    path /= part;
    if (::mkdir(path.c_str(), 0700) == 0) {
      if (group && ::chown(path.c_str(), static_cast<uid_t>(-1), *group) != 0) {
        return Status::FromErrno(
            "sluice.access.group = " + std::to_string(*group) + ": chown " + path.string(), errno);
      }
      // mkdir applies the umask, which may take more than group and others' bits.
      if (::chmod(path.c_str(), mode) != 0) {
        return Status::FromErrno("sluice.socket = " + socket_path + ": chmod " + path.string(),
                                 errno);
      }
      Log(LogLevel::kInfo, "socket_folder_created",
          {{"folder", path.string()},
           {"mode", group ? "0710" : "0700"},
           {"group", group ? std::to_string(*group) : "none"}});
      continue;
    }
    const int err = errno;
    struct stat info {};
    if (err == EEXIST && ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) continue;
    if (err == EEXIST) {
      return Status::InvalidArgument("sluice.socket = " + socket_path + ": " + path.string() +
                                     " is not a folder");
    }
    return Status::FromErrno(
        "sluice.socket = " + socket_path + ": cannot create its folder " + path.string(), err);
  }
  return Status::OK();
}

// A file left by a previous daemon: a socket nobody answers on is removed, anything else stays
// and is an error, so that two daemons never share a socket.
Status ClaimSocketPath(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    return errno == ENOENT ? Status::OK() : Status::FromErrno("sluice.socket " + path, errno);
  }
  if (!S_ISSOCK(info.st_mode)) {
    return Status::InvalidArgument("sluice.socket = " + path + ": exists and is not a socket");
  }
  const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_un address = SocketAddress(path);
  const bool answered =
      ::connect(probe, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  ::close(probe);
  if (answered) {
    return Status::InvalidArgument("sluice.socket = " + path + ": another daemon listens on it");
  }
  ::unlink(path.c_str());
  return Status::OK();
}

// A planner's questions to Kafka, asked through a fetch session's librdkafka handle.
class SessionDirectory final : public PartitionDirectory {
 public:
  explicit SessionDirectory(FetchSession& session) : session_(session) {}

  Result<std::vector<PartitionLeader>> Describe(const std::string& topic) override {
    return session_.Describe(topic, kKafkaTimeout);
  }
  Result<std::map<int32_t, int64_t>> Committed(const std::string& topic,
                                               const std::vector<int32_t>& partitions) override {
    return session_.Committed(topic, partitions, kKafkaTimeout);
  }

 private:
  FetchSession& session_;
};

}  // namespace

Result<std::unique_ptr<ControlServer>> ControlServer::Listen(const DaemonConfig& config,
                                                             Metrics& metrics) {
  if (config.socket_path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Status::InvalidArgument("sluice.socket = " + config.socket_path + ": longer than " +
                                   std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes");
  }
  SLUICE_ASSIGN_OR_RETURN(SegmentNames names, SegmentNames::ForThisRun());
  names.RemoveLeftovers(config.segment_dir);
  RemoveDeadProducerSegments(config.segment_dir);
  // A doorbell is a Unix socket beside its segment, and its path must fit sun_path: without one
  // the pump and the readers still work, but poll up to 1 ms where a byte would wake them
  // (docs/formats.md, "Doorbell").
  if (names.LongestPathIn(config.segment_dir) >= sizeof(sockaddr_un::sun_path)) {
    Log(LogLevel::kWarn, "segment_dir_too_long_for_doorbells",
        {{"segment_dir", config.segment_dir},
         {"max_bytes", std::to_string(config.segment_dir.size() + sizeof(sockaddr_un::sun_path) -
                                      1 - names.LongestPathIn(config.segment_dir))}});
  }
  SLUICE_RETURN_NOT_OK(CreateSocketFolder(config.socket_path, config.access_group));
  SLUICE_RETURN_NOT_OK(ClaimSocketPath(config.socket_path));
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listener < 0) return Status::FromErrno("control socket", errno);
  const sockaddr_un address = SocketAddress(config.socket_path);
  // Owner-only from the first instant: the umask covers the window before the access group, if
  // any, gets the socket (0660), which is before it listens.
  const mode_t previous = ::umask(0177);
  const int bound = ::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  ::umask(previous);
  Status shared =
      bound == 0 ? ShareSocketFile(config.socket_path, {.group = config.access_group, .user = {}})
                 : Status::FromErrno("bind " + config.socket_path, errno);
  if (shared.ok() && ::listen(listener, 64) != 0) {
    shared = Status::FromErrno("listen on " + config.socket_path, errno);
  }
  const int wake_fd = shared.ok() ? ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
  if (shared.ok() && wake_fd < 0) shared = Status::FromErrno("eventfd", errno);
  if (!shared.ok()) {
    ::close(listener);
    return shared;
  }
  return std::unique_ptr<ControlServer>(
      new ControlServer(config, metrics, listener, wake_fd, std::move(names)));
}

ControlServer::ControlServer(const DaemonConfig& config, Metrics& metrics, int listener,
                             int wake_fd, SegmentNames names)
    : config_(config),
      metrics_(metrics),
      listener_(listener),
      wake_fd_(wake_fd),
      names_(std::move(names)),
      producer_counters_(LocalProducerMetrics(metrics)),
      planner_(config),
      connections_gauge_(metrics.gauge("sluice_connections", "Open reader connections")),
      subscriptions_gauge_(metrics.gauge("sluice_subscriptions", "Active subscriptions")) {}

ControlServer::~ControlServer() {
  stopping_ = true;
  for (auto& connection : connections_) Drop(*connection, "daemon stopping");
  connections_.clear();
  sessions_.clear();
  ::close(listener_);
  ::close(wake_fd_);
  ::unlink(config_.socket_path.c_str());
}

bool ControlServer::Allowed(const ucred& peer) const {
  if (config_.allowed_uids.empty() && config_.allowed_gids.empty()) return peer.uid == ::geteuid();
  return std::ranges::find(config_.allowed_uids, peer.uid) != config_.allowed_uids.end() ||
         std::ranges::find(config_.allowed_gids, peer.gid) != config_.allowed_gids.end();
}

Status ControlServer::Run(int stop_fd) {
  Clock::time_point next_tick = Clock::now();
  while (true) {
    std::vector<pollfd> fds{{stop_fd, POLLIN, 0}, {listener_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    constexpr size_t kFirstConnection = 3;
    // A connection whose PRODUCE is pending is not read (poll passes over a negative fd).
    for (const auto& connection : connections_) {
      fds.push_back({connection->pending ? -1 : connection->fd, POLLIN, 0});
    }
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_tick - Clock::now());
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::max(wait, 0ms).count()));
    if (ready < 0 && errno != EINTR) return Status::FromErrno("poll", errno);
    if (fds[0].revents != 0) break;
    if (fds[1].revents != 0) Accept();
    if (fds[2].revents != 0) FinishPendingProduces();
    for (size_t i = kFirstConnection; i < fds.size(); ++i) {
      if (fds[i].revents != 0) Receive(*connections_[i - kFirstConnection]);
    }
    if (Clock::now() >= next_tick) {
      Tick();
      next_tick = Clock::now() + kTick;
    }
    std::erase_if(connections_, [](const auto& connection) { return connection->closing; });
    connections_gauge_.Set(static_cast<int64_t>(connections_.size()));
  }
  Log(LogLevel::kInfo, "stopping", {{"connections", std::to_string(connections_.size())}});
  stopping_ = true;
  for (auto& connection : connections_) {
    // Frames that arrived before the signal (a last RELEASE, say) are served first.
    Receive(*connection);
    if (connection->closing) continue;
    SendError(*connection, 0, 0, ErrorCode::kShuttingDown, "the daemon is stopping");
    Drop(*connection, "daemon stopping");
  }
  connections_.clear();
  sessions_.clear();
  return Status::OK();
}

void ControlServer::Accept() {
  while (true) {
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN: accepted them all; anything else: the peer is gone already
    auto connection = std::make_unique<Connection>();
    connection->fd = fd;
    connection->last_received = connection->last_sent = Clock::now();
    socklen_t length = sizeof(connection->peer);
    const bool known = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &connection->peer, &length) == 0;
    const std::string uid = known ? std::to_string(connection->peer.uid) : "?";
    if (!known || !Allowed(connection->peer)) {
      Log(LogLevel::kWarn, "peer_refused",
          {{"uid", uid},
           {"gid", known ? std::to_string(connection->peer.gid) : "?"},
           {"pid", known ? std::to_string(connection->peer.pid) : "?"}});
      SendError(*connection, 0, 0, ErrorCode::kNotAuthorized,
                "uid " + uid + " is not allowed on this socket (sluice.allowed.uids / gids)");
      Drop(*connection, "not authorized");
      continue;
    }
    Log(LogLevel::kInfo, "peer_connected",
        {{"uid", uid}, {"pid", std::to_string(connection->peer.pid)}});
    // The first heartbeat tells the reader how soon the daemon gives up on a silent peer.
    Send(*connection, 0,
         protocol::Heartbeat{
             MonotonicNanos(),
             static_cast<uint64_t>(std::chrono::nanoseconds(config_.liveness_timeout).count())});
    connections_.push_back(std::move(connection));
  }
}

void ControlServer::Receive(Connection& connection) {
  if (connection.closing || connection.pending) return;
  const Status read = connection.reader.ReadFrom(connection.fd);
  if (read.code() == StatusCode::kEndOfStream) {
    Drop(connection, "peer closed the connection");
    return;
  }
  if (read.code() == StatusCode::kIoError) {
    Drop(connection, read.message());  // the socket failed: nobody to tell
    return;
  }
  if (!read.ok()) {
    SendError(connection, 0, 0, ErrorCode::kBadFrame, read.message());
    Drop(connection, read.message());
    return;
  }
  connection.last_received = Clock::now();
  ServeFrames(connection);
}

void ControlServer::ServeFrames(Connection& connection) {
  while (!connection.closing && !connection.pending) {
    std::optional<std::vector<uint8_t>> bytes = connection.reader.NextFrame();
    if (!bytes.has_value()) return;
    Result<protocol::FrameHeader> header = protocol::DecodeHeader(*bytes);
    if (!header.ok()) {
      const ErrorCode code = protocol::RefusalCode(*bytes);
      // The reader may not speak the version of its last frame: UNSUPPORTED_VERSION goes in
      // version 1, whose ERROR every version reads (docs/formats.md, "Versions").
      if (code == ErrorCode::kUnsupportedVersion) connection.version = protocol::kMinVersion;
      SendError(connection, 0, 0, code, header.status().message());
      Drop(connection, header.status().message());
      return;
    }
    // A readable header: the answer carries its request id, in its version (docs/formats.md,
    // "ERROR"), and a message only the daemon sends is refused for what it is, whatever its body.
    connection.version = header->version;
    if (!protocol::SentByClient(header->type)) {
      const std::string name(protocol::NameOf(header->type));
      SendError(connection, header->request_id, 0, ErrorCode::kUnexpectedMessage,
                "type = " + name + ": only the daemon sends it");
      Drop(connection, "unexpected " + name);
      return;
    }
    Result<protocol::Frame> frame = protocol::DecodeFrame(*bytes);
    if (!frame.ok()) {
      SendError(connection, header->request_id, 0, ErrorCode::kBadFrame, frame.status().message());
      Drop(connection, frame.status().message());
      return;
    }
    Handle(connection, *frame);
  }
}

void ControlServer::Handle(Connection& connection, const protocol::Frame& frame) {
  const uint64_t request = frame.request_id;
  if (const auto* subscribe = std::get_if<protocol::Subscribe>(&frame.message)) {
    Subscribe(connection, request, *subscribe);
  } else if (const auto* release = std::get_if<protocol::Release>(&frame.message)) {
    auto it = connection.subscriptions.find(release->subscription_id);
    if (it == connection.subscriptions.end()) {
      SendError(connection, request, release->subscription_id, ErrorCode::kUnknownSubscription,
                "subscription_id = " + std::to_string(release->subscription_id) +
                    ": not a subscription of this connection");
      return;
    }
    const Status status = it->second->SetProcessedThrough(release->processed_through);
    if (!status.ok()) {
      SendError(connection, request, release->subscription_id, ErrorCode::kBadRequest,
                status.message());
    }
  } else if (const auto* heartbeat = std::get_if<protocol::Heartbeat>(&frame.message)) {
    connection.peer_timeout = std::chrono::nanoseconds(heartbeat->timeout_ns);
  } else if (const auto* produce = std::get_if<protocol::Produce>(&frame.message)) {
    Produce(connection, request, *produce);
  } else if (const auto* close = std::get_if<protocol::Close>(&frame.message)) {
    // The last message a client sends (protocol::SentByClient): Receive refused the others.
    if (!CloseNamed(connection, close->subscription_id)) {
      SendError(connection, request, close->subscription_id, ErrorCode::kUnknownSubscription,
                "subscription_id = " + std::to_string(close->subscription_id) +
                    ": not a subscription or producer of this connection");
    }
  }
}

bool ControlServer::CloseNamed(Connection& connection, uint64_t id) {
  if (id == protocol::kAllSubscriptions) {
    // Producers first: what they published reaches the connection's subscriptions too.
    while (!connection.producers.empty()) {
      EndProducer(connection, connection.producers.begin()->first);
    }
    while (!connection.subscriptions.empty()) {
      EndSubscription(connection, connection.subscriptions.begin()->first);
    }
    return true;
  }
  if (connection.producers.contains(id)) {
    EndProducer(connection, id);
    return true;
  }
  if (connection.subscriptions.contains(id)) {
    EndSubscription(connection, id);
    return true;
  }
  return false;
}

void ControlServer::Produce(Connection& connection, uint64_t request_id,
                            const protocol::Produce& request) {
  // A producer writes only the chunk topics its produce grants match: a grant to read a topic is
  // none to write into its readers' streams (docs/brokerd.md, "Security model").
  if (std::optional<std::string> refusal =
          config_.produce_acl.Refusal(connection.peer.uid, connection.peer.gid, request.topic)) {
    SendError(connection, request_id, 0, ErrorCode::kNotAuthorized, *refusal);
    return;
  }
  if (std::optional<std::string> refusal = ProducerLimitRefusal(connection.peer.uid)) {
    SendError(connection, request_id, 0, ErrorCode::kSubscriptionLimit, *refusal);
    return;
  }
  auto pending = std::make_unique<PendingProduce>();
  pending->request_id = request_id;
  pending->id = planner_.TakeId();
  pending->request = request;
  pending->thread = std::thread([this, pending = pending.get(), uid = connection.peer.uid] {
    const uint64_t id = pending->id;
    // The segment must be the peer's own file (SO_PEERCRED's uid): the daemon, often root, must
    // not read a file on behalf of a peer that could not (docs/formats.md, "PRODUCE").
    Result<std::unique_ptr<LocalProducer>> started = LocalProducer::Start(
        id, pending->request.segment_path, uid, pending->request.topic, config_.segment_dir,
        local_chunks_, producer_counters_, [this, id](const std::string& message) {
          std::lock_guard lock(producer_failures_mutex_);
          producer_failures_.emplace(id, message);
        });
    {
      std::lock_guard lock(pending_mutex_);
      pending->started = std::move(started);
    }
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
  });
  connection.pending = std::move(pending);
}

void ControlServer::FinishPendingProduces() {
  uint64_t count = 0;
  (void)!::read(wake_fd_, &count, sizeof(count));
  for (auto& connection : connections_) {
    if (connection->closing || !connection->pending) continue;
    {
      std::lock_guard lock(pending_mutex_);
      if (!connection->pending->started.has_value()) continue;
    }
    const std::unique_ptr<PendingProduce> pending = std::move(connection->pending);
    pending->thread.join();
    Result<std::unique_ptr<LocalProducer>>& producer = *pending->started;
    if (!producer.ok()) {
      SendError(*connection, pending->request_id, 0, ErrorCode::kBadRequest,
                producer.status().message());
    } else {
      Log(LogLevel::kInfo, "producing",
          {{"producer", std::to_string(pending->id)},
           {"topic", pending->request.topic},
           {"segment", pending->request.segment_path},
           {"pid", std::to_string(connection->peer.pid)}});
      Send(*connection, pending->request_id, protocol::Producing{pending->id});
      connection->producers.emplace(pending->id, producer.MoveValue());
    }
    ServeFrames(*connection);
  }
}

std::optional<std::string> ControlServer::ProducerLimitRefusal(uid_t uid) const {
  size_t all = 0;
  size_t of_uid = 0;
  for (const auto& connection : connections_) {
    const size_t producers = connection->producers.size() + (connection->pending ? 1 : 0);
    all += producers;
    if (connection->peer.uid == uid) of_uid += producers;
  }
  if (of_uid >= config_.producers_max_per_uid) {
    return "uid " + std::to_string(uid) + " has " + std::to_string(of_uid) +
           " local producers, the limit of sluice.producers.max.per.uid";
  }
  if (all >= config_.producers_max) {
    return "the daemon has " + std::to_string(all) +
           " local producers, the limit of sluice.producers.max";
  }
  return std::nullopt;
}

void ControlServer::EndProducer(Connection& connection, uint64_t id) {
  auto it = connection.producers.find(id);
  if (it == connection.producers.end()) return;
  it->second->Stop();
  connection.producers.erase(it);
  {
    std::lock_guard lock(producer_failures_mutex_);
    producer_failures_.erase(id);
  }
  Log(LogLevel::kInfo, "producer_ended", {{"producer", std::to_string(id)}});
}

void ControlServer::EndEndedProducers(Connection& connection) {
  std::vector<uint64_t> ended;
  for (const auto& [id, producer] : connection.producers) {
    if (producer->ended()) ended.push_back(id);
  }
  for (uint64_t id : ended) {
    std::optional<std::string> failure;
    {
      std::lock_guard lock(producer_failures_mutex_);
      if (auto found = producer_failures_.find(id); found != producer_failures_.end()) {
        failure = found->second;
      }
    }
    // A writer that closed its segment or died ended it without failing: nobody to tell.
    if (failure.has_value()) SendError(connection, 0, id, ErrorCode::kBadRequest, *failure);
    EndProducer(connection, id);
  }
}

PlanOutcome ControlServer::Plan(const protocol::Subscribe& request, bool read_committed) {
  if (std::optional<SubscribeRefusal> refusal = planner_.Admit(
          request, {.subscriptions = subscription_count_, .segment_bytes = segment_bytes_})) {
    return *std::move(refusal);
  }
  // Metadata and committed offsets are asked through any session of the group and isolation
  // level: the subscription's own is chosen once its partitions are known.
  Result<FetchSession*> metadata = SessionFor(request.group_id, read_committed, "", {});
  if (!metadata.ok()) return SubscribeRefusal{ErrorCode::kInternal, metadata.status().message()};
  SessionDirectory directory(**metadata);
  return planner_.Plan(request, read_committed, directory);
}

Result<FetchSession*> ControlServer::SessionFor(const std::string& group_id, bool read_committed,
                                                const std::string& topic,
                                                const std::vector<int32_t>& partitions) {
  for (const auto& session : sessions_) {
    if (session->group_id() == group_id && session->read_committed() == read_committed &&
        session->CanTake(topic, partitions)) {
      return session.get();
    }
  }
  SLUICE_ASSIGN_OR_RETURN(auto session,
                          FetchSession::Create(config_.kafka, group_id, read_committed));
  Log(LogLevel::kInfo, "fetch_session_created",
      {{"group", group_id.empty() ? "-" : group_id},
       {"sessions", std::to_string(sessions_.size() + 1)},
       {"isolation", read_committed ? "read_committed" : "read_uncommitted"}});
  sessions_.push_back(std::move(session));
  return sessions_.back().get();
}

void ControlServer::Subscribe(Connection& connection, uint64_t request_id,
                              const protocol::Subscribe& request) {
  // A peer reads only the topics its grants match; refused, its connection goes on for the
  // topics it may read (docs/brokerd.md, "Security model").
  if (std::optional<std::string> refusal =
          config_.topic_acl.Refusal(connection.peer.uid, connection.peer.gid, request.topic)) {
    SendError(connection, request_id, 0, ErrorCode::kNotAuthorized, *refusal);
    return;
  }
  // The subscription's own isolation level from version 3 on; before, the daemon's
  // (docs/formats.md, SUBSCRIBE).
  const bool read_committed = connection.version >= protocol::kIsolationAndGapVersion
                                  ? !request.read_uncommitted
                                  : ReadsCommitted(config_.kafka);
  PlanOutcome outcome = Plan(request, read_committed);
  if (const auto* refusal = std::get_if<SubscribeRefusal>(&outcome)) {
    SendError(connection, request_id, 0, refusal->code, refusal->message);
    return;
  }
  SubscriptionPlan& plan = std::get<SubscriptionPlan>(outcome);
  plan.reader_uid = connection.peer.uid;
  std::vector<int32_t> partitions;
  for (const auto& [partition, offset] : plan.starts) partitions.push_back(partition);
  Result<FetchSession*> session =
      SessionFor(request.group_id, read_committed, plan.topic, partitions);
  if (!session.ok()) {
    SendError(connection, request_id, 0, ErrorCode::kInternal, session.status().message());
    return;
  }
  Result<std::unique_ptr<Subscription>> subscription =
      Subscription::Start(plan, **session, metrics_, names_, local_chunks_);
  if (!subscription.ok()) {
    // A segment folder with no room for the segment (a tmpfs too small) is a limit the reader
    // may meet again later, not a daemon failure; the daemon and its other subscriptions go on
    // (docs/brokerd.md, "Segment memory").
    const bool no_room = subscription.status().code() == StatusCode::kNoSpace;
    SendError(connection, request_id, 0,
              no_room ? ErrorCode::kSubscriptionLimit : ErrorCode::kInternal,
              subscription.status().message());
    return;
  }
  Log(LogLevel::kInfo, "subscribed",
      {{"subscription", std::to_string(plan.id)},
       {"topic", plan.topic},
       {"partitions", std::to_string(partitions.size())},
       {"segment", (*subscription)->segment_name()},
       {"group", request.group_id.empty() ? "-" : request.group_id},
       {"isolation", read_committed ? "read_committed" : "read_uncommitted"},
       {"pid", std::to_string(connection.peer.pid)}});
  protocol::Subscribed answer = (*subscription)->Answer();
  // A version-1 reader finds the segment in the folder it was configured with.
  if (connection.version < protocol::kSegmentDirVersion) answer.segment_dir.clear();
  Send(connection, request_id, std::move(answer));
  segment_bytes_ += (*subscription)->segment_bytes();
  connection.subscriptions.emplace(plan.id, subscription.MoveValue());
  ++subscription_count_;
  subscriptions_gauge_.Set(static_cast<int64_t>(subscription_count_));
}

void ControlServer::EndSubscription(Connection& connection, uint64_t id) {
  auto it = connection.subscriptions.find(id);
  if (it == connection.subscriptions.end()) return;
  it->second->Close();
  segment_bytes_ -= it->second->segment_bytes();
  connection.subscriptions.erase(it);
  --subscription_count_;
  subscriptions_gauge_.Set(static_cast<int64_t>(subscription_count_));
  Log(LogLevel::kInfo, "subscription_ended", {{"subscription", std::to_string(id)}});
}

void ControlServer::Send(Connection& connection, uint64_t request_id, protocol::Message message) {
  Result<std::vector<uint8_t>> bytes =
      protocol::EncodeFrame(protocol::Frame{request_id, std::move(message), connection.version});
  if (!bytes.ok()) {
    Log(LogLevel::kError, "encode_failed", {{"error", bytes.status().message()}});
    return;
  }
  // Frames are small and rare; a reader that does not read its socket until the kernel buffer is
  // full is not keeping up with its heartbeats either, and is dropped.
  std::span<const uint8_t> rest(*bytes);
  while (!rest.empty()) {
    const ssize_t sent = ::send(connection.fd, rest.data(), rest.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) {
      if (!connection.closing) Drop(connection, "cannot write to the peer");
      return;
    }
    rest = rest.subspan(static_cast<size_t>(sent));
  }
  connection.last_sent = Clock::now();
}

void ControlServer::SendError(Connection& connection, uint64_t request_id, uint64_t subscription_id,
                              ErrorCode code, const std::string& message) {
  metrics_
      .counter("sluice_errors_total", "Errors sent to readers, by kind",
               {{"kind", std::string(protocol::NameOf(code))}})
      .Add();
  Log(LogLevel::kWarn, "error_sent",
      {{"code", std::string(protocol::NameOf(code))},
       {"subscription", std::to_string(subscription_id)},
       {"message", message}});
  protocol::ErrorMessage error;
  error.subscription_id = subscription_id;
  error.code = code;
  // A message longer than str16 allows is cut: it is for people.
  error.message = message.substr(0, 4096);
  Send(connection, request_id, std::move(error));
}

void ControlServer::Drop(Connection& connection, const std::string& reason) {
  if (connection.closing) return;
  connection.closing = true;
  Log(LogLevel::kInfo, "peer_disconnected",
      {{"pid", std::to_string(connection.peer.pid)}, {"reason", reason}});
  if (connection.pending) {
    // Bounded by the doorbell's connect timeout; a producer started for a peer that is gone ends
    // with the connection's others.
    connection.pending->thread.join();
    if (connection.pending->started->ok()) {
      connection.producers.emplace(connection.pending->id,
                                   connection.pending->started->MoveValue());
    }
    connection.pending.reset();
  }
  // A killed producer's connection ends long before its heartbeat is stale: its segment and
  // doorbell go once what it published is taken. At the daemon's stop its producers live on and
  // remove their own (docs/brokerd.md, "Local producers").
  if (!stopping_) {
    for (auto& [id, producer] : connection.producers) producer->StopAfterItsConnectionEnded();
  }
  CloseNamed(connection, protocol::kAllSubscriptions);
  ::close(connection.fd);
}

void ControlServer::Tick() {
  const Clock::time_point now = Clock::now();
  for (auto& connection : connections_) {
    if (connection->closing) continue;
    std::vector<uint64_t> failed;
    for (auto& [id, subscription] : connection->subscriptions) {
      if (auto failure = subscription->TakeFailure()) {
        SendError(*connection, 0, id, failure->code, failure->message);
        failed.push_back(id);
      }
    }
    for (uint64_t id : failed) EndSubscription(*connection, id);
    EndEndedProducers(*connection);
    if (connection->closing) continue;
    // A reader before version 3 has no STREAM_GAP: the daemon's log and metric tell of the gap
    // alone, as they did (docs/formats.md, "Versions").
    for (auto& [id, subscription] : connection->subscriptions) {
      for (protocol::StreamGap& gap : subscription->TakeGaps()) {
        if (connection->version >= protocol::kIsolationAndGapVersion) {
          Send(*connection, 0, std::move(gap));
        }
      }
    }
    // A connection whose PRODUCE is pending is not read meanwhile: its silence is the daemon's.
    if (!connection->pending && now - connection->last_received > config_.liveness_timeout) {
      // A slow request (metadata, committed offsets) blocks this loop, and frames that came
      // meanwhile wait unread: look before calling the peer silent.
      pollfd pending{connection->fd, POLLIN, 0};
      if (::poll(&pending, 1, 0) > 0) Receive(*connection);
      if (connection->closing) continue;
      if (now - connection->last_received > config_.liveness_timeout) {
        Drop(*connection,
             "no frame for " + std::to_string(config_.liveness_timeout.count()) + " ms");
        continue;
      }
    }
    const auto peer_timeout = connection->peer_timeout.count() > 0
                                  ? connection->peer_timeout
                                  : std::chrono::nanoseconds(config_.liveness_timeout);
    if (now - connection->last_sent >= peer_timeout / 4) {
      Send(*connection, 0,
           protocol::Heartbeat{
               MonotonicNanos(),
               static_cast<uint64_t>(std::chrono::nanoseconds(config_.liveness_timeout).count())});
    }
  }
  for (auto& session : sessions_) session->Serve();
  // A session outlives its last subscription only until here; the one used for metadata is
  // dropped too and recreated on the next SUBSCRIBE.
  std::erase_if(sessions_, [](const auto& session) { return session->empty(); });
}

}  // namespace sluice::brokerd
