// A Unix socket that listens and never accepts, its backlog already full: a doorbell whose writer
// takes no connection, on which a blocking connect waits for as long as the socket lives
// (docs/formats.md, "Doorbell"). Header-only, so broker-ext's daemon tests share it through
// native/test on their include path.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace sluice::testing {

class UnacceptingSocket {
 public:
  explicit UnacceptingSocket(std::string path) : path_(std::move(path)) {
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_un address = Address();
    if (::bind(listener_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(listener_, 0) != 0) {
      error_ = std::string("bind or listen ") + path_ + ": " + std::strerror(errno);
      return;
    }
    // Connections the listener never accepts fill its backlog, until one fails with EAGAIN.
    for (;;) {
      const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
        waiting_.push_back(fd);
        continue;
      }
      const int err = errno;
      ::close(fd);
      if (err != EAGAIN) error_ = std::string("connect ") + path_ + ": " + std::strerror(err);
      return;
    }
  }
  ~UnacceptingSocket() {
    for (const int fd : waiting_) ::close(fd);
    ::close(listener_);
    ::unlink(path_.c_str());
  }
  UnacceptingSocket(const UnacceptingSocket&) = delete;
  UnacceptingSocket& operator=(const UnacceptingSocket&) = delete;

  // Empty when the socket listens with a full backlog; else what went wrong.
  const std::string& error() const { return error_; }

 private:
  sockaddr_un Address() const {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path_.c_str(), sizeof(address.sun_path) - 1);
    return address;
  }

  std::string path_;
  int listener_ = -1;
  std::vector<int> waiting_;
  std::string error_;
};

}  // namespace sluice::testing
