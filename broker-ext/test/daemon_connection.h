// A sluice-brokerd child process against librdkafka's in-process mock cluster, and connections
// to its socket that speak any protocol version, down to raw bytes: the fixture of every test
// that runs the daemon (daemon_process_test.cc, daemon_answers_test.cc, ...).
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
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest_util.h"
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

  int fd() const { return fd_; }

  void SendBytes(const std::vector<uint8_t>& bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }

  void Send(uint64_t request_id, protocol::Message message,
            uint16_t version = protocol::kMaxVersion) {
    ASSERT_OK_AND_ASSIGN(const std::vector<uint8_t> bytes,
                         protocol::EncodeFrame({request_id, std::move(message), version}));
    SendBytes(bytes);
  }

  // The next frame that is not a heartbeat within `wait`; none when the daemon sent none, or
  // closed the connection first. The heartbeats' versions go to `heartbeat_versions`.
  std::optional<protocol::Frame> Receive(std::chrono::milliseconds wait = std::chrono::seconds(10),
                                         std::vector<uint16_t>* heartbeat_versions = nullptr) {
    std::optional<protocol::Frame> received;
    bool closed = false;
    // No frame within `wait` is an answer too, which the caller judges.
    (void)testing::Eventually(
        "a frame",
        [&] {
          while (auto bytes = reader_.NextFrame()) {
            auto frame = protocol::DecodeFrame(*bytes);
            EXPECT_OK(frame);
            if (!frame.ok()) return true;
            if (!std::holds_alternative<protocol::Heartbeat>(frame->message)) {
              received = std::move(*frame);
              return true;
            }
            if (heartbeat_versions != nullptr) heartbeat_versions->push_back(frame->version);
          }
          if (closed) return true;
          closed = Readable() && !reader_.ReadFrom(fd_).ok();
          return false;
        },
        wait, std::chrono::milliseconds::zero());  // Readable waits for the daemon
    return received;
  }

  // Whether the daemon closed the connection within `wait`, heartbeats aside.
  ::testing::AssertionResult ClosedByDaemon(
      std::chrono::milliseconds wait = std::chrono::seconds(10)) {
    return testing::Eventually(
        "the daemon to close the connection",
        [&] {
          if (!Readable()) return false;
          if (!reader_.ReadFrom(fd_).ok()) return true;
          while (reader_.NextFrame().has_value()) {
          }
          return false;
        },
        wait, std::chrono::milliseconds::zero());  // Readable waits for the daemon
  }

 private:
  // Whether the daemon sent something (or closed) within 100 ms.
  bool Readable() const {
    pollfd pfd{fd_, POLLIN, 0};
    return ::poll(&pfd, 1, 100) > 0;
  }

  int fd_;
  protocol::FrameReader reader_;
};

class DaemonConnectionTest : public ::testing::Test {
 protected:
  // A mock cluster of `brokers`; the daemon's metrics endpoint at `metrics` ("off", or an
  // address such as 127.0.0.1:0 whose port the ready line names).
  explicit DaemonConnectionTest(int brokers = 1, std::string metrics = "off")
      : brokers_(brokers), metrics_(std::move(metrics)) {}

  void SetUp() override {
    std::array<char, 512> error{};
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    ASSERT_EQ(rd_kafka_conf_set(conf, "test.mock.num.brokers", std::to_string(brokers_).c_str(),
                                error.data(), error.size()),
              RD_KAFKA_CONF_OK);
    producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error.data(), error.size());
    ASSERT_NE(producer_, nullptr) << error.data();
    cluster_ = rd_kafka_handle_mock_cluster(producer_);
    // Short enough for a doorbell beside every segment in it (sun_path's 108 bytes: the daemon's
    // names take 51, docs/formats.md "Doorbell"), as a real segment folder is.
    static int tests = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("brokerd-test-" + std::to_string(::getpid()) + "-" + std::to_string(tests++));
    std::filesystem::create_directories(dir_);
    socket_ = (dir_ / "brokerd.sock").string();
  }

  void TearDown() override {
    if (daemon_ > 0) {
      ::kill(daemon_, SIGKILL);
      ::waitpid(daemon_, nullptr, 0);
    }
    if (producer_ != nullptr) rd_kafka_destroy(producer_);
    std::filesystem::remove_all(dir_);
  }

  void CreateTopic(const std::string& topic, int partitions) {
    ASSERT_EQ(rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, 1),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  // A record of `topic`'s `partition` with the given headers, queued; Flush sends what is queued.
  void Queue(const std::string& topic, int32_t partition, const std::string& value,
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
  }

  void Flush() { ASSERT_EQ(rd_kafka_flush(producer_, 10000), RD_KAFKA_RESP_ERR_NO_ERROR); }

  // A record sent at once.
  void Produce(const std::string& topic, int32_t partition, const std::string& value,
               const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    Queue(topic, partition, value, headers);
    Flush();
  }

  // A file the daemon's process creates in dir_ before it runs the daemon, named PREFIX, its own
  // pid, SUFFIX: what a daemon killed earlier under the same pid would have left.
  struct FileOfThisPid {
    std::string prefix;
    std::string suffix;
  };

  // Starts the daemon; its socket accepts connections when this returns.
  void StartDaemon(std::vector<std::string> extra = {}, std::vector<FileOfThisPid> files = {}) {
    Launch(std::move(extra), std::move(files));
    bool exited = false;
    ASSERT_TRUE(testing::Eventually(
        "the daemon to listen at " + socket_,
        [&] {
          const int probe = ConnectOrErrno();
          if (probe >= 0) {
            ::close(probe);
            return true;
          }
          exited = ::waitpid(daemon_, nullptr, WNOHANG) != 0;
          return exited;
        },
        std::chrono::seconds(10), std::chrono::milliseconds(10)))  // no event announces it
        << Log();
    if (exited) daemon_ = -1;
    ASSERT_FALSE(exited) << "the daemon exited: " << Log();
  }

  // Runs the daemon until it exits by itself; its exit code.
  int RunDaemonToExit(std::vector<std::string> extra = {}) {
    Launch(std::move(extra), {});
    int status = 0;
    EXPECT_EQ(::waitpid(daemon_, &status, 0), daemon_);
    daemon_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::unique_ptr<DaemonConnection> Connect() const {
    const int fd = ConnectOrErrno();
    EXPECT_GE(fd, 0) << std::strerror(-fd);
    return std::make_unique<DaemonConnection>(fd);
  }

  // A connection of this process' uid, or -errno when connect fails.
  int ConnectOrErrno() const {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, socket_.c_str());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) return fd;
    const int err = errno;
    ::close(fd);
    return -err;
  }

  std::string Log() const {
    std::ifstream in(dir_ / "daemon.log");
    return {std::istreambuf_iterator<char>(in), {}};
  }

  std::filesystem::path dir_;
  std::string socket_;
  rd_kafka_t* producer_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  pid_t daemon_ = -1;

 private:
  void Launch(std::vector<std::string> extra, std::vector<FileOfThisPid> files) {
    std::vector<std::string> args = {SLUICE_BROKERD_BIN,
                                     "--bootstrap-servers",
                                     rd_kafka_mock_cluster_bootstraps(cluster_),
                                     "--socket",
                                     socket_,
                                     "--metrics",
                                     metrics_,
                                     "-X",
                                     "sluice.segment.dir=" + dir_.string(),
                                     "-X",
                                     "sluice.liveness.timeout.ms=30000"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const std::string log_path = (dir_ / "daemon.log").string();
    std::vector<std::string> prefixes;
    for (const FileOfThisPid& file : files) prefixes.push_back((dir_ / file.prefix).string());
    daemon_ = ::fork();
    ASSERT_GE(daemon_, 0);
    if (daemon_ == 0) {
      // Only async-signal-safe calls from here: the test's librdkafka threads did not fork.
      for (size_t i = 0; i < files.size(); ++i) {
        char path[512];
        char digits[16];
        size_t count = 0;
        for (pid_t pid = ::getpid(); pid > 0; pid /= 10) {
          digits[count++] = static_cast<char>('0' + pid % 10);
        }
        size_t length = 0;
        for (const char c : prefixes[i]) path[length++] = c;
        while (count > 0) path[length++] = digits[--count];
        for (const char c : files[i].suffix) path[length++] = c;
        path[length] = '\0';
        ::close(::open(path, O_WRONLY | O_CREAT | O_EXCL, 0600));
      }
      const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      ::dup2(log, STDERR_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }

  int brokers_;
  std::string metrics_;
};

}  // namespace sluice::brokerd
