// sluice-brokerd: parses its configuration, serves metrics and the control socket, and stops
// cleanly on SIGTERM or SIGINT (offsets committed, segments and socket removed).
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/allocator.h"
#include "daemon/control_server.h"
#include "daemon/daemon_config.h"
#include "daemon/log.h"
#include "daemon/metrics.h"
#include "daemon/metrics_server.h"

namespace sluice::brokerd {
namespace {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::FromErrno("--config " + path, errno);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int Run(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << kDaemonUsage << "\n";
    return 0;
  }
  if (args.size() == 1 && args[0] == "--list-settings") {
    std::cout << FormatDaemonSettings();
    return 0;
  }
  Result<DaemonConfig> config = ParseDaemonConfig(args, ReadFile);
  if (!config.ok()) {
    std::cerr << "sluice-brokerd: " << config.status().message() << "\n" << kDaemonUsage << "\n";
    return 2;
  }

  // Signals are taken through a descriptor by the control loop; blocking them before any thread
  // starts keeps librdkafka's and the subscriptions' threads from receiving them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  const int stop_fd = signalfd(-1, &stop_signals, SFD_CLOEXEC);

  Metrics metrics;
  std::unique_ptr<MetricsServer> metrics_server;
  if (config->metrics.enabled) {
    Result<std::unique_ptr<MetricsServer>> started = MetricsServer::Start(config->metrics, metrics);
    if (!started.ok()) {
      Log(LogLevel::kError, "metrics_failed", {{"error", started.status().message()}});
      return 1;
    }
    metrics_server = started.MoveValue();
  }
  Result<std::unique_ptr<ControlServer>> server = ControlServer::Listen(*config, metrics);
  if (!server.ok()) {
    Log(LogLevel::kError, "listen_failed", {{"error", server.status().message()}});
    return 1;
  }
  const std::string metrics_address =
      metrics_server == nullptr
          ? "off"
          : config->metrics.host + ":" + std::to_string(metrics_server->port());
  Log(LogLevel::kInfo, "ready",
      {{"socket", config->socket_path},
       {"metrics", metrics_address},
       {"pid", std::to_string(getpid())},
       {"run", (*server)->run()},
       {"segment_dir", config->segment_dir},
       {"allocator", std::string(MallocInUse())}});
  const Status served = (*server)->Run(stop_fd);
  server->reset();
  if (!served.ok()) {
    Log(LogLevel::kError, "failed", {{"error", served.message()}});
    return 1;
  }
  Log(LogLevel::kInfo, "stopped");
  return 0;
}

}  // namespace
}  // namespace sluice::brokerd

int main(int argc, char** argv) { return sluice::brokerd::Run(argc, argv); }
