#include "daemon/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

namespace sluice::brokerd {
namespace {

constexpr int kReadTimeoutMs = 1000;
constexpr size_t kMaxRequestBytes = 8192;

Status Errno(const std::string& what) {
  return Status(StatusCode::kIoError, what + ": " + std::strerror(errno));
}

void SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t sent = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return;  // The scraper went away; nothing to tell it.
    data.remove_prefix(static_cast<size_t>(sent));
  }
}

std::string Response(std::string_view status, std::string_view type, std::string_view body) {
  return "HTTP/1.0 " + std::string(status) + "\r\nContent-Type: " + std::string(type) +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         std::string(body);
}

}  // namespace

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const ListenAddress& address,
                                                            const Metrics& metrics) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  if (inet_pton(AF_INET, address.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(address.port);
    length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, address.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(address.port);
    length = sizeof(sockaddr_in6);
  } else {
    return Status::InvalidArgument("sluice.metrics.listen: \"" + address.host +
                                   "\" is not an IP address");
  }
  const int listener = ::socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return Errno("metrics socket");
  const int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(listener, reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
      ::listen(listener, 16) != 0) {
    Status status = Errno("metrics listen on " + address.host + ":" + std::to_string(address.port));
    ::close(listener);
    return status;
  }
  length = sizeof(storage);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&storage), &length);
  const uint16_t port = ntohs(storage.ss_family == AF_INET ? v4->sin_port : v6->sin6_port);
  const int stop_fd = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd < 0) {
    ::close(listener);
    return Errno("metrics eventfd");
  }
  return std::unique_ptr<MetricsServer>(new MetricsServer(listener, stop_fd, port, metrics));
}

MetricsServer::MetricsServer(int listener, int stop_fd, uint16_t port, const Metrics& metrics)
    : listener_(listener), stop_fd_(stop_fd), port_(port), metrics_(metrics) {
  thread_ = std::thread([this] { Serve(); });
}

MetricsServer::~MetricsServer() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t written = ::write(stop_fd_, &one, sizeof(one));
  thread_.join();
  ::close(listener_);
  ::close(stop_fd_);
}

void MetricsServer::Serve() {
  std::array<pollfd, 2> fds{{{listener_, POLLIN, 0}, {stop_fd_, POLLIN, 0}}};
  while (true) {
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    const int connection = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    Answer(connection);
    ::close(connection);
  }
}

void MetricsServer::Answer(int connection) {
  std::string request;
  std::array<char, 1024> buffer{};
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequestBytes) {
    pollfd fd{connection, POLLIN, 0};
    if (::poll(&fd, 1, kReadTimeoutMs) <= 0) return;
    const ssize_t got = ::recv(connection, buffer.data(), buffer.size(), 0);
    if (got <= 0) return;
    request.append(buffer.data(), static_cast<size_t>(got));
  }
  const std::string_view line = std::string_view(request).substr(0, request.find("\r\n"));
  if (!line.starts_with("GET ")) {
    SendAll(connection, Response("405 Method Not Allowed", "text/plain", "only GET\n"));
  } else if (line.starts_with("GET /metrics ") || line == "GET /metrics") {
    SendAll(connection,
            Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", metrics_.Render()));
  } else {
    SendAll(connection, Response("404 Not Found", "text/plain", "see /metrics\n"));
  }
}

}  // namespace sluice::brokerd
