// The sluice-brokerd binary as a child process, spoken to over its socket with the protocol
// codec and read through a segment, against librdkafka's in-process mock cluster so that it runs
// in a second. The Java integration tests run the same binary against the real Kafka broker.
#include <arrow/api.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
// clang-format off: the mock header needs rdkafka.h first
#include <librdkafka/rdkafka_mock.h>
// clang-format on
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/daemon_config.h"
#include "daemon/segment_names.h"
#include "daemon_connection.h"
#include "gtest_util.h"
#include "ordering/chunk_sequencer.h"
#include "protocol/codec.h"
#include "sluice/schemas.h"
#include "sluice/segment_reader.h"
#include "small_tmpfs.h"

namespace sluice::brokerd {
namespace {

using namespace std::chrono_literals;
namespace p = protocol;

constexpr int kPartitions = 3;

class DaemonProcessTest : public DaemonConnectionTest {
 protected:
  DaemonProcessTest() : DaemonConnectionTest(3, "127.0.0.1:0") {}

  void SetUp() override {
    DaemonConnectionTest::SetUp();
    if (HasFatalFailure()) return;
    CreateTopic("t", kPartitions);
  }

  // Values "value-I" for I in [first, first + count), record I on partition I % kPartitions.
  void Produce(int count, size_t padding = 0, int first = 0) {
    for (int i = first; i < first + count; ++i) {
      Queue("t", i % kPartitions, "value-" + std::to_string(i) + std::string(padding, '.'));
    }
    Flush();
  }

  // A chunk record, queued; `seq` is the header's text, so tests can write malformed ones.
  void ProduceChunk(int32_t partition, const std::string& stream, const std::string& seq, bool eos,
                    const std::string& payload) {
    std::vector<std::pair<std::string, std::string>> headers = {
        {"sluice.job", "job-1"}, {"sluice.stream", stream}, {"sluice.seq", seq}};
    if (eos) headers.emplace_back("sluice.eos", "true");
    Queue("t", partition, payload, headers);
  }

  // Reads CHUNKS objects until every stream in `streams` has seen its end; returns, per stream,
  // the seqs and payloads in the order they came.
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> ReadStreams(
      SegmentReader& reader, size_t streams) {
    std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> seen;
    size_t ended = 0;
    while (ended < streams) {
      auto object = reader.Next(10s);
      EXPECT_OK(object) << Log();
      if (!object.ok()) return seen;
      auto batch = DecodeObject(*object, ChunksSchema());
      EXPECT_OK(batch);
      if (!batch.ok()) return seen;
      auto stream =
          std::static_pointer_cast<arrow::StringArray>((*batch)->GetColumnByName("stream"));
      auto seq = std::static_pointer_cast<arrow::UInt64Array>((*batch)->GetColumnByName("seq"));
      auto eos = std::static_pointer_cast<arrow::BooleanArray>((*batch)->GetColumnByName("eos"));
      auto payload =
          std::static_pointer_cast<arrow::BinaryArray>((*batch)->GetColumnByName("payload"));
      for (int64_t row = 0; row < (*batch)->num_rows(); ++row) {
        seen[std::string(stream->GetView(row))].emplace_back(seq->Value(row),
                                                             std::string(payload->GetView(row)));
        if (eos->Value(row)) ++ended;
      }
      EXPECT_OK(reader.Release(*object));
    }
    return seen;
  }

  // Starts the daemon and connects to it (connection_).
  void StartDaemon(std::vector<std::string> extra = {}, std::vector<FileOfThisPid> files = {}) {
    DaemonConnectionTest::StartDaemon(std::move(extra), std::move(files));
    if (HasFatalFailure()) return;
    connection_ = Connect();
  }

  // GET /metrics from the port the ready line names.
  std::string Scrape() const {
    const std::string log = Log();
    const size_t at = log.find("metrics=127.0.0.1:");
    if (at == std::string::npos) return "";
    const int port = std::stoi(log.substr(at + 18));
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string response;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
      const std::string request = "GET /metrics HTTP/1.0\r\n\r\n";
      (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
      std::array<char, 4096> buffer{};
      ssize_t count;
      while ((count = ::recv(fd, buffer.data(), buffer.size(), 0)) > 0) {
        response.append(buffer.data(), static_cast<size_t>(count));
      }
    }
    ::close(fd);
    return response;
  }

  // Scrapes until the metrics hold `line`: counters and gauges are published between pump
  // rounds.
  void AwaitMetric(const std::string& line) const {
    std::string metrics;
    EXPECT_TRUE(testing::Eventually(
        "the metric " + line,
        [&] {
          metrics = Scrape();
          return metrics.find(line) != std::string::npos;
        },
        10s, 50ms))
        << metrics;
  }

  // Reads objects until `count` records came, releasing each; returns the last object's id.
  uint64_t ReadRecords(SegmentReader& reader, int count,
                       std::vector<int32_t>* partitions = nullptr) {
    int seen = 0;
    uint64_t last = 0;
    while (seen < count) {
      auto object = reader.Next(10s);
      EXPECT_OK(object) << Log();
      if (!object.ok()) return last;
      if (partitions != nullptr) {
        auto batch = DecodeObject(*object, RecordsSchema());
        EXPECT_OK(batch);
        if (!batch.ok()) return last;
        auto partition = std::static_pointer_cast<arrow::Int32Array>((*batch)->column(0));
        for (int64_t row = 0; row < (*batch)->num_rows(); ++row) {
          partitions->push_back(partition->Value(row));
        }
      }
      seen += static_cast<int>(object->record_count);
      last = object->object_id;
      EXPECT_OK(reader.Release(*object));
    }
    return last;
  }

  // Reads `count` records, checking that each partition's come once each, in offset order from
  // `next`, with the value Produce gave them.
  void ReadInPartitionOrder(SegmentReader& reader, int count,
                            std::array<int64_t, kPartitions>& next) {
    for (int seen = 0; seen < count;) {
      auto object = reader.Next(10s);
      ASSERT_OK(object) << Log();
      ASSERT_OK_AND_ASSIGN(auto batch, DecodeObject(*object, RecordsSchema()));
      auto partition = std::static_pointer_cast<arrow::Int32Array>(batch->column(0));
      auto offset = std::static_pointer_cast<arrow::Int64Array>(batch->column(1));
      auto value = std::static_pointer_cast<arrow::BinaryArray>(batch->column(4));
      for (int64_t row = 0; row < batch->num_rows(); ++row, ++seen) {
        const int32_t p = partition->Value(row);
        ASSERT_EQ(offset->Value(row), next[static_cast<size_t>(p)]++) << "partition " << p;
        ASSERT_EQ(value->GetView(row),
                  "value-" + std::to_string(offset->Value(row) * kPartitions + p));
      }
      ASSERT_OK(reader.Release(*object));
    }
  }

  void Send(uint64_t request_id, p::Message message, uint16_t version = p::kMaxVersion) {
    connection_->Send(request_id, std::move(message), version);
  }

  // The next frame that is not a heartbeat, waiting up to 10 s; the heartbeats' versions go to
  // `heartbeat_versions`.
  p::Frame Receive(std::vector<uint16_t>* heartbeat_versions = nullptr) {
    std::optional<p::Frame> frame = connection_->Receive(10s, heartbeat_versions);
    if (frame.has_value()) return *std::move(frame);
    ADD_FAILURE() << "no frame in 10 s, or the daemon closed the connection\n" << Log();
    return {};
  }

  p::Subscribe Request(p::StartPosition start = p::StartPosition::kEarliest, int64_t offset = 0) {
    p::Subscribe request;
    request.slot_count = 8;
    request.slot_size = 64 * 1024;
    request.topic = "t";
    for (int32_t partition = 0; partition < kPartitions; ++partition) {
      request.partitions.push_back({partition, start, offset});
    }
    return request;
  }

  std::unique_ptr<DaemonConnection> connection_;
};

// --list-settings needs no broker and no socket: it prints the settings table and exits 0.
TEST(DaemonListSettingsTest, PrintsTheSettingsTableAndExitsZero) {
  FILE* out = ::popen(SLUICE_BROKERD_BIN " --list-settings", "r");
  ASSERT_NE(out, nullptr) << std::strerror(errno);
  std::string printed;
  std::array<char, 4096> buffer{};
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), out)) > 0;) {
    printed.append(buffer.data(), n);
  }
  const int status = ::pclose(out);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(printed, FormatDaemonSettings());
}

TEST_F(DaemonProcessTest, ASubscriptionDeliversEveryRecordInPartitionOrder) {
  constexpr int kRecords = 3000;
  Produce(kRecords);
  StartDaemon();
  struct stat info {};
  ASSERT_EQ(::stat(socket_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u) << "the socket is owner-only";

  Send(7, Request());
  p::Frame answer = Receive();
  ASSERT_EQ(answer.request_id, 7u);
  auto* subscribed = std::get_if<p::Subscribed>(&answer.message);
  ASSERT_NE(subscribed, nullptr) << p::NameOf(p::TypeOf(answer.message));
  EXPECT_EQ(subscribed->partitions.size(), static_cast<size_t>(kPartitions));
  EXPECT_EQ(answer.version, p::kMaxVersion);
  EXPECT_EQ(subscribed->segment_dir, dir_.string()) << "the reader learns the segment folder";
  const std::string segment = (dir_ / subscribed->segment_name).string();
  ASSERT_EQ(::stat(segment.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u) << "the segment is owner-only";

  auto reader = SegmentReader::Open(segment);
  ASSERT_OK(reader);
  std::array<int64_t, kPartitions> next{};
  int seen = 0;
  uint64_t last_object = 0;
  while (seen < kRecords) {
    auto object = (*reader)->Next(10s);
    ASSERT_OK(object) << Log();
    ASSERT_OK_AND_ASSIGN(auto batch, DecodeObject(*object, RecordsSchema()));
    auto partition = std::static_pointer_cast<arrow::Int32Array>(batch->column(0));
    auto offset = std::static_pointer_cast<arrow::Int64Array>(batch->column(1));
    auto value = std::static_pointer_cast<arrow::BinaryArray>(batch->column(4));
    for (int64_t row = 0; row < batch->num_rows(); ++row, ++seen) {
      const int32_t p = partition->Value(row);
      ASSERT_EQ(offset->Value(row), next[p]++);
      ASSERT_EQ(value->GetView(row),
                "value-" + std::to_string(offset->Value(row) * kPartitions + p));
    }
    last_object = object->object_id;
    ASSERT_OK((*reader)->Release(*object));
  }
  Send(8, p::Release{subscribed->subscription_id, last_object});
  Send(9, p::Close{subscribed->subscription_id});
  EXPECT_RAISES(EndOfStream, (*reader)->Next(10s))
      << "CLOSE ends the segment after what was published";
  EXPECT_TRUE(testing::Eventually(
      "CLOSE to remove the segment", [&] { return !std::filesystem::exists(segment); }, 5s,
      10ms));  // the unlink has no event to wait on
}

// A reader of protocol version 1 gets version-1 frames, whose SUBSCRIBED names no folder: it
// opens the segment in the one it was configured with (docs/formats.md, "Versions").
TEST_F(DaemonProcessTest, AVersionOneReaderIsAnsweredInVersionOne) {
  Produce(3);
  StartDaemon();
  Send(1, Request(), 1);
  std::vector<uint16_t> heartbeats;
  p::Frame answer = Receive(&heartbeats);
  EXPECT_EQ(answer.version, 1);
  auto* subscribed = std::get_if<p::Subscribed>(&answer.message);
  ASSERT_NE(subscribed, nullptr) << p::NameOf(p::TypeOf(answer.message));
  EXPECT_EQ(subscribed->segment_dir, "");
  ASSERT_FALSE(heartbeats.empty()) << "the daemon's first heartbeat comes before any answer";
  EXPECT_EQ(heartbeats.front(), 1) << "sent before the reader said which version it speaks";
  auto reader = SegmentReader::Open((dir_ / subscribed->segment_name).string());
  ASSERT_OK(reader);
  ReadRecords(**reader, 3);

  // A version the daemon does not speak is answered in version 1, with the range it speaks.
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> bytes, p::EncodeFrame({2, p::Close{0}, 1}));
  bytes[4] = p::kMaxVersion + 1;
  connection_->SendBytes(bytes);
  answer = Receive();
  EXPECT_EQ(answer.version, 1);
  auto* error = std::get_if<p::ErrorMessage>(&answer.message);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, p::ErrorCode::kUnsupportedVersion);
  EXPECT_EQ(error->min_version, 1);
  EXPECT_EQ(error->max_version, p::kMaxVersion);
}

TEST_F(DaemonProcessTest, AnUnknownPartitionIsAnErrorAndTheConnectionGoesOn) {
  // (The mock cluster creates any topic it is asked about, so unknown topic names are left to
  // the integration tests on the real broker.)
  StartDaemon();
  p::Subscribe request = Request();
  p::Frame answer;
  p::ErrorMessage* error = nullptr;
  request = Request();
  request.partitions.push_back({kPartitions, p::StartPosition::kEarliest, 0});
  Send(4, request);
  answer = Receive();
  error = std::get_if<p::ErrorMessage>(&answer.message);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, p::ErrorCode::kUnknownTopic);
  EXPECT_NE(error->message.find("no partition 3"), std::string::npos) << error->message;

  EXPECT_EQ(answer.request_id, 4u);
  Send(5, Request());
  EXPECT_TRUE(std::holds_alternative<p::Subscribed>(Receive().message));
}

TEST_F(DaemonProcessTest, APeerWhoseUidIsNotAllowedIsRefusedBeforeAnythingIsMapped) {
  StartDaemon({"-X", "sluice.allowed.uids=" + std::to_string(::geteuid() + 4242)});
  // The daemon refuses on accept, before reading: it may have closed before this is sent, and a
  // send that finds the connection closed is as good (the ERROR still waits to be read).
  auto bytes = p::EncodeFrame({1, Request()});
  ASSERT_OK(bytes);
  const ssize_t sent = ::send(connection_->fd(), bytes->data(), bytes->size(), MSG_NOSIGNAL);
  EXPECT_TRUE(sent == static_cast<ssize_t>(bytes->size()) || errno == EPIPE || errno == ECONNRESET)
      << std::strerror(errno);
  p::Frame answer = Receive();
  auto* error = std::get_if<p::ErrorMessage>(&answer.message);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, p::ErrorCode::kNotAuthorized);
  EXPECT_EQ(answer.request_id, 0u);
  std::array<uint8_t, 16> rest{};
  // The daemon closed the connection: an end of stream, or a reset since SUBSCRIBE was unread.
  EXPECT_LE(::recv(connection_->fd(), rest.data(), rest.size(), 0), 0);
  // The daemon's own run lock is there from its start (segment_names.h); no segment is.
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    EXPECT_FALSE(name.starts_with("sluice-brokerd.") && !name.ends_with(kRunLockSuffix))
        << "no segment was created: " << entry.path();
  }
}

TEST_F(DaemonProcessTest, AMalformedFrameIsAnsweredWithBadFrameAndTheConnectionClosed) {
  StartDaemon();
  const std::vector<uint8_t> garbage = {12, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  connection_->SendBytes(garbage);
  p::Frame answer = Receive();
  auto* error = std::get_if<p::ErrorMessage>(&answer.message);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, p::ErrorCode::kBadFrame) << error->message;
}

TEST_F(DaemonProcessTest, SigtermCommitsRemovesTheSegmentsAndTheSocketAndExitsZero) {
  Produce(30);
  StartDaemon();
  p::Subscribe request = Request();
  request.group_id = "g";
  Send(1, request);
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  const std::string segment = (dir_ / subscribed.segment_name).string();
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(segment));
  const uint64_t last_object = ReadRecords(*reader, 30);
  // What was sent before the signal is served before the daemon stops.
  Send(2, p::Release{subscribed.subscription_id, last_object});
  ASSERT_EQ(::kill(daemon_, SIGTERM), 0);
  auto error = std::get<p::ErrorMessage>(Receive().message);
  EXPECT_EQ(error.code, p::ErrorCode::kShuttingDown);
  int status = 0;
  ASSERT_EQ(::waitpid(daemon_, &status, 0), daemon_);
  daemon_ = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Log();
  EXPECT_FALSE(std::filesystem::exists(segment));
  EXPECT_FALSE(std::filesystem::exists(socket_));

  // The group's offsets cover every released record.
  std::array<char, 512> text{};
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(cluster_),
                    text.data(), text.size());
  rd_kafka_conf_set(conf, "group.id", "g", text.data(), text.size());
  rd_kafka_t* consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, text.data(), text.size());
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(kPartitions);
  for (int p = 0; p < kPartitions; ++p) rd_kafka_topic_partition_list_add(list, "t", p);
  ASSERT_EQ(rd_kafka_committed(consumer, list, 5000), RD_KAFKA_RESP_ERR_NO_ERROR);
  for (int i = 0; i < list->cnt; ++i) EXPECT_EQ(list->elems[i].offset, 30 / kPartitions);
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_destroy(consumer);
}

// The override is by symbol interposition, which a link order can undo without an error. Only a
// sanitized build (cmake/Sanitizers.cmake) runs on the system's malloc, and says so.
TEST_F(DaemonProcessTest, TheDaemonRunsOnMimallocAndSaysSoInItsReadyLine) {
#ifdef SLUICE_SYSTEM_MALLOC
  const std::string expected = "allocator=libc";
#else
  const std::string expected = "allocator=mimalloc";
#endif
  StartDaemon();
  ASSERT_EQ(::kill(daemon_, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(daemon_, &status, 0), daemon_);
  daemon_ = -1;
  const std::string log = Log();
  EXPECT_NE(log.find("event=ready"), std::string::npos) << log;
  EXPECT_NE(log.find(expected), std::string::npos) << log;
}

TEST_F(DaemonProcessTest, ARecordLargerThanTheSlotEndsTheSubscriptionWithRecordTooLarge) {
  Produce(1, 2000);
  StartDaemon();
  p::Subscribe request = Request();
  request.slot_size = 1024;
  Send(1, request);
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open((dir_ / subscribed.segment_name).string()));
  p::Frame answer = Receive();
  auto* error = std::get_if<p::ErrorMessage>(&answer.message);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, p::ErrorCode::kRecordTooLarge);
  EXPECT_EQ(error->subscription_id, subscribed.subscription_id);
  EXPECT_NE(error->message.find("t ["), std::string::npos) << error->message;
  EXPECT_RAISES(EndOfStream, reader->Next(10s));
}

// A reader opens its segment read-write (its lane's words) and so may truncate the file under the
// daemon's mapping: that ends its own subscription with an error, not the daemon by SIGBUS
// (docs/brokerd.md, "Security model"), and the daemon serves the next one.
TEST_F(DaemonProcessTest, AReaderTruncatingItsSegmentEndsItsSubscriptionAloneWithAnError) {
  Produce(30);
  StartDaemon();
  p::Subscribe request = Request();
  request.partitions.resize(1);  // partition 0
  Send(1, request);
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  const std::string segment = (dir_ / subscribed.segment_name).string();
  {
    ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(segment));
    std::array<int64_t, kPartitions> next{};
    ReadInPartitionOrder(*reader, 10, next);
  }  // detached first: the test's own mapping is not guarded
  ASSERT_EQ(::truncate(segment.c_str(), 0), 0) << std::strerror(errno);
  Produce(300, 0, 30);  // the daemon writes on into the pages the truncation took

  p::Frame answer = Receive();
  auto* error = std::get_if<p::ErrorMessage>(&answer.message);
  ASSERT_NE(error, nullptr) << Log();
  EXPECT_EQ(error->code, p::ErrorCode::kBadRequest);
  EXPECT_EQ(error->subscription_id, subscribed.subscription_id);
  EXPECT_NE(error->message.find("truncated"), std::string::npos) << error->message;
  EXPECT_EQ(::waitpid(daemon_, nullptr, WNOHANG), 0) << Log();
  Send(2, request);
  auto again = std::get<p::Subscribed>(Receive().message);
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open((dir_ / again.segment_name).string()));
  std::array<int64_t, kPartitions> next{};
  ReadInPartitionOrder(*reader, 110, next);  // all of partition 0, in order
  EXPECT_EQ(next[0], 110);
}

// Sparse segments on a tmpfs too small for them killed the daemon with SIGBUS once records
// reached the pages it could not supply; their memory is reserved now, and a SUBSCRIBE for which
// the folder has no room is refused (docs/brokerd.md, "Segment memory").
TEST_F(DaemonProcessTest, ASegmentBeyondItsFoldersRoomIsRefusedAndTheOtherSubscriptionGoesOn) {
  sluice::testing::SmallTmpfs tmpfs(16);
  if (!tmpfs.skip_reason().empty()) GTEST_SKIP() << tmpfs.skip_reason();
  const std::filesystem::path folder = tmpfs.folder();
  Produce(300);
  StartDaemon({"-X", "sluice.segment.dir=" + folder.string()});
  p::Subscribe small = Request();
  small.partitions.resize(1);  // partition 0
  Send(1, small);
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  ASSERT_OK_AND_ASSIGN(auto reader,
                       SegmentReader::Open((folder / subscribed.segment_name).string()));
  std::array<int64_t, kPartitions> next{};
  ReadInPartitionOrder(*reader, 100, next);
  const std::vector<std::string> before = tmpfs.Files();

  p::Subscribe big = Request();
  big.partitions.erase(big.partitions.begin());
  big.slot_count = 8;
  big.slot_size = 4 << 20;  // 32 MiB in a 16 MiB tmpfs
  Send(2, big);
  p::Frame answer = Receive();
  auto* error = std::get_if<p::ErrorMessage>(&answer.message);
  ASSERT_NE(error, nullptr) << "the daemon made a segment its folder has no room for";
  EXPECT_EQ(answer.request_id, 2u);
  EXPECT_EQ(error->subscription_id, 0u);
  EXPECT_EQ(error->code, p::ErrorCode::kSubscriptionLimit);
  EXPECT_NE(error->message.find("segment folder " + folder.string()), std::string::npos)
      << error->message;
  EXPECT_NE(error->message.find(std::strerror(ENOSPC)), std::string::npos) << error->message;
  EXPECT_NE(Log().find("event=error_sent code=SUBSCRIPTION_LIMIT"), std::string::npos) << Log();
  EXPECT_EQ(tmpfs.Files(), before) << "nothing of the refused segment is left";

  // The daemon runs on, and so does the first subscription, to its end: every record of its
  // partition once, in order, and nothing after the CLOSE.
  Produce(300, 0, 300);
  ReadInPartitionOrder(*reader, 100, next);
  EXPECT_EQ(next[0], 200);
  EXPECT_EQ(::waitpid(daemon_, nullptr, WNOHANG), 0) << Log();
  Send(3, p::Close{subscribed.subscription_id});
  EXPECT_RAISES(EndOfStream, reader->Next(10s)) << Log();
  Send(4, small);
  EXPECT_TRUE(std::holds_alternative<p::Subscribed>(Receive().message)) << Log();
}

TEST_F(DaemonProcessTest, TheSegmentsTogetherAreBoundedAndTheRoomComesBackWhenOneEnds) {
  Produce(300);
  // Room for two of Request()'s segments (8 × 64 KiB) and not three.
  StartDaemon({"-X", "sluice.segment.max.total.bytes=" + std::to_string(1 << 20)});
  auto partition = [this](int32_t p) {
    p::Subscribe request = Request();
    request.partitions = {request.partitions[static_cast<size_t>(p)]};
    return request;
  };
  Send(1, partition(0));
  auto one = std::get<p::Subscribed>(Receive().message);
  Send(2, partition(1));
  auto two = std::get<p::Subscribed>(Receive().message);
  Send(3, partition(2));
  p::Frame answer = Receive();
  auto* error = std::get_if<p::ErrorMessage>(&answer.message);
  ASSERT_NE(error, nullptr) << "a third segment beyond sluice.segment.max.total.bytes";
  EXPECT_EQ(error->code, p::ErrorCode::kSubscriptionLimit);
  EXPECT_NE(error->message.find("sluice.segment.max.total.bytes = 1048576"), std::string::npos)
      << error->message;
  EXPECT_NE(error->message.find("524288 bytes beside the 1048576"), std::string::npos)
      << error->message;

  // The first still delivers; ending the second gives its bytes back.
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open((dir_ / one.segment_name).string()));
  ReadRecords(*reader, 100);
  Send(4, p::Close{two.subscription_id});
  Send(5, partition(2));
  EXPECT_TRUE(std::holds_alternative<p::Subscribed>(Receive().message)) << Log();
}

TEST_F(DaemonProcessTest, SubscriptionsShareOneFetchSessionAndOneEndingLeavesTheOtherRunning) {
  Produce(300);
  StartDaemon();
  p::Subscribe first = Request();
  first.partitions.resize(1);  // partition 0
  Send(1, first);
  auto one = std::get<p::Subscribed>(Receive().message);

  auto other = Connect();
  p::Subscribe second = Request();
  second.partitions.erase(second.partitions.begin());  // partitions 1 and 2
  other->Send(2, second);
  std::optional<p::Frame> answer = other->Receive();
  ASSERT_TRUE(answer.has_value()) << Log();
  auto* two = std::get_if<p::Subscribed>(&answer->message);
  ASSERT_NE(two, nullptr) << p::NameOf(p::TypeOf(answer->message));
  EXPECT_EQ(two->partitions, (std::vector<int32_t>{1, 2}));

  ASSERT_OK_AND_ASSIGN(auto reader_one, SegmentReader::Open((dir_ / one.segment_name).string()));
  ASSERT_OK_AND_ASSIGN(auto reader_two, SegmentReader::Open((dir_ / two->segment_name).string()));
  std::vector<int32_t> partitions_one;
  std::vector<int32_t> partitions_two;
  ReadRecords(*reader_one, 100, &partitions_one);
  ReadRecords(*reader_two, 200, &partitions_two);
  EXPECT_TRUE(std::ranges::all_of(partitions_one, [](int32_t p) { return p == 0; }));
  EXPECT_TRUE(std::ranges::none_of(partitions_two, [](int32_t p) { return p == 0; }));
  EXPECT_NE(Log().find("fetch_session_created group=- sessions=1"), std::string::npos);
  EXPECT_EQ(Log().find("sessions=2"), std::string::npos) << "one fetch session for both";

  // The first reader goes away: its connection ends, the other subscription goes on.
  other.reset();
  Produce(300);
  ReadRecords(*reader_one, 100);
  // What the daemon published for the second before it saw the connection end is still read (the
  // records just produced, now and then); then its segment ends.
  auto next = reader_two->Next(10s);
  for (; next.ok(); next = reader_two->Next(10s)) ASSERT_OK(reader_two->Release(*next));
  EXPECT_RAISES(EndOfStream, next);

  // Counters are updated between pump rounds: wait for the records read to be counted.
  auto records_out = [](const std::string& metrics) -> int64_t {
    const std::string name = "sluice_records_out_total{topic=\"t\"} ";
    const size_t at = metrics.find(name);
    return at == std::string::npos ? -1 : std::stoll(metrics.substr(at + name.size()));
  };
  std::string metrics;
  // The ended connection and its subscription leave the gauges after its segment ended.
  EXPECT_TRUE(testing::Eventually(
      "400 records counted out, one connection and one subscription left",
      [&] {
        metrics = Scrape();
        return records_out(metrics) >= 400 &&
               metrics.find("sluice_subscriptions 1") != std::string::npos &&
               metrics.find("sluice_connections 1") != std::string::npos;
      },
      10s, 50ms))
      << metrics;
  EXPECT_NE(metrics.find("sluice_subscriptions 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("sluice_connections 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("sluice_free_slots{subscription=\"1\"} "), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("sluice_subscription_lag{subscription=\"1\",topic=\"t\"}"),
            std::string::npos)
      << metrics;
  // Per broker, as the daemon connects to it: every record read came from one of them.
  uint64_t fetched = 0;
  size_t brokers = 0;
  const std::string family = "sluice_fetch_records_total{broker=\"";
  for (size_t at = metrics.find(family); at != std::string::npos;
       at = metrics.find(family, at + 1)) {
    const size_t value = metrics.find("} ", at);
    const std::string broker = metrics.substr(at + family.size(), value - 1 - at - family.size());
    EXPECT_TRUE(std::string(rd_kafka_mock_cluster_bootstraps(cluster_)).find(broker) !=
                std::string::npos)
        << broker << " is a broker of the cluster";
    fetched += std::stoull(metrics.substr(value + 2));
    ++brokers;
  }
  EXPECT_GE(brokers, 1u) << metrics;
  EXPECT_GE(fetched, 400u) << metrics;
}

TEST_F(DaemonProcessTest, AfterSigkillTheNextDaemonRemovesTheLeftSegments) {
  StartDaemon({"-X", "sluice.liveness.timeout.ms=1000"});
  Send(1, Request());
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  const std::filesystem::path segment = dir_ / subscribed.segment_name;
  ASSERT_TRUE(std::filesystem::exists(segment));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(segment.string()));
  ASSERT_EQ(::kill(daemon_, SIGKILL), 0);
  ASSERT_EQ(::waitpid(daemon_, nullptr, 0), daemon_);
  daemon_ = -1;
  EXPECT_RAISES(WriterDead, reader->Next(10s)) << "the reader sees the writer die";
  connection_.reset();
  StartDaemon();
  EXPECT_FALSE(std::filesystem::exists(segment)) << Log();
  EXPECT_NE(Log().find("stale_segment_removed"), std::string::npos);
}

// In a container a daemon restarted after SIGKILL gets the PID of the one it replaces, whose files
// are still in the segment folder: they are removed, and the new names never meet them.
TEST_F(DaemonProcessTest, ADaemonRestartedUnderTheSamePidRemovesItsPredecessorsFiles) {
  const std::vector<FileOfThisPid> left = {
      {"sluice-brokerd.", ".0badf00d.0123456789abcdef"},
      {"sluice-brokerd.", ".0badf00d.0123456789abcdef.bell"},
      {"sluice-brokerd.", ".0badf00d.fedcba9876543210.tmp-0011223344556677"},
      // The predictable names daemons gave before: sluice-brokerd.PID.ID.
      {"sluice-brokerd.", ".1"},
      {"sluice-brokerd.", ".2"}};
  StartDaemon({}, left);
  const std::string pid = std::to_string(daemon_);
  for (const FileOfThisPid& file : left) {
    EXPECT_FALSE(std::filesystem::exists(dir_ / (file.prefix + pid + file.suffix)))
        << file.prefix + pid + file.suffix << "\n"
        << Log();
  }
  EXPECT_NE(Log().find("stale_segment_removed name=sluice-brokerd." + pid + ".1\n"),
            std::string::npos)
      << Log();

  Send(1, Request());
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  const std::string log = Log();
  const size_t run_at = log.find(" run=");
  ASSERT_NE(run_at, std::string::npos) << log;
  const std::string run = log.substr(run_at + 5, log.find(' ', run_at + 5) - run_at - 5);
  EXPECT_TRUE(subscribed.segment_name.starts_with("sluice-brokerd." + pid + "." + run + "."))
      << subscribed.segment_name << " in a run of " << run;
  EXPECT_OK(SegmentReader::Open((dir_ / subscribed.segment_name).string()));
}

// The daemon's default socket, /run/sluice/brokerd.sock, is in a folder nobody creates.
TEST_F(DaemonProcessTest, TheSocketsMissingFoldersAreCreatedOwnerOnly) {
  socket_ = (dir_ / "run" / "sluice" / "brokerd.sock").string();
  // The daemon inherits the umask: the folders are 0700 however loose it is.
  const mode_t previous = ::umask(0);
  StartDaemon();
  ::umask(previous);
  for (const auto& folder : {dir_ / "run", dir_ / "run" / "sluice"}) {
    struct stat info {};
    ASSERT_EQ(::stat(folder.c_str(), &info), 0) << folder;
    EXPECT_TRUE(S_ISDIR(info.st_mode));
    EXPECT_EQ(info.st_mode & 0777, 0700u) << folder;
  }
  EXPECT_NE(Log().find("event=socket_folder_created"), std::string::npos) << Log();
  Send(1, Request());
  EXPECT_TRUE(std::holds_alternative<p::Subscribed>(Receive().message));
}

TEST_F(DaemonProcessTest, AnExistingSocketFolderIsUsedAsItIs) {
  const std::filesystem::path folder = dir_ / "shared";
  std::filesystem::create_directory(folder);
  ASSERT_EQ(::chmod(folder.c_str(), 0750), 0);
  socket_ = (folder / "brokerd.sock").string();
  StartDaemon();
  struct stat info {};
  ASSERT_EQ(::stat(folder.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0750u);
  EXPECT_EQ(Log().find("event=socket_folder_created"), std::string::npos) << Log();
}

TEST_F(DaemonProcessTest, ASocketFolderThatIsAFileStopsTheDaemonWithItsName) {
  std::ofstream(dir_ / "file") << "not a folder";
  socket_ = (dir_ / "file" / "brokerd.sock").string();
  EXPECT_EQ(RunDaemonToExit(), 1);
  const std::string log = Log();
  EXPECT_NE(log.find("event=listen_failed"), std::string::npos) << log;
  EXPECT_NE(log.find((dir_ / "file").string() + " is not a folder"), std::string::npos) << log;
}

TEST_F(DaemonProcessTest, ASilentPeerIsDroppedAfterTheLivenessTimeout) {
  Produce(10);
  StartDaemon({"-X", "sluice.liveness.timeout.ms=1000"});
  Send(1, Request());
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open((dir_ / subscribed.segment_name).string()));
  ReadRecords(*reader, 10);
  // No heartbeat from here on: the daemon ends the subscription, which ends the segment.
  EXPECT_RAISES(EndOfStream, reader->Next(10s));
  EXPECT_NE(Log().find("reason=\"no frame for 1000 ms\""), std::string::npos) << Log();
}

TEST_F(DaemonProcessTest, LocalLeadersAreThePartitionsLedByTheConfiguredBroker) {
  for (int32_t partition = 0; partition < kPartitions; ++partition) {
    ASSERT_EQ(rd_kafka_mock_partition_set_leader(cluster_, "t", partition, partition == 1 ? 2 : 3),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  Produce(30);
  StartDaemon({"-X", "sluice.broker.id=2"});
  p::Subscribe request = Request();
  request.local_leaders = true;
  request.partitions.clear();
  Send(1, request);
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  EXPECT_EQ(subscribed.partitions, std::vector<int32_t>{1});
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open((dir_ / subscribed.segment_name).string()));
  std::vector<int32_t> partitions;
  ReadRecords(*reader, 10, &partitions);
  EXPECT_EQ(partitions, std::vector<int32_t>(10, 1));
}

TEST_F(DaemonProcessTest, LocalLeadersWithoutABrokerIdIsABadRequest) {
  StartDaemon();
  p::Subscribe request = Request();
  request.local_leaders = true;
  Send(1, request);
  auto error = std::get<p::ErrorMessage>(Receive().message);
  EXPECT_EQ(error.code, p::ErrorCode::kBadRequest);
  EXPECT_NE(error.message.find("sluice.broker.id"), std::string::npos) << error.message;
}

p::Subscribe ChunkRequest(p::Subscribe request) {
  request.mode = p::Mode::kChunkStreams;
  return request;
}

TEST_F(DaemonProcessTest, ChunkStreamsComeInSeqOrderOnceAcrossPartitionsWithTheirEnd) {
  // Two streams, their chunks spread over the partitions in reverse, one chunk written twice.
  for (int seq = 9; seq >= 0; --seq) {
    for (const std::string stream : {"cyan", "magenta"}) {
      ProduceChunk(seq % kPartitions, stream, std::to_string(seq), seq == 9,
                   stream + "-" + std::to_string(seq));
    }
  }
  ProduceChunk(2, "cyan", "4", false, "cyan-4");
  Flush();
  StartDaemon();
  Send(1, ChunkRequest(Request()));
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  EXPECT_EQ(subscribed.object_kind, ObjectKind::kChunks);
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open((dir_ / subscribed.segment_name).string()));
  auto streams = ReadStreams(*reader, 2);
  for (const std::string stream : {"cyan", "magenta"}) {
    std::vector<std::pair<uint64_t, std::string>> expected;
    for (uint64_t seq = 0; seq < 10; ++seq) {
      expected.emplace_back(seq, stream + "-" + std::to_string(seq));
    }
    EXPECT_EQ(streams[stream], expected) << stream;
  }
  AwaitMetric("sluice_duplicate_chunks_total{topic=\"t\"} 1");
}

TEST_F(DaemonProcessTest, AWindowTooSmallForTheEarlyChunksBlocksTheirPartitionButLosesNothing) {
  // Partition 0 holds seq 1..19, partition 1 seq 0: whatever is read first, at most two early
  // chunks fit the window, so partition 0 must wait for partition 1.
  const std::string payload(100, 'x');
  for (int seq = 1; seq < 20; ++seq) ProduceChunk(0, "s", std::to_string(seq), seq == 19, payload);
  ProduceChunk(1, "s", "0", false, payload);
  Flush();
  StartDaemon();
  p::Subscribe request = ChunkRequest(Request());
  request.reorder_window_bytes = 2 * (payload.size() + ChunkSequencer::kHeldChunkCostBytes) + 50;
  Send(1, request);
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open((dir_ / subscribed.segment_name).string()));
  auto streams = ReadStreams(*reader, 1);
  ASSERT_EQ(streams["s"].size(), 20u);
  for (uint64_t seq = 0; seq < 20; ++seq) EXPECT_EQ(streams["s"][seq].first, seq);
}

TEST_F(DaemonProcessTest, EarlyChunksShowInTheReorderGaugeUntilTheirPredecessorComes) {
  const std::string payload(100, 'x');
  for (int seq = 1; seq <= 3; ++seq) {
    ProduceChunk(seq % kPartitions, "s", std::to_string(seq), seq == 3, payload);
  }
  Flush();
  StartDaemon();
  Send(1, ChunkRequest(Request()));
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open((dir_ / subscribed.segment_name).string()));
  AwaitMetric("sluice_reorder_held_bytes{subscription=\"1\"} " +
              std::to_string(3 * (payload.size() + ChunkSequencer::kHeldChunkCostBytes)) + "\n");

  ProduceChunk(0, "s", "0", false, payload);
  Flush();
  auto streams = ReadStreams(*reader, 1);
  ASSERT_EQ(streams["s"].size(), 4u);
  AwaitMetric("sluice_reorder_held_bytes{subscription=\"1\"} 0\n");
}

TEST_F(DaemonProcessTest, MalformedChunkHeadersGoToTheDeadLetterTopicAndAreCounted) {
  ASSERT_EQ(rd_kafka_mock_topic_create(cluster_, "dead", 1, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  ProduceChunk(0, "s", "0", false, "first");
  ProduceChunk(0, "s", "one", false, "not a number");
  ProduceChunk(0, "s", "1", true, "last");
  Flush();
  StartDaemon({"-X", "sluice.dead.letter.topic=dead"});
  p::Subscribe request = ChunkRequest(Request());
  request.group_id = "g";
  Send(1, request);
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open((dir_ / subscribed.segment_name).string()));
  auto streams = ReadStreams(*reader, 1);
  EXPECT_EQ(streams["s"],
            (std::vector<std::pair<uint64_t, std::string>>{{0, "first"}, {1, "last"}}));
  EXPECT_NE(Log().find("event=malformed_chunk record=\"t [0] at offset 1\""), std::string::npos)
      << Log();

  // The dead letter: the record as it was, with why and where from.
  std::array<char, 512> text{};
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(cluster_),
                    text.data(), text.size());
  rd_kafka_conf_set(conf, "group.id", "dead-letter-check", text.data(), text.size());
  rd_kafka_t* consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, text.data(), text.size());
  rd_kafka_poll_set_consumer(consumer);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, "dead", 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  ASSERT_EQ(rd_kafka_assign(consumer, list), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_message_t* letter = nullptr;
  ASSERT_TRUE(testing::Eventually(
      "a dead letter",
      [&] {
        letter = rd_kafka_consumer_poll(consumer, 100);
        if (letter != nullptr && letter->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
          rd_kafka_message_destroy(letter);
          letter = nullptr;
        }
        return letter != nullptr;
      },
      10s, 0ms));  // each poll waits up to 100 ms itself
  EXPECT_EQ(std::string(static_cast<const char*>(letter->payload), letter->len), "not a number");
  rd_kafka_headers_t* headers = nullptr;
  ASSERT_EQ(rd_kafka_message_headers(letter, &headers), RD_KAFKA_RESP_ERR_NO_ERROR);
  const void* value = nullptr;
  size_t size = 0;
  ASSERT_EQ(rd_kafka_header_get_last(headers, "sluice.error", &value, &size),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_NE(std::string(static_cast<const char*>(value), size).find("sluice.seq"),
            std::string::npos);
  ASSERT_EQ(rd_kafka_header_get_last(headers, "sluice.origin", &value, &size),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(std::string(static_cast<const char*>(value), size), "t/0/1");
  rd_kafka_message_destroy(letter);
  rd_kafka_destroy(consumer);

  const std::string metrics = Scrape();
  EXPECT_NE(metrics.find("sluice_malformed_chunks_total{topic=\"t\"} 1"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("sluice_dead_letters_total{topic=\"t\"} 1"), std::string::npos) << metrics;
}

TEST_F(DaemonProcessTest, AGapThatOutlivesTheTimeoutIsReported) {
  ProduceChunk(0, "s", "0", false, "zero");
  ProduceChunk(0, "s", "2", true, "two");
  Flush();
  StartDaemon({"-X", "sluice.gap.timeout.ms=200"});
  Send(1, ChunkRequest(Request()));
  auto subscribed = std::get<p::Subscribed>(Receive().message);
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open((dir_ / subscribed.segment_name).string()));
  auto first = reader->Next(10s);
  ASSERT_OK(first);
  EXPECT_EQ(first->record_count, 1u) << "seq 0 is delivered, seq 2 waits for seq 1";
  ASSERT_OK(reader->Release(*first));
  AwaitMetric("sluice_stream_gaps_total{topic=\"t\"} 1");
  EXPECT_NE(Log().find("event=stream_gap job=job-1 stream=s missing_from=1 missing_to=1"),
            std::string::npos)
      << Log();
}

}  // namespace
}  // namespace sluice::brokerd
