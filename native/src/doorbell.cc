#include "sluice/doorbell.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

#include "sluice/file_access.h"

namespace sluice {
namespace {

Result<sockaddr_un> SocketAddress(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) {
    return Status::InvalidArgument("doorbell path " + path + " is longer than " +
                                   std::to_string(sizeof(address.sun_path) - 1) + " bytes");
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

int PollTimeoutMs(std::chrono::nanoseconds timeout) {
  // Round up so that a short wait does not turn into a busy poll with timeout 0.
  const auto ms = (timeout.count() + 999'999) / 1'000'000;
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 60'000));
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

Result<DoorbellServer> DoorbellServer::Listen(std::string path, uint32_t lane_count,
                                              const Sharing& sharing) {
  SLUICE_ASSIGN_OR_RETURN(const sockaddr_un address, SocketAddress(path));
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno("socket", errno);
  DoorbellServer server(std::move(path), fd, lane_count, sharing);
  unlink(server.path_.c_str());
  // Bind under a umask that leaves the socket file 0600 from its first instant; the group, if
  // any, gets it before it is listening (and before its name is the segment's, docs/formats.md
  // "File layout").
  const mode_t old_mask = umask(0177);
  const int bound = bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  const int bind_errno = errno;
  umask(old_mask);
  if (bound != 0) return Status::FromErrno("bind " + server.path_, bind_errno);
  SLUICE_RETURN_NOT_OK(ShareSocketFile(server.path_, sharing));
  if (listen(fd, static_cast<int>(lane_count) + 4) != 0) {
    return Status::FromErrno("listen " + server.path_, errno);
  }
  return server;
}

DoorbellServer::DoorbellServer(std::string path, int listen_fd, uint32_t lane_count,
                               Sharing sharing)
    : path_(std::move(path)), listen_fd_(listen_fd), sharing_(sharing), lane_fds_(lane_count, -1) {}

DoorbellServer::DoorbellServer(DoorbellServer&& other) noexcept
    : path_(std::move(other.path_)),
      listen_fd_(std::exchange(other.listen_fd_, -1)),
      sharing_(other.sharing_),
      lane_fds_(std::move(other.lane_fds_)),
      pending_fds_(std::move(other.pending_fds_)) {
  other.lane_fds_.clear();
  other.pending_fds_.clear();
}

DoorbellServer::~DoorbellServer() {
  for (int& fd : lane_fds_) CloseFd(fd);
  for (int& fd : pending_fds_) CloseFd(fd);
  if (listen_fd_ >= 0) {
    CloseFd(listen_fd_);
    unlink(path_.c_str());
  }
}

void DoorbellServer::AcceptPending() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    ucred peer{};
    socklen_t length = sizeof(peer);
    // With an access group the socket file's mode is the check: SO_PEERCRED names the peer's
    // primary gid only, and a member may hold the group as a supplementary one.
    const bool known = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0;
    const bool allowed =
        sharing_.group.has_value() || peer.uid == geteuid() || peer.uid == sharing_.user;
    if (!known || !allowed) {
      close(fd);
      continue;
    }
    pending_fds_.push_back(fd);
    Identify(pending_fds_.size() - 1);
  }
}

void DoorbellServer::Identify(size_t pending_index) {
  int& fd = pending_fds_[pending_index];
  uint8_t lane = 0;
  const ssize_t n = recv(fd, &lane, 1, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // its byte is still coming
  if (n == 1 && lane < lane_fds_.size()) {
    CloseFd(lane_fds_[lane]);  // a newer reader of the lane replaces the old connection
    lane_fds_[lane] = fd;
    bool closed = false;
    Drain(fd, &closed);  // later bytes are wakeups already pending
    if (closed) CloseFd(lane_fds_[lane]);
  } else {
    close(fd);
  }
  pending_fds_.erase(pending_fds_.begin() + static_cast<std::ptrdiff_t>(pending_index));
}

void DoorbellServer::Drain(int fd, bool* closed) {
  uint8_t buffer[64];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n > 0) continue;
    *closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    return;
  }
}

void DoorbellServer::Ring(uint32_t lane) {
  if (lane >= lane_fds_.size()) return;
  if (lane_fds_[lane] < 0) AcceptPending();
  if (lane_fds_[lane] < 0) return;
  const uint8_t byte = 1;
  // A full socket buffer means wakeups are already pending: nothing to add.
  send(lane_fds_[lane], &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

Status DoorbellServer::MoveTo(std::string path) {
  if (rename(path_.c_str(), path.c_str()) != 0) {
    return Status::FromErrno("rename " + path_ + " to " + path, errno);
  }
  path_ = std::move(path);
  return Status::OK();
}

void DoorbellServer::Drop(uint32_t lane) {
  if (lane < lane_fds_.size()) CloseFd(lane_fds_[lane]);
}

bool DoorbellServer::Wait(std::chrono::nanoseconds timeout) {
  std::vector<pollfd> fds;
  fds.push_back({listen_fd_, POLLIN, 0});
  for (int fd : lane_fds_) {
    if (fd >= 0) fds.push_back({fd, POLLIN, 0});
  }
  for (int fd : pending_fds_) fds.push_back({fd, POLLIN, 0});
  if (poll(fds.data(), fds.size(), PollTimeoutMs(timeout)) <= 0) return false;
  for (int& fd : lane_fds_) {
    if (fd < 0) continue;
    bool closed = false;
    Drain(fd, &closed);
    if (closed) CloseFd(fd);
  }
  for (size_t i = pending_fds_.size(); i-- > 0;) Identify(i);
  AcceptPending();
  return true;
}

Result<DoorbellClient> DoorbellClient::Connect(const std::string& path, uint32_t lane,
                                               std::chrono::nanoseconds timeout) {
  SLUICE_ASSIGN_OR_RETURN(const sockaddr_un address, SocketAddress(path));
  return ConnectTo(address, path, lane, timeout);
}

Result<DoorbellClient> DoorbellClient::ConnectInFolder(const DoorbellInFolder& doorbell,
                                                       uint32_t lane,
                                                       std::chrono::nanoseconds timeout) {
  const int fd = openat(doorbell.folder, doorbell.name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("open " + doorbell.path, errno);
  auto connect_checked = [&]() -> Result<DoorbellClient> {
    struct stat info {};
    if (fstat(fd, &info) != 0) return Status::FromErrno("fstat " + doorbell.path, errno);
    if (S_ISLNK(info.st_mode)) {
      return Status::InvalidArgument(doorbell.path + " is a symbolic link, not a socket");
    }
    if (!S_ISSOCK(info.st_mode)) return Status::InvalidArgument(doorbell.path + " is no socket");
    if (info.st_uid != doorbell.owner) {
      return Status::InvalidArgument(doorbell.path + " is a socket of uid " +
                                     std::to_string(info.st_uid) + ", not of uid " +
                                     std::to_string(doorbell.owner));
    }
    // The descriptor's own link in /proc names the socket it was opened on, whatever the name
    // in the folder holds by now; the connect follows that link alone.
    SLUICE_ASSIGN_OR_RETURN(const sockaddr_un address,
                            SocketAddress("/proc/self/fd/" + std::to_string(fd)));
    return ConnectTo(address, doorbell.path, lane, timeout);
  };
  Result<DoorbellClient> client = connect_checked();
  close(fd);
  return client;
}

Result<DoorbellClient> DoorbellClient::ConnectTo(const sockaddr_un& address,
                                                 const std::string& what, uint32_t lane,
                                                 std::chrono::nanoseconds timeout) {
  DoorbellClient client(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (client.fd_ < 0) return Status::FromErrno("socket", errno);
  // A Unix socket's non-blocking connect does not wait in the kernel (there is nothing to poll
  // for): it fails with EAGAIN while the listener's backlog is full, so it is tried again, backing
  // off, until the bound.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(100);
  while (connect(client.fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EAGAIN) return Status::FromErrno("connect " + what, err);
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::TimedOut(
          "connect " + what + ": the doorbell took no connection within " +
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()) +
          " ms");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
  const auto byte = static_cast<uint8_t>(lane);
  if (send(client.fd_, &byte, 1, MSG_NOSIGNAL) != 1) {
    return Status::FromErrno("send to " + what, errno);
  }
  return client;
}

DoorbellClient::DoorbellClient(DoorbellClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), hung_up_(other.hung_up_) {}

DoorbellClient& DoorbellClient::operator=(DoorbellClient&& other) noexcept {
  if (this != &other) {
    CloseFd(fd_);
    fd_ = std::exchange(other.fd_, -1);
    hung_up_ = other.hung_up_;
  }
  return *this;
}

DoorbellClient::~DoorbellClient() { CloseFd(fd_); }

void DoorbellClient::Ring() {
  if (fd_ < 0) return;
  const uint8_t byte = 1;
  send(fd_, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

bool DoorbellClient::Wait(std::chrono::nanoseconds timeout, int interrupt_fd) {
  if (!connected()) return false;
  pollfd fds[2] = {{fd_, POLLIN, 0}, {interrupt_fd, POLLIN, 0}};
  if (poll(fds, interrupt_fd >= 0 ? 2 : 1, PollTimeoutMs(timeout)) <= 0 || fds[0].revents == 0) {
    return true;
  }
  uint8_t buffer[64];
  for (;;) {
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    hung_up_ = true;  // the socket is closed by the destructor, not under a concurrent Ring
    return false;
  }
}

}  // namespace sluice
