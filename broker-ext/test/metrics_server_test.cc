#include "daemon/metrics_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <string>

#include "gtest_util.h"

namespace sluice::brokerd {
namespace {

// Sends `request` to 127.0.0.1:port and returns the whole response.
std::string Exchange(uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  EXPECT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string response;
  std::array<char, 4096> buffer{};
  ssize_t got = 0;
  while ((got = ::recv(fd, buffer.data(), buffer.size(), 0)) > 0) {
    response.append(buffer.data(), static_cast<size_t>(got));
  }
  ::close(fd);
  return response;
}

TEST(MetricsServer, ServesTheRenderedMetricsOnLoopback) {
  Metrics metrics;
  metrics.counter("sluice_errors_total", "Errors.", {{"kind", "malformed"}}).Add(7);
  auto server = MetricsServer::Start({"127.0.0.1", 0}, metrics);
  ASSERT_OK(server);
  ASSERT_NE((*server)->port(), 0);

  const std::string response = Exchange((*server)->port(), "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(response.starts_with("HTTP/1.0 200 OK\r\n")) << response;
  EXPECT_NE(response.find("text/plain; version=0.0.4"), std::string::npos);
  EXPECT_TRUE(response.ends_with("sluice_errors_total{kind=\"malformed\"} 7\n")) << response;

  metrics.counter("sluice_errors_total", "Errors.", {{"kind", "malformed"}}).Add();
  EXPECT_TRUE(Exchange((*server)->port(), "GET /metrics HTTP/1.0\r\n\r\n").ends_with("} 8\n"));
}

TEST(MetricsServer, OtherPathsAndMethodsAreRefused) {
  Metrics metrics;
  auto server = MetricsServer::Start({"127.0.0.1", 0}, metrics);
  ASSERT_OK(server);
  EXPECT_TRUE(Exchange((*server)->port(), "GET / HTTP/1.0\r\n\r\n").starts_with("HTTP/1.0 404"));
  EXPECT_TRUE(
      Exchange((*server)->port(), "POST /metrics HTTP/1.0\r\n\r\n").starts_with("HTTP/1.0 405"));
}

TEST(MetricsServer, AClientThatSendsNothingDoesNotStopTheNext) {
  Metrics metrics;
  auto server = MetricsServer::Start({"127.0.0.1", 0}, metrics);
  ASSERT_OK(server);
  const int idle = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons((*server)->port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(idle, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  // Served after the idle one times out: the answer still comes.
  EXPECT_TRUE(
      Exchange((*server)->port(), "GET /metrics HTTP/1.0\r\n\r\n").starts_with("HTTP/1.0 200"));
  ::close(idle);
}

TEST(MetricsServer, AnAddressInUseIsAClearError) {
  Metrics metrics;
  auto first = MetricsServer::Start({"127.0.0.1", 0}, metrics);
  ASSERT_OK(first);
  auto second = MetricsServer::Start({"127.0.0.1", (*first)->port()}, metrics);
  ASSERT_RAISES_WITH_MESSAGE(IoError, "Address already in use", second);
}

}  // namespace
}  // namespace sluice::brokerd
