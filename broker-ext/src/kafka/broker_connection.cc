#include "kafka/broker_connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sluice::brokerd::kafka {
namespace {

// A broker that stops halfway through a response is as good as dead.
constexpr timeval kStallTimeout{30, 0};

}  // namespace

Result<std::unique_ptr<BrokerConnection>> BrokerConnection::Connect(
    const std::string& address, std::chrono::milliseconds timeout) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return Status::InvalidArgument("broker address " + address + ": not host:port");
  }
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Status(StatusCode::kIoError, "broker " + address + ": " + ::gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, &::freeaddrinfo);
  int last_error = ECONNREFUSED;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      last_error = errno;
      continue;
    }
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd waiting{fd, POLLOUT, 0};
      rc = ::poll(&waiting, 1, static_cast<int>(timeout.count()));
      int error = rc == 0 ? ETIMEDOUT : 0;
      socklen_t length = sizeof(error);
      if (rc > 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
      rc = error == 0 ? 0 : -1;
      errno = error;
    }
    if (rc != 0) {
      last_error = errno;
      ::close(fd);
      continue;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &kStallTimeout, sizeof(kStallTimeout));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &kStallTimeout, sizeof(kStallTimeout));
    return std::unique_ptr<BrokerConnection>(new BrokerConnection(fd, address));
  }
  return Status(StatusCode::kIoError,
                "connect to broker " + address + ": " + std::strerror(last_error));
}

BrokerConnection::~BrokerConnection() { ::close(fd_); }

Status BrokerConnection::Error(const std::string& what, int error) const {
  return Status(StatusCode::kIoError,
                what + " broker " + address_ + ": " +
                    (error == 0 ? "connection closed" : std::strerror(error)));
}

Status BrokerConnection::Send(std::string_view frame) {
  while (!frame.empty()) {
    const ssize_t sent = ::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return Error("send to", sent < 0 ? errno : 0);
    frame.remove_prefix(static_cast<size_t>(sent));
  }
  return Status::OK();
}

void BrokerConnection::Shutdown() { ::shutdown(fd_, SHUT_RDWR); }

Status BrokerConnection::Receive(FrameBuffer& buffer, size_t max_frame) {
  auto read_exactly = [this](char* into, size_t length) -> Status {
    while (length > 0) {
      const ssize_t got = ::recv(fd_, into, length, MSG_WAITALL);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return Error("receive from", got < 0 ? errno : 0);
      into += got;
      length -= static_cast<size_t>(got);
    }
    return Status::OK();
  };
  uint32_t size_be = 0;
  SLUICE_RETURN_NOT_OK(read_exactly(reinterpret_cast<char*>(&size_be), sizeof(size_be)));
  const auto size = static_cast<int32_t>(__builtin_bswap32(size_be));
  if (size < 4 || static_cast<size_t>(size) > max_frame) {
    return Status(StatusCode::kIoError, "broker " + address_ + " sent a response of " +
                                            std::to_string(size) + " bytes, beyond " +
                                            std::to_string(max_frame));
  }
  if (buffer.capacity < static_cast<size_t>(size)) {
    buffer.bytes.reset(new char[static_cast<size_t>(size)]);
    buffer.capacity = static_cast<size_t>(size);
  }
  buffer.size = 0;
  SLUICE_RETURN_NOT_OK(read_exactly(buffer.bytes.get(), static_cast<size_t>(size)));
  buffer.size = static_cast<size_t>(size);
  return Status::OK();
}

}  // namespace sluice::brokerd::kafka
