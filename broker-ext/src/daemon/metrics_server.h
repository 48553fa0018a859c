// Serves `GET /metrics` over HTTP/1.0 from one thread, for Prometheus to scrape.
//
// Scrapes come every few seconds, so connections are served one at a time, each bounded by a
// short read timeout so that a stalled client cannot hold the thread.
#pragma once

#include <memory>
#include <thread>

#include "daemon/daemon_config.h"
#include "daemon/metrics.h"
#include "sluice/status.h"

namespace sluice::brokerd {

class MetricsServer {
 public:
  // Binds `address` (port 0 picks a free one) and starts serving `metrics`, which must outlive
  // the server.
  static Result<std::unique_ptr<MetricsServer>> Start(const ListenAddress& address,
                                                      const Metrics& metrics);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  uint16_t port() const { return port_; }

 private:
  MetricsServer(int listener, int stop_fd, uint16_t port, const Metrics& metrics);
  void Serve();
  void Answer(int connection);

  int listener_;
  int stop_fd_;  // an eventfd: written once to end Serve
  uint16_t port_;
  const Metrics& metrics_;
  std::thread thread_;
};

}  // namespace sluice::brokerd
