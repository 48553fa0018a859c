// A sluice-brokerd child process against librdkafka's in-process mock cluster, and connections
// to its socket that speak any protocol version, down to raw bytes: for the tests of what the
// daemon answers and sends on a connection (daemon_answers_test.cc, daemon_stream_gap_test.cc).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
// clang-format off: the mock header needs rdkafka.h first
#include <librdkafka/rdkafka_mock.h>
// clang-format on
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "protocol/codec.h"
#include "protocol/frame_reader.h"

namespace sluice::brokerd {

// One connection to the daemon's socket.
class DaemonConnection {
 public:
  explicit DaemonConnection(int fd) : fd_(fd) {}
  ~DaemonConnection() { ::close(fd_); }
  DaemonConnection(const DaemonConnection&) = delete;
  DaemonConnection& operator=(const DaemonConnection&) = delete;

  void SendBytes(const std::vector<uint8_t>& bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }

  void Send(uint64_t request_id, protocol::Message message,
            uint16_t version = protocol::kMaxVersion) {
    auto bytes = protocol::EncodeFrame({request_id, std::move(message), version});
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    SendBytes(*bytes);
  }

  // The next frame that is not a heartbeat within `wait`; none when the daemon sent none, or
  // closed the connection first.
  std::optional<protocol::Frame> Receive(
      std::chrono::milliseconds wait = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (true) {
      while (auto bytes = reader_.NextFrame()) {
        auto frame = protocol::DecodeFrame(*bytes);
        EXPECT_TRUE(frame.ok()) << frame.status().ToString();
        if (!frame.ok()) return std::nullopt;
        if (!std::holds_alternative<protocol::Heartbeat>(frame->message)) return *frame;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd pfd{fd_, POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 100))) > 0 &&
          !reader_.ReadFrom(fd_).ok()) {
        return std::nullopt;
      }
    }
  }

  // Whether the daemon closed the connection within `wait`, heartbeats aside.
  bool ClosedByDaemon(std::chrono::milliseconds wait = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd pfd{fd_, POLLIN, 0};
      if (::poll(&pfd, 1, 100) > 0) {
        const Status read = reader_.ReadFrom(fd_);
        if (!read.ok()) return true;
        while (reader_.NextFrame().has_value()) {
        }
      }
    }
    return false;
  }

 private:
  int fd_;
  protocol::FrameReader reader_;
};

class DaemonConnectionTest : public ::testing::Test {
 protected:
  using Clock = std::chrono::steady_clock;

  void SetUp() override {
    std::array<char, 512> error{};
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    ASSERT_EQ(rd_kafka_conf_set(conf, "test.mock.num.brokers", "1", error.data(), error.size()),
              RD_KAFKA_CONF_OK);
    producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error.data(), error.size());
    ASSERT_NE(producer_, nullptr) << error.data();
    cluster_ = rd_kafka_handle_mock_cluster(producer_);
    dir_ = std::filesystem::temp_directory_path() /
           ("brokerd-conn-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    socket_ = (dir_ / "brokerd.sock").string();
  }

  void TearDown() override {
    if (daemon_ > 0) {
      ::kill(daemon_, SIGKILL);
      ::waitpid(daemon_, nullptr, 0);
    }
    rd_kafka_destroy(producer_);
    std::filesystem::remove_all(dir_);
  }

  void CreateTopic(const std::string& topic, int partitions) {
    ASSERT_EQ(rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, 1),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  // A record of `topic`'s `partition` with the given headers, sent at once.
  void Produce(const std::string& topic, int32_t partition, const std::string& value,
               const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    rd_kafka_headers_t* list = rd_kafka_headers_new(headers.size());
    for (const auto& [key, text] : headers) {
      rd_kafka_header_add(list, key.c_str(), -1, text.data(), static_cast<ssize_t>(text.size()));
    }
    ASSERT_EQ(rd_kafka_producev(producer_, RD_KAFKA_V_TOPIC(topic.c_str()),
                                RD_KAFKA_V_PARTITION(partition),
                                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                RD_KAFKA_V_HEADERS(list), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                RD_KAFKA_V_END),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(rd_kafka_flush(producer_, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  // Starts the daemon; its socket accepts connections when this returns.
  void StartDaemon(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {SLUICE_BROKERD_BIN,
                                     "--bootstrap-servers",
                                     rd_kafka_mock_cluster_bootstraps(cluster_),
                                     "--socket",
                                     socket_,
                                     "--metrics",
                                     "off",
                                     "-X",
                                     "sluice.segment.dir=" + dir_.string(),
                                     "-X",
                                     "sluice.liveness.timeout.ms=30000"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const std::string log_path = (dir_ / "daemon.log").string();
    daemon_ = ::fork();
    ASSERT_GE(daemon_, 0);
    if (daemon_ == 0) {
      // Only async-signal-safe calls from here: the test's librdkafka threads did not fork.
      const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      ::dup2(log, STDERR_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline) {
      const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un address = Address();
      const bool listening =
          ::connect(probe, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
      ::close(probe);
      if (listening) return;
      ASSERT_EQ(::waitpid(daemon_, nullptr, WNOHANG), 0) << "the daemon exited: " << Log();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // no event announces it
    }
    FAIL() << "the daemon did not listen: " << Log();
  }

  std::unique_ptr<DaemonConnection> Connect() const {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address = Address();
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0)
        << std::strerror(errno);
    return std::make_unique<DaemonConnection>(fd);
  }

  sockaddr_un Address() const {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, socket_.c_str());
    return address;
  }

  std::string Log() const {
    std::ifstream in(dir_ / "daemon.log");
    return {std::istreambuf_iterator<char>(in), {}};
  }

  std::filesystem::path dir_;
  std::string socket_;

 private:
  rd_kafka_t* producer_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  pid_t daemon_ = -1;
};

}  // namespace sluice::brokerd
