// LocalProducer against a real SegmentWriter of CHUNKS objects as the producer: the chunks
// routed in order with their bytes, the slots given back only when every routed copy is gone,
// the objects published before Stop or the writer's close taken, a malformed object ending the
// producer with a message, each segment or object that breaks the format counted once, the
// segments it must refuse, the file of a writer killed removed unless its path names another
// file by then, the files of a producer whose connection ended removed, and the start-up cleanup
// of dead producers' files (docs/brokerd.md, "Local producers").
#include "ingest/local_producer.h"

#include <arrow/api.h>
#include <arrow/ipc/api.h>
#include <arrow/util/compression.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "chunk_objects.h"
#include "gtest_util.h"
#include "listening_socket.h"
#include "sluice/layout.h"
#include "sluice/liveness.h"
#include "sluice/random_name.h"
#include "sluice/schemas.h"
#include "sluice/segment_image.h"
#include "sluice/segment_writer.h"

namespace sluice::brokerd {
namespace {

using namespace std::chrono_literals;
using sluice::testing::Eventually;

constexpr char kTopic[] = "sluice.chunks.here";
constexpr uint64_t kProducerId = 41;

// A producer segment's path no other test (or earlier run) uses.
std::string NewSegmentPath() {
  static int counter = 0;
  return "/dev/shm/sluice-test-local-producer-" + std::to_string(getpid()) + "-" +
         std::to_string(counter++);
}

WriterOptions ProducerOptions(const std::string& path, uint32_t slot_count = 8,
                              ObjectKind kind = ObjectKind::kChunks) {
  WriterOptions options;
  options.name = path;
  options.kind = kind;
  options.slot_count = slot_count;
  options.slot_size = 64 << 10;
  options.lane_count = 2;
  return options;
}

// A producer's segment, unlinked by the writer's Close or, left over, by the destructor.
class ProducerSegment {
 public:
  explicit ProducerSegment(uint32_t slot_count = 8, ObjectKind kind = ObjectKind::kChunks)
      : path_(NewSegmentPath()) {
    auto writer = SegmentWriter::Create(ProducerOptions(path_, slot_count, kind));
    EXPECT_OK(writer);
    if (writer.ok()) writer_ = writer.MoveValue();
  }
  ~ProducerSegment() {
    writer_.reset();
    unlink(path_.c_str());
    unlink((path_ + ".bell").c_str());
  }

  Status Publish(const std::vector<ChunkRow>& rows) { return PublishChunks(*writer_, rows); }

  // Publishes `length` bytes that are no Arrow IPC message, claiming one row.
  Status PublishGarbage(size_t length) {
    SLUICE_ASSIGN_OR_RETURN(SlotBuffer slot, writer_->Acquire(5s));
    std::memset(slot.data, 0x5a, length);
    EncodedObject object;
    object.length = length;
    object.record_count = 1;
    return writer_->Publish(object).status();
  }

  // Publishes `batch` as an Arrow IPC message whose body is compressed with `codec`.
  Status PublishCompressed(const arrow::RecordBatch& batch, arrow::Compression::type codec) {
    auto options = arrow::ipc::IpcWriteOptions::Defaults();
    auto made = arrow::util::Codec::Create(codec);
    if (!made.ok()) return Status::InvalidState(made.status().ToString());
    options.codec = std::move(*made);
    auto message = arrow::ipc::SerializeRecordBatch(batch, options);
    if (!message.ok()) return Status::InvalidState(message.status().ToString());
    SLUICE_ASSIGN_OR_RETURN(SlotBuffer slot, writer_->Acquire(5s));
    const auto length = static_cast<size_t>((*message)->size());
    if (length > slot.capacity) return Status::TooLarge("the message does not fit a slot");
    std::memcpy(slot.data, (*message)->data(), length);
    EncodedObject object;
    object.length = length;
    object.record_count = static_cast<uint32_t>(batch.num_rows());
    return writer_->Publish(object).status();
  }

  SegmentWriter& writer() { return *writer_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<SegmentWriter> writer_;
};

// A producer in a forked process: it creates its segment, waits for the daemon's reader,
// publishes `objects` and then waits to be killed, as a TaskManager killed with SIGKILL leaves
// its segment (the child must not touch gtest). The destructor kills it if the test did not and
// removes what it left.
class ProducerProcess {
 public:
  // The writer's heartbeat stops with the process; this is how soon the reader calls it dead.
  static constexpr auto kLivenessTimeout = 1s;

  explicit ProducerProcess(const std::vector<std::vector<ChunkRow>>& objects)
      : path_(NewSegmentPath()) {
    pid_ = fork();
    if (pid_ == 0) _exit(Produce(objects));
  }
  ~ProducerProcess() {
    if (pid_ > 0) Kill();
    unlink(path_.c_str());
    unlink((path_ + ".bell").c_str());
  }

  // Kills the process with SIGKILL and reaps it: true when SIGKILL ended it, false when it had
  // exited before (its exit code says where its producing failed).
  bool Kill() {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = 0;
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }

  const std::string& path() const { return path_; }

 private:
  int Produce(const std::vector<std::vector<ChunkRow>>& objects) {
    WriterOptions options = ProducerOptions(path_);
    options.liveness_timeout = kLivenessTimeout;
    auto writer = SegmentWriter::Create(options);
    if (!writer.ok()) return 10;
    if (!(*writer)->WaitForReaders(1, 10s).ok()) return 11;
    for (const auto& rows : objects) {
      if (!PublishChunks(**writer, rows).ok()) return 12;
    }
    for (;;) pause();
  }

  std::string path_;
  pid_t pid_ = 0;
};

// One CHUNKS row whose payload is `payload_bytes` zeros, which any codec shrinks to a few KiB.
std::shared_ptr<arrow::RecordBatch> ZerosChunk(size_t payload_bytes) {
  arrow::StringBuilder jobs, streams;
  arrow::UInt64Builder seqs;
  arrow::BooleanBuilder eos;
  arrow::BinaryBuilder payloads;
  EXPECT_TRUE(jobs.Append("a").ok() && streams.Append("s").ok() && seqs.Append(1).ok() &&
              eos.Append(false).ok() && payloads.Append(std::string(payload_bytes, '\0')).ok());
  std::vector<std::shared_ptr<arrow::Array>> columns(5);
  EXPECT_TRUE(jobs.Finish(&columns[0]).ok() && streams.Finish(&columns[1]).ok() &&
              seqs.Finish(&columns[2]).ok() && eos.Finish(&columns[3]).ok() &&
              payloads.Finish(&columns[4]).ok());
  return arrow::RecordBatch::Make(ChunksSchema(), 1, std::move(columns));
}

bool Exists(const std::string& path) {
  struct stat info {};
  return lstat(path.c_str(), &info) == 0;
}

// Puts a new regular file under `path`, renamed over what is there, as another process could.
::testing::AssertionResult ReplaceWithAFile(const std::string& path) {
  const std::string other = path + ".other";
  const int fd = open(other.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return ::testing::AssertionFailure() << other << ": " << std::strerror(errno);
  close(fd);
  if (std::rename(other.c_str(), path.c_str()) != 0) {
    return ::testing::AssertionFailure() << path << ": " << std::strerror(errno);
  }
  return ::testing::AssertionSuccess();
}

// Puts into the ring of the segment's attached lane an entry naming a slot beyond its
// slot_count and publishes it, as a writer that breaks the format could (docs/formats.md,
// "Validation").
::testing::AssertionResult PublishASlotBeyondTheSegment(const std::string& path) {
  const auto size = static_cast<size_t>(std::filesystem::file_size(path));
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return ::testing::AssertionFailure() << path << ": " << std::strerror(errno);
  void* mapped = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED)
    return ::testing::AssertionFailure() << "mmap: " << std::strerror(errno);
  auto* base = static_cast<uint8_t*>(mapped);
  auto header = ValidateHeader(base, size);
  ::testing::AssertionResult result = ::testing::AssertionFailure() << "no lane is attached";
  if (!header.ok()) result = ::testing::AssertionFailure() << header.status().ToString();
  namespace ln = layout::lane;
  for (uint32_t lane = 0; header.ok() && lane < header->layout.lane_count; ++lane) {
    uint8_t* lane_base = base + header->layout.LaneOffset(lane);
    const auto word =
        __atomic_load_n(reinterpret_cast<uint64_t*>(lane_base + ln::kLaneWord), __ATOMIC_ACQUIRE);
    if (ln::State(word) != ln::kAttached) continue;
    auto* write_pos = reinterpret_cast<uint64_t*>(lane_base + ln::kWritePos);
    const uint64_t position = __atomic_load_n(write_pos, __ATOMIC_ACQUIRE);
    const uint64_t index = position & (header->layout.ring_capacity - 1);
    __atomic_store_n(reinterpret_cast<uint64_t*>(lane_base + ln::kRing + 8 * index),
                     layout::ring::Entry(1, header->layout.slot_count), __ATOMIC_RELEASE);
    __atomic_store_n(write_pos, position + 1, __ATOMIC_RELEASE);
    result = ::testing::AssertionSuccess();
    break;
  }
  munmap(mapped, size);
  return result;
}

// What a test sees of a producer: its metrics, the failure it reported, its inboxes.
class LocalProducerTest : public ::testing::Test {
 protected:
  Result<std::unique_ptr<LocalProducer>> Start(const std::string& path, uid_t owner = geteuid()) {
    return LocalProducer::Start(kProducerId, path, owner, kTopic, "/dev/shm", router_,
                                LocalProducerMetrics(metrics_), [this](const std::string& m) {
                                  std::lock_guard lock(mutex_);
                                  failures_.push_back(m);
                                });
  }

  std::shared_ptr<LocalChunkInbox> Subscribe(const std::string& job_filter) {
    auto inbox = std::make_shared<LocalChunkInbox>(job_filter, nullptr);
    router_.Add(kTopic, inbox);
    return inbox;
  }

  // Drains `inbox` into `out` until it holds `count` chunks.
  ::testing::AssertionResult DrainUntil(LocalChunkInbox& inbox, std::vector<ReadyMessage>& out,
                                        size_t count) {
    return Eventually(std::to_string(count) + " chunks in the inbox", [&] {
      inbox.Drain(out);
      return out.size() >= count;
    });
  }

  // Subscribes to every job, starts the producer on the segment a forked producer creates, and
  // drains what it routes into `taken` until there are `count` chunks.
  ::testing::AssertionResult StartOnProcess(const ProducerProcess& process, size_t count,
                                            std::unique_ptr<LocalProducer>& producer,
                                            std::vector<ReadyMessage>& taken) {
    auto inbox = Subscribe("");
    // The writer creates its segment first and its doorbell beside it after: a producer started
    // in between is refused for want of the doorbell.
    auto created = Eventually("the producer creates its segment and its doorbell", [&] {
      return Exists(process.path()) && Exists(process.path() + ".bell");
    });
    if (!created) return created;
    auto started = Start(process.path());
    if (!started.ok()) return ::testing::AssertionFailure() << started.status().ToString();
    producer = started.MoveValue();
    return DrainUntil(*inbox, taken, count);
  }

  std::vector<std::string> failures() {
    std::lock_guard lock(mutex_);
    return failures_;
  }

  uint64_t Counted(const char* name) { return metrics_.counter(name, "").value(); }

  Metrics metrics_;
  LocalChunkRouter router_;
  std::mutex mutex_;
  std::vector<std::string> failures_;
};

TEST_F(LocalProducerTest, RoutesEveryChunkInOrderWithItsBytesToTheInboxesThatTakeIt) {
  ProducerSegment segment;
  auto every_job = Subscribe("");
  auto job_a = Subscribe("a");
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  EXPECT_EQ(metrics_.gauge("sluice_local_producers", "").value(), 1);
  ASSERT_OK(segment.Publish({{"a", "s1", 0, false, "first"}, {"b", "s1", 0, false, "second"}}));
  ASSERT_OK(segment.Publish({{"a", "s1", 1, true, std::string(1000, 'x')}}));

  std::vector<ReadyMessage> all, only_a;
  ASSERT_TRUE(DrainUntil(*every_job, all, 3));
  ASSERT_TRUE(DrainUntil(*job_a, only_a, 2));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(*all[0].chunk, (ChunkId{"a", "s1", 0, false}));
  EXPECT_EQ(*all[1].chunk, (ChunkId{"b", "s1", 0, false}));
  EXPECT_EQ(*all[2].chunk, (ChunkId{"a", "s1", 1, true}));
  EXPECT_EQ(all[0].record.value, "first");
  EXPECT_EQ(all[1].record.value, "second");
  EXPECT_EQ(all[2].record.value, std::string(1000, 'x'));
  for (const auto& message : all) {
    EXPECT_EQ(message.record.topic, kTopic);
    EXPECT_EQ(message.record.partition, -1);
    EXPECT_EQ(message.record.offset, -1);
    EXPECT_TRUE(message.record.headers.empty());
    EXPECT_EQ(message.local_producer, kProducerId);
  }
  ASSERT_EQ(only_a.size(), 2u);
  EXPECT_EQ(only_a[0].chunk->seq, 0u);
  EXPECT_EQ(only_a[1].chunk->seq, 1u);
  EXPECT_EQ(only_a[1].record.value->data(), all[2].record.value->data())
      << "both subscriptions view the payload in the producer's slot";
  EXPECT_EQ(Counted("sluice_local_chunks_total"), 3u);
  EXPECT_EQ(Counted("sluice_local_bytes_total"), 5u + 6u + 1000u);
  EXPECT_EQ(Counted("sluice_local_chunks_unrouted_total"), 0u);
  EXPECT_TRUE(failures().empty());
}

TEST_F(LocalProducerTest, GivesASlotBackOnlyWhenEveryRoutedCopyIsGone) {
  ProducerSegment segment(/*slot_count=*/2);
  auto first = Subscribe("");
  auto second = Subscribe("");
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  ASSERT_OK(segment.Publish({{"a", "s", 0, false, "zero"}}));
  ASSERT_OK(segment.Publish({{"a", "s", 1, false, "one"}, {"a", "s", 2, false, "two"}}));
  std::vector<ReadyMessage> from_first, from_second;
  ASSERT_TRUE(DrainUntil(*first, from_first, 3));
  ASSERT_TRUE(DrainUntil(*second, from_second, 3));
  EXPECT_EQ(segment.writer().FreeSlots(), 0u);
  EXPECT_RAISES(TimedOut, segment.writer().Acquire(0ns));

  from_first.clear();
  // The second subscription still views both objects; of the second object it keeps one row.
  from_second.erase(from_second.begin() + 1);
  EXPECT_EQ(segment.writer().FreeSlots(), 0u);
  from_second.erase(from_second.begin());
  EXPECT_EQ(segment.writer().FreeSlots(), 1u) << "the first object's slot is free";
  from_second.clear();
  EXPECT_EQ(segment.writer().FreeSlots(), 2u);
  ASSERT_OK(segment.writer().Acquire(0ns));
}

TEST_F(LocalProducerTest, CountsAndDropsChunksNoSubscriptionTakes) {
  ProducerSegment segment(/*slot_count=*/2);
  auto job_a = Subscribe("a");
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  ASSERT_OK(segment.Publish({{"b", "s", 0, false, "nobody's"}}));
  ASSERT_OK(segment.Publish({{"a", "s", 0, false, "a's"}}));
  std::vector<ReadyMessage> taken;
  ASSERT_TRUE(DrainUntil(*job_a, taken, 1));
  EXPECT_EQ(Counted("sluice_local_chunks_unrouted_total"), 1u);
  EXPECT_EQ(segment.writer().FreeSlots(), 1u) << "the dropped chunk's slot is back";
}

TEST_F(LocalProducerTest, StopTakesWhatIsPublishedFirst) {
  ProducerSegment segment;
  auto inbox = Subscribe("");
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  for (uint64_t seq = 0; seq < 5; ++seq) {
    ASSERT_OK(segment.Publish({{"a", "s", seq, false, "chunk " + std::to_string(seq)}}));
  }
  producer->Stop();
  std::vector<ReadyMessage> taken;
  inbox->Drain(taken);
  ASSERT_EQ(taken.size(), 5u) << "every object published before Stop is routed";
  EXPECT_EQ(taken[4].record.value, "chunk 4");
  producer.reset();
  // The lane is left only when the last chunk is gone: until then the slots stay the daemon's.
  EXPECT_EQ(segment.writer().attached_readers(), 1u);
  taken.clear();
  EXPECT_EQ(segment.writer().attached_readers(), 0u);
  EXPECT_EQ(metrics_.gauge("sluice_local_producers", "").value(), 0);
}

TEST_F(LocalProducerTest, EndsAfterTakingWhatTheWriterPublishedBeforeClosing) {
  ProducerSegment segment;
  auto inbox = Subscribe("");
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  for (uint64_t seq = 0; seq < 3; ++seq) {
    ASSERT_OK(segment.Publish({{"a", "s", seq, seq == 2, "chunk"}}));
  }
  // The slots are held by the routed chunks, so the close does not wait for them to drain.
  EXPECT_RAISES(TimedOut, segment.writer().Close(0ns));
  ASSERT_TRUE(Eventually("the producer ends", [&] { return producer->ended(); }));
  std::vector<ReadyMessage> taken;
  inbox->Drain(taken);
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_TRUE(taken[2].chunk->eos);
  EXPECT_TRUE(failures().empty()) << failures()[0];
}

TEST_F(LocalProducerTest, RemovesTheSegmentOfAWriterKilledAfterTakingWhatItPublished) {
  ProducerProcess process(
      {{{"a", "s", 0, false, "zero"}, {"a", "s", 1, false, "one"}}, {{"a", "s", 2, true, "two"}}});
  std::unique_ptr<LocalProducer> producer;
  std::vector<ReadyMessage> taken;
  ASSERT_TRUE(StartOnProcess(process, 3, producer, taken));
  ASSERT_TRUE(process.Kill()) << "the producer was alive until killed";
  ASSERT_TRUE(Eventually("the producer ends", [&] { return producer->ended(); }));
  EXPECT_EQ(taken[2].record.value, "two");
  EXPECT_TRUE(taken[2].chunk->eos);
  EXPECT_FALSE(Exists(process.path())) << "the dead writer's segment is removed";
  EXPECT_FALSE(Exists(process.path() + ".bell")) << "and its doorbell socket";
  EXPECT_EQ(taken[0].record.value, "zero") << "the routed chunks still view the removed file";
  EXPECT_TRUE(failures().empty()) << failures()[0];
}

// A killed producer's connection ends long before its heartbeat is stale: the daemon then takes
// what it published and removes its files, as a dead writer's.
TEST_F(LocalProducerTest, RemovesTheSegmentAndDoorbellOnceTheConnectionEndedAndTheChunksAreTaken) {
  ProducerSegment segment;
  auto inbox = Subscribe("");
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  ASSERT_TRUE(Exists(segment.path() + ".bell"));
  ASSERT_OK(segment.Publish({{"a", "s", 0, false, "zero"}}));
  ASSERT_OK(segment.Publish({{"a", "s", 1, true, "one"}}));
  producer->StopAfterItsConnectionEnded();
  std::vector<ReadyMessage> taken;
  inbox->Drain(taken);
  ASSERT_EQ(taken.size(), 2u) << "what was published is taken first";
  EXPECT_FALSE(Exists(segment.path())) << "the segment is removed";
  EXPECT_FALSE(Exists(segment.path() + ".bell")) << "and its doorbell";
  EXPECT_EQ(taken[1].record.value, "one") << "the routed chunks still view the removed file";
}

TEST_F(LocalProducerTest, KeepsAFileThatReplacedADeadWritersDoorbell) {
  ProducerProcess process({{{"a", "s", 0, true, "zero"}}});
  std::unique_ptr<LocalProducer> producer;
  std::vector<ReadyMessage> taken;
  ASSERT_TRUE(StartOnProcess(process, 1, producer, taken));
  // A regular file takes the doorbell's name while the writer is still alive.
  const std::string bell = process.path() + ".bell";
  ASSERT_TRUE(ReplaceWithAFile(bell));
  ASSERT_TRUE(process.Kill()) << "the producer was alive until killed";
  ASSERT_TRUE(Eventually("the producer ends", [&] { return producer->ended(); }));
  EXPECT_FALSE(Exists(process.path())) << "the dead writer's segment is removed";
  struct stat info {};
  ASSERT_EQ(lstat(bell.c_str(), &info), 0) << "a file that is not its socket is kept";
  EXPECT_TRUE(S_ISREG(info.st_mode));
}

TEST_F(LocalProducerTest, KeepsTheFileThatReplacedADeadWritersSegment) {
  ProducerProcess process({{{"a", "s", 0, false, "zero"}}});
  std::unique_ptr<LocalProducer> producer;
  std::vector<ReadyMessage> taken;
  ASSERT_TRUE(StartOnProcess(process, 1, producer, taken));
  // Another file takes the segment's name while the writer is still alive.
  ASSERT_TRUE(ReplaceWithAFile(process.path()));
  struct stat replacement {};
  ASSERT_EQ(lstat(process.path().c_str(), &replacement), 0);

  ASSERT_TRUE(process.Kill());
  ASSERT_TRUE(Eventually("the producer ends", [&] { return producer->ended(); }));
  struct stat after {};
  ASSERT_EQ(lstat(process.path().c_str(), &after), 0) << "the file that replaced it stays";
  EXPECT_EQ(after.st_ino, replacement.st_ino);
  EXPECT_EQ(after.st_dev, replacement.st_dev);
  EXPECT_TRUE(failures().empty()) << failures()[0];
}

TEST_F(LocalProducerTest, AMalformedObjectEndsTheProducerAfterTheChunksBeforeIt) {
  ProducerSegment segment;
  auto inbox = Subscribe("");
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  ASSERT_OK(segment.Publish({{"a", "s", 0, false, "good"}}));
  ASSERT_OK(segment.PublishGarbage(256));
  ASSERT_OK(segment.Publish({{"a", "s", 1, false, "after"}}));
  ASSERT_TRUE(Eventually("the producer ends", [&] { return producer->ended(); }));
  const auto reported = failures();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_NE(reported[0].find("local producer 41"), std::string::npos) << reported[0];
  EXPECT_NE(reported[0].find(segment.path()), std::string::npos) << reported[0];
  EXPECT_NE(reported[0].find("object 1 "), std::string::npos) << reported[0];
  EXPECT_NE(reported[0].find("is not a CHUNKS batch"), std::string::npos) << reported[0];
  std::vector<ReadyMessage> taken;
  inbox->Drain(taken);
  ASSERT_EQ(taken.size(), 1u) << "the chunk before the malformed object was routed, none after";
  EXPECT_EQ(taken[0].record.value, "good");
  EXPECT_EQ(Counted("sluice_local_objects_malformed_total"), 1u);
}

// Job ids and stream names travel on into readers' file names, logs and metric labels
// (docs/formats.md, "Object schemas"): an object with a name that is none is malformed, and none
// of its rows is routed.
TEST_F(LocalProducerTest, AnObjectWithAJobOrStreamThatIsNoNameEndsTheProducer) {
  const std::vector<ChunkRow> bad_rows = {{"..", "../../etc", 1, false, "escaping"},
                                          {"", "s", 1, false, "empty job"},
                                          {"a", std::string("s\0t", 3), 1, false, "nul"}};
  for (const ChunkRow& bad : bad_rows) {
    SCOPED_TRACE(bad.payload);
    ProducerSegment segment;
    auto inbox = std::make_shared<LocalChunkInbox>("", nullptr);
    router_.Add(kTopic, inbox);
    const size_t failed_before = failures().size();
    const uint64_t malformed_before = Counted("sluice_local_objects_malformed_total");
    ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
    ASSERT_OK(segment.Publish({{"a", "s", 0, false, "good"}}));
    ASSERT_OK(segment.Publish({{"a", "s", 1, false, "fine"}, bad}));
    ASSERT_TRUE(Eventually("the producer ends", [&] { return producer->ended(); }));
    const auto reported = failures();
    ASSERT_EQ(reported.size(), failed_before + 1);
    EXPECT_NE(reported.back().find("object 1 "), std::string::npos) << reported.back();
    EXPECT_NE(reported.back().find("has a name that is none"), std::string::npos)
        << reported.back();
    std::vector<ReadyMessage> taken;
    inbox->Drain(taken);
    ASSERT_EQ(taken.size(), 1u) << "the chunk before the object was routed, none of the object's";
    EXPECT_EQ(taken[0].record.value, "good");
    EXPECT_EQ(Counted("sluice_local_objects_malformed_total"), malformed_before + 1);
    router_.Remove(kTopic, inbox.get());
  }
}

// The daemon, often root, connects to a producer's doorbell only if NAME.bell in the segment
// folder is a socket of the peer's itself (docs/brokerd.md, "Local producers"); anything else
// rings nobody and refuses the producer, whose thread would otherwise poll its segment every
// millisecond while it is idle. Each case puts its socket in place of the writer's.
TEST_F(LocalProducerTest, ConnectsTheDoorbellThatIsASocketOfThePeers) {
  ProducerSegment segment;
  const std::string bell = segment.path() + ".bell";
  ASSERT_EQ(unlink(bell.c_str()), 0);
  sluice::testing::ListeningSocket own(bell);
  ASSERT_EQ(own.error(), "");
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  ASSERT_TRUE(own.HasAConnection()) << "attaching connected the doorbell";
  EXPECT_EQ(own.AcceptAndReadAByte(5000), 0) << "and sent its lane, 0";
}

// The refusal of a producer without a doorbell it may use, in the same words whatever was there.
void ExpectRefusedForItsDoorbell(const Result<std::unique_ptr<LocalProducer>>& producer,
                                 const std::string& path) {
  ASSERT_RAISES(InvalidArgument, producer) << "a producer was started without a doorbell";
  EXPECT_NE(producer.status().message().find(path + ": no doorbell socket of yours beside it"),
            std::string::npos)
      << producer.status().message();
}

TEST_F(LocalProducerTest, RefusesASegmentWithoutADoorbell) {
  ProducerSegment segment;
  ASSERT_EQ(unlink((segment.path() + ".bell").c_str()), 0);
  ExpectRefusedForItsDoorbell(Start(segment.path()), segment.path());
  EXPECT_EQ(Counted("sluice_local_objects_malformed_total"), 0u) << "no object was malformed";
}

// A link there would lead the connect to any socket the daemon may reach: its own control
// socket, another user's.
TEST_F(LocalProducerTest, ConnectsNoDoorbellThatIsALinkAndRefusesTheProducer) {
  ProducerSegment segment;
  const std::string bell = segment.path() + ".bell";
  std::vector<uid_t> owners = {geteuid()};
  if (geteuid() == 0) owners.push_back(65534);
  for (const uid_t owner : owners) {
    SCOPED_TRACE("a socket of uid " + std::to_string(owner));
    sluice::testing::ListeningSocket target(segment.path() + ".target");
    ASSERT_EQ(target.error(), "");
    ASSERT_EQ(lchown(target.path().c_str(), owner, static_cast<gid_t>(-1)), 0)
        << std::strerror(errno);
    unlink(bell.c_str());
    ASSERT_EQ(symlink(target.path().c_str(), bell.c_str()), 0) << std::strerror(errno);
    ExpectRefusedForItsDoorbell(Start(segment.path()), segment.path());
    EXPECT_FALSE(target.HasAConnection()) << "the socket the link names saw no connection";
  }
}

TEST_F(LocalProducerTest, ConnectsNoDoorbellOfAnotherUserAndRefusesTheProducer) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a socket to another uid needs root";
  ProducerSegment segment;
  const std::string bell = segment.path() + ".bell";
  ASSERT_EQ(unlink(bell.c_str()), 0);
  sluice::testing::ListeningSocket other(bell);
  ASSERT_EQ(other.error(), "");
  ASSERT_EQ(lchown(bell.c_str(), 65534, static_cast<gid_t>(-1)), 0) << std::strerror(errno);
  ExpectRefusedForItsDoorbell(Start(segment.path()), segment.path());
  EXPECT_FALSE(other.HasAConnection()) << "another user's socket saw no connection";
}

// A folder of its own for the start-up cleanup, removed with what is left in it.
class ProducerFolder {
 public:
  ProducerFolder()
      : path_("/dev/shm/sluice-test-producer-folder-" + std::to_string(getpid()) + "-" +
              std::to_string(counter_++)) {
    EXPECT_EQ(mkdir(path_.c_str(), 0700), 0) << std::strerror(errno);
  }
  ~ProducerFolder() { std::filesystem::remove_all(path_); }
  std::string Path(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

// What a producer killed while no daemon read its segment leaves: the segment, whose heartbeat
// stops, and its doorbell's socket file. Made as a copy of a live writer's file (its heartbeat
// frozen at the copy) and a socket bound and closed, so no process has to die for it.
::testing::AssertionResult LeaveADeadProducersFiles(const SegmentWriter& live,
                                                    const std::string& path) {
  std::filesystem::copy_file(live.path(), path);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string bell = path + ".bell";
  std::memcpy(address.sun_path, bell.c_str(), bell.size() + 1);
  const bool bound = bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  if (!bound) return ::testing::AssertionFailure() << bell << ": " << std::strerror(errno);
  // Stale once its heartbeat is older than the segment's liveness timeout.
  return Eventually("the copy's heartbeat is stale", [&] {
    std::ifstream in(path, std::ios::binary);
    uint64_t heartbeat = 0;
    in.seekg(static_cast<std::streamoff>(layout::header::kWriterHeartbeatNs));
    in.read(reinterpret_cast<char*>(&heartbeat), sizeof(heartbeat));
    return IsStale(heartbeat, std::chrono::nanoseconds(ProducerProcess::kLivenessTimeout).count(),
                   MonotonicNanos());
  });
}

TEST(RemoveDeadProducerSegments, RemovesTheFilesOfAProducerWhoseWriterIsGoneAndNothingElse) {
  ProducerFolder folder;
  WriterOptions options = ProducerOptions(folder.Path("sluice-produce-0000000000000001"));
  options.liveness_timeout = ProducerProcess::kLivenessTimeout;
  ASSERT_OK_AND_ASSIGN(auto live, SegmentWriter::Create(options));
  const std::string dead = folder.Path("sluice-produce-0000000000000002");
  ASSERT_TRUE(LeaveADeadProducersFiles(*live, dead));
  // Names of the prefix that are no dead producer's segment.
  const std::string garbage = folder.Path("sluice-produce-0000000000000003");
  { std::ofstream(garbage) << std::string(8192, 'x'); }
  const std::string link = folder.Path("sluice-produce-0000000000000004");
  ASSERT_EQ(symlink(dead.c_str(), link.c_str()), 0);
  const std::string other = folder.Path("someone-else.0000000000000002");
  std::filesystem::copy_file(dead, other);

  RemoveDeadProducerSegments(folder.path());
  EXPECT_FALSE(Exists(dead)) << "the dead producer's segment is removed";
  EXPECT_FALSE(Exists(dead + ".bell")) << "and its doorbell";
  EXPECT_TRUE(Exists(live->path())) << "a live producer's segment stays";
  EXPECT_TRUE(Exists(live->path() + ".bell")) << "and its doorbell";
  EXPECT_TRUE(Exists(garbage)) << "a file that is no segment stays";
  EXPECT_TRUE(Exists(link)) << "a symbolic link stays";
  EXPECT_TRUE(Exists(other)) << "another program's file stays";
}

class LocalProducerCompressionTest
    : public LocalProducerTest,
      public ::testing::WithParamInterface<arrow::Compression::type> {};

// A compressed body would be inflated onto the daemon's heap, a few KiB of a producer's slot
// claiming many MiB (docs/brokerd.md, "Local producers"), so it is refused before it is read.
TEST_P(LocalProducerCompressionTest, ACompressedObjectEndsTheProducerWithoutBeingInflated) {
  const arrow::Compression::type codec = GetParam();
  if (!arrow::util::Codec::IsAvailable(codec)) {
    GTEST_SKIP() << "this libarrow was built without "
                 << arrow::util::Codec::GetCodecAsString(codec);
  }
  ProducerSegment segment;
  auto inbox = Subscribe("");
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  ASSERT_OK(segment.Publish({{"a", "s", 0, false, "good"}}));
  // 4 MiB of payload in an object of a few KiB, which fits the 64 KiB slot.
  ASSERT_OK(segment.PublishCompressed(*ZerosChunk(4 << 20), codec));
  ASSERT_TRUE(Eventually("the producer ends", [&] { return producer->ended(); }));
  const auto reported = failures();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_NE(reported[0].find("object 1 "), std::string::npos) << reported[0];
  EXPECT_NE(reported[0].find("has a compressed body"), std::string::npos) << reported[0];
  std::vector<ReadyMessage> taken;
  inbox->Drain(taken);
  ASSERT_EQ(taken.size(), 1u) << "the chunk before the compressed object was routed";
  EXPECT_EQ(taken[0].record.value, "good");
  EXPECT_EQ(Counted("sluice_local_objects_malformed_total"), 1u);
}

INSTANTIATE_TEST_SUITE_P(Codecs, LocalProducerCompressionTest,
                         ::testing::Values(arrow::Compression::LZ4_FRAME, arrow::Compression::ZSTD),
                         [](const auto& codec) {
                           return arrow::util::Codec::GetCodecAsString(codec.param);
                         });

// The daemon, often root, opens only a name directly in its segment folder, never a path the
// peer chose (docs/brokerd.md, "Local producers"): not another folder, not one reached through a
// link or "..", not a name with characters a segment's has not.
TEST_F(LocalProducerTest, RefusesEveryPathButANameInTheSegmentFolder) {
  ProducerSegment segment;
  const std::string name = segment.path().substr(std::string("/dev/shm/").size());
  const std::string link = "/dev/shm/sluice-test-link-" + std::to_string(getpid());
  ASSERT_EQ(symlink("/dev/shm", link.c_str()), 0) << std::strerror(errno);
  for (const std::string& path :
       std::vector<std::string>{link + "/" + name, "/dev/shm/../dev/shm/" + name,
                                "/dev/shm/./" + name, "/dev/shm//" + name, "/tmp/" + name, name,
                                "/dev/shm/", "/dev/shm/..", "/dev/shm/a b", "/dev/shm"}) {
    SCOPED_TRACE(path);
    auto producer = Start(path);
    ASSERT_RAISES(InvalidArgument, producer);
    EXPECT_NE(producer.status().message().find(
                  "a producer's segment must be named by the segment folder /dev/shm "
                  "(sluice.segment.dir), a slash and a name"),
              std::string::npos)
        << producer.status().message();
  }
  unlink(link.c_str());
  EXPECT_EQ(segment.writer().attached_readers(), 0u) << "no path led to the segment";
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  EXPECT_EQ(segment.writer().attached_readers(), 1u) << "its name in the folder does";
}

// A file the peer may not hand over is refused in one and the same words whatever it is, so that
// the daemon tells the peer nothing of files it could not look at itself; the daemon's log says
// which it was (docs/brokerd.md, "Local producers").
TEST_F(LocalProducerTest, RefusesWhatIsNoSegmentOfThePeersInTheSameWords) {
  ProducerSegment own;
  const std::string path = NewSegmentPath();
  auto refusal = [&] {
    auto producer = Start(path);
    EXPECT_RAISES(InvalidArgument, producer);
    return producer.status().message();
  };
  const std::string missing = refusal();
  EXPECT_EQ(missing, "cannot read the producer segment " + path + ": no segment of yours named " +
                         path.substr(std::string("/dev/shm/").size()) + " in the segment folder");

  ASSERT_EQ(symlink(own.path().c_str(), path.c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(refusal(), missing) << "a link, to the peer's own segment even";
  ASSERT_EQ(unlink(path.c_str()), 0);

  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  EXPECT_EQ(refusal(), missing) << "a FIFO";
  ASSERT_EQ(unlink(path.c_str()), 0);

  ASSERT_EQ(mkdir(path.c_str(), 0700), 0) << std::strerror(errno);
  EXPECT_EQ(refusal(), missing) << "a folder";
  ASSERT_EQ(rmdir(path.c_str()), 0);

  // Another's segment: the peer's uid is not the file's.
  auto other = Start(own.path(), geteuid() + 1);
  EXPECT_EQ(other.status().message(),
            "cannot read the producer segment " + own.path() + ": no segment of yours named " +
                own.path().substr(std::string("/dev/shm/").size()) + " in the segment folder");
  EXPECT_EQ(own.writer().attached_readers(), 0u);
  EXPECT_EQ(metrics_.gauge("sluice_local_producers", "").value(), 0);
}

TEST_F(LocalProducerTest, RefusesARecordsSegment) {
  ProducerSegment records(8, ObjectKind::kRecords);
  auto producer = Start(records.path());
  ASSERT_RAISES(InvalidArgument, producer);
  EXPECT_NE(producer.status().message().find("object_kind is RECORDS"), std::string::npos)
      << producer.status().message();
  EXPECT_EQ(records.writer().attached_readers(), 0u) << "a refused segment keeps no lane";
  EXPECT_EQ(Counted("sluice_local_objects_malformed_total"), 1u);
}

// A file of the peer's that is no segment at all is its fault too (docs/brokerd.md, "Metrics").
TEST_F(LocalProducerTest, RefusesAFileThatIsNoSegmentAndCountsIt) {
  const std::string path = NewSegmentPath();
  { std::ofstream(path) << std::string(8192, 'x'); }
  auto producer = Start(path);
  unlink(path.c_str());
  ASSERT_RAISES(Corrupt, producer);
  EXPECT_NE(producer.status().message().find("magic"), std::string::npos)
      << producer.status().message();
  EXPECT_EQ(Counted("sluice_local_objects_malformed_total"), 1u);
}

// What the peer may not hand over, or the daemon cannot give, is no malformed segment.
TEST_F(LocalProducerTest, CountsNoRefusalThatIsNoSegmentsFault) {
  ProducerSegment own;
  EXPECT_RAISES(InvalidArgument, Start(NewSegmentPath())) << "missing";
  EXPECT_RAISES(InvalidArgument,
                Start("/tmp/" + own.path().substr(std::string("/dev/shm/").size())))
      << "outside the segment folder";
  EXPECT_RAISES(InvalidArgument, Start(own.path(), geteuid() + 1)) << "another's";
  ASSERT_OK_AND_ASSIGN(auto first, Start(own.path()));
  ASSERT_OK_AND_ASSIGN(auto second, Start(own.path()));
  EXPECT_RAISES(NoFreeLane, Start(own.path())) << "both lanes taken";
  EXPECT_EQ(Counted("sluice_local_objects_malformed_total"), 0u);
}

// A producer may truncate its file under the daemon's mapping (docs/brokerd.md, "Local
// producers"): its end is counted once, whatever the zeros it then reads as look like.
TEST_F(LocalProducerTest, ATruncatedSegmentEndsTheProducerCountedOnce) {
  ProducerSegment segment;
  auto inbox = Subscribe("");
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  ASSERT_OK(segment.Publish({{"a", "s", 0, false, "good"}}));
  std::vector<ReadyMessage> taken;
  ASSERT_TRUE(DrainUntil(*inbox, taken, 1));
  // The header page stays, which the test's own writer's heartbeat writes; the lanes and slots,
  // which the producer's reader reads and writes, go.
  const auto size = static_cast<off_t>(std::filesystem::file_size(segment.path()));
  ASSERT_EQ(truncate(segment.path().c_str(), 4096), 0) << std::strerror(errno);
  const bool ended = Eventually("the producer ends", [&] { return producer->ended(); });
  // Back to its size before the writer, which looks at its lanes when it closes, is destroyed.
  ASSERT_EQ(truncate(segment.path().c_str(), size), 0) << std::strerror(errno);
  ASSERT_TRUE(ended);
  const auto reported = failures();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_NE(reported[0].find("truncated"), std::string::npos) << reported[0];
  EXPECT_EQ(Counted("sluice_local_objects_malformed_total"), 1u);
}

TEST_F(LocalProducerTest, ALaneTheWriterBrokeEndsTheProducerCountedOnce) {
  ProducerSegment segment;
  auto inbox = Subscribe("");
  ASSERT_OK_AND_ASSIGN(auto producer, Start(segment.path()));
  ASSERT_OK(segment.Publish({{"a", "s", 0, false, "good"}}));
  std::vector<ReadyMessage> taken;
  ASSERT_TRUE(DrainUntil(*inbox, taken, 1));
  ASSERT_TRUE(PublishASlotBeyondTheSegment(segment.path()));
  ASSERT_TRUE(Eventually("the producer ends", [&] { return producer->ended(); }));
  const auto reported = failures();
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_NE(reported[0].find("ring"), std::string::npos) << reported[0];
  EXPECT_EQ(Counted("sluice_local_objects_malformed_total"), 1u);
}

}  // namespace
}  // namespace sluice::brokerd
