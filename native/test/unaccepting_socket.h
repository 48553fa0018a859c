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

#include "listening_socket.h"

namespace sluice::testing {

class UnacceptingSocket {
 public:
  explicit UnacceptingSocket(std::string path)
      : listening_(std::move(path), 0), error_(listening_.error()) {
    if (!error_.empty()) return;
    // Connections the listener never accepts fill its backlog, until one fails with EAGAIN.
    const sockaddr_un address = listening_.address();
    for (;;) {
      const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
        waiting_.push_back(fd);
        continue;
      }
      const int err = errno;
      ::close(fd);
      if (err != EAGAIN) error_ = "connect " + listening_.path() + ": " + std::strerror(err);
      return;
    }
  }
  ~UnacceptingSocket() {
    for (const int fd : waiting_) ::close(fd);
  }
  UnacceptingSocket(const UnacceptingSocket&) = delete;
  UnacceptingSocket& operator=(const UnacceptingSocket&) = delete;

  // Empty when the socket listens with a full backlog; else what went wrong.
  const std::string& error() const { return error_; }

 private:
  ListeningSocket listening_;  // closed and unlinked after the waiting connections
  std::vector<int> waiting_;
  std::string error_;
};

}  // namespace sluice::testing
