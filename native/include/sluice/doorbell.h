// The doorbell (docs/formats.md "Doorbell"): one Unix stream socket per segment that carries the
// rare wakeups of a parked side. A byte means only "look again"; all state is in the segment.
// Without it both sides still work, parking with a sleep backoff instead.
#pragma once

#include <sys/types.h>
#include <sys/un.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sluice/export.h"
#include "sluice/file_access.h"
#include "sluice/status.h"

namespace sluice {

// The writer's end: listens at <segment path>.bell and keeps one connection per lane.
class SLUICE_EXPORT DoorbellServer {
 public:
  // Binds and listens at `path` (shared as file_access.h says), replacing a stale socket file of
  // that name. The writer's own uid may connect, and `sharing.user`; with a group, whoever the
  // file's mode lets connect (the group's members, and root).
  static Result<DoorbellServer> Listen(std::string path, uint32_t lane_count,
                                       const Sharing& sharing = {});
  DoorbellServer(DoorbellServer&& other) noexcept;
  DoorbellServer& operator=(DoorbellServer&&) = delete;
  ~DoorbellServer();  // closes every connection and unlinks the socket file

  // Wakes the reader of `lane`, accepting waiting connections first when the lane has none yet.
  void Ring(uint32_t lane);
  // Waits up to `timeout` for a byte from any reader (or a new connection), then drains them;
  // false when the timeout passed with neither.
  bool Wait(std::chrono::nanoseconds timeout);
  // Renames the socket file (bound under a temporary name so that it appears with the segment).
  Status MoveTo(std::string path);
  // Forgets the connection of a reclaimed lane.
  void Drop(uint32_t lane);
  const std::string& path() const { return path_; }

 private:
  DoorbellServer(std::string path, int listen_fd, uint32_t lane_count, Sharing sharing);
  void AcceptPending();
  // Reads what a not-yet-identified connection sent; the first byte names its lane.
  void Identify(size_t pending_index);
  static void Drain(int fd, bool* closed);

  std::string path_;
  int listen_fd_ = -1;
  Sharing sharing_;
  std::vector<int> lane_fds_;
  std::vector<int> pending_fds_;
};

// A doorbell as a name in a folder the reader opened itself.
struct DoorbellInFolder {
  int folder = -1;   // open as a directory
  std::string name;  // the doorbell's in the folder
  uid_t owner = 0;   // whose socket it must be: the writer's
  std::string path;  // what errors call it
};

// A reader's end: the connection for one lane.
class SLUICE_EXPORT DoorbellClient {
 public:
  // How long Connect waits at most for a doorbell that takes no connection yet (its listen
  // backlog is full: a writer that never accepts).
  static constexpr std::chrono::milliseconds kConnectTimeout{1000};

  // Connects to `path` and sends the lane byte; fails when there is no doorbell to connect to,
  // and with kTimedOut when it took no connection within `timeout`. The socket is non-blocking
  // from the start: a blocking connect to a full backlog waits for as long as the writer pleases,
  // and so did the one thread of a reader that calls it (the daemon's control thread included).
  static Result<DoorbellClient> Connect(const std::string& path, uint32_t lane,
                                        std::chrono::nanoseconds timeout = kConnectTimeout);
  // The same for a reader that does not trust the writer (the daemon reading a producer's
  // segment, docs/brokerd.md "Local producers"): connected only if the doorbell's name is a
  // socket of its owner itself, not a link, which would lead the reader's connect to any socket
  // it may reach. The name is opened O_PATH | O_NOFOLLOW relative to the folder, that descriptor
  // checked by fstat and connected through /proc/self/fd/N, so a file swapped in between is
  // never the one connected. Anything else is kInvalidArgument naming what the name holds: no
  // doorbell, as a missing one is.
  static Result<DoorbellClient> ConnectInFolder(const DoorbellInFolder& doorbell, uint32_t lane,
                                                std::chrono::nanoseconds timeout = kConnectTimeout);
  DoorbellClient(DoorbellClient&& other) noexcept;
  DoorbellClient& operator=(DoorbellClient&& other) noexcept;
  ~DoorbellClient();

  bool connected() const { return fd_ >= 0 && !hung_up_; }
  // Wakes the writer. May be called from another thread than Wait's: the socket stays open until
  // the client is destroyed, so a ring never goes to a descriptor Wait closed (and the process
  // reused); a ring after the writer hung up is lost, as there is nobody to wake.
  void Ring();
  // Waits up to `timeout` for a byte from the writer and drains it, or until `interrupt_fd`, if
  // any, is readable; false when the writer hung up, after which the client is disconnected and
  // the caller parks with a backoff.
  bool Wait(std::chrono::nanoseconds timeout, int interrupt_fd = -1);

 private:
  explicit DoorbellClient(int fd) : fd_(fd) {}
  // Connects to the socket at `address` without blocking, for at most `timeout`, and sends the
  // lane byte; `what` names the doorbell in errors.
  static Result<DoorbellClient> ConnectTo(const sockaddr_un& address, const std::string& what,
                                          uint32_t lane, std::chrono::nanoseconds timeout);
  int fd_ = -1;
  bool hung_up_ = false;  // Wait's thread alone reads and writes it
};

}  // namespace sluice
