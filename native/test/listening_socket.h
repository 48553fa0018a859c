// A Unix socket that listens and tells whether anybody connected to it: the target a doorbell's
// name might be made to lead to, another's socket or the daemon's own, which a reader that does
// not trust the writer must never connect (docs/formats.md, "Doorbell"). Header-only, so
// broker-ext's tests share it through native/test on their include path.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

namespace sluice::testing {

class ListeningSocket {
 public:
  explicit ListeningSocket(std::string path, int backlog = 8) : path_(std::move(path)) {
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_un bound = address();
    if (::bind(listener_, reinterpret_cast<const sockaddr*>(&bound), sizeof(bound)) != 0 ||
        ::listen(listener_, backlog) != 0) {
      error_ = std::string("bind or listen ") + path_ + ": " + std::strerror(errno);
    }
  }
  ~ListeningSocket() {
    if (accepted_ >= 0) ::close(accepted_);
    ::close(listener_);
    ::unlink(path_.c_str());
  }
  ListeningSocket(const ListeningSocket&) = delete;
  ListeningSocket& operator=(const ListeningSocket&) = delete;

  // Empty when the socket listens; else what went wrong.
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }
  sockaddr_un address() const {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path_.c_str(), sizeof(address.sun_path) - 1);
    return address;
  }

  // Whether a connection waits to be accepted: a connect has reached the socket.
  bool HasAConnection() const {
    pollfd fd{listener_, POLLIN, 0};
    return ::poll(&fd, 1, 0) == 1;
  }

  // Accepts the connection waiting and reads its first byte, waiting up to `timeout_ms` for it
  // (a doorbell's reader sends its lane); -1 when no connection or no byte came.
  int AcceptAndReadAByte(int timeout_ms) {
    if (!HasAConnection()) return -1;
    accepted_ = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (accepted_ < 0) return -1;
    pollfd fd{accepted_, POLLIN, 0};
    uint8_t byte = 0;
    if (::poll(&fd, 1, timeout_ms) != 1 || ::recv(accepted_, &byte, 1, 0) != 1) return -1;
    return byte;
  }

 private:
  std::string path_;
  int listener_ = -1;
  int accepted_ = -1;
  std::string error_;
};

}  // namespace sluice::testing
