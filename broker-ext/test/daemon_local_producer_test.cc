// Local producers in the real daemon (docs/brokerd.md, "Local producers"; docs/formats.md,
// "PRODUCE"): a producer hands the daemon a CHUNKS segment of its own, and its chunks merge with
// the chunk records fetched from Kafka into each CHUNK_STREAMS stream's seq order, once each.
// CLOSE of the producer takes what it published first; a segment outside the segment folder, a
// file of another owner, a topic not granted and a malformed object are refused.
#include <arrow/api.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <utility>

#include "chunk_objects.h"
#include "daemon_connection.h"
#include "sluice/schemas.h"
#include "sluice/segment_reader.h"
#include "sluice/segment_writer.h"
#include "unaccepting_socket.h"

namespace sluice::brokerd {
namespace {

namespace p = protocol;
using namespace std::chrono_literals;

constexpr char kTopic[] = "sluice.chunks.here";
constexpr char kJob[] = "job-1";
constexpr char kStream[] = "cyan";
constexpr uint32_t kProducerSlots = 4;

std::string Payload(uint64_t seq) { return "chunk-" + std::to_string(seq); }

class DaemonLocalProducerTest : public DaemonConnectionTest {
 protected:
  void SetUp() override {
    DaemonConnectionTest::SetUp();
    CreateTopic(kTopic, 1);
    StartGrantingTheTopic();
  }

  // Starts the daemon; the peer may read and produce to kTopic only.
  void StartGrantingTheTopic(std::vector<std::string> extra = {}) {
    const std::string grant = "uid=" + std::to_string(::geteuid()) + ":" + kTopic;
    extra.insert(extra.begin(),
                 {"-X", "sluice.allowed.topics=" + grant, "-X", "sluice.produce.topics=" + grant});
    StartDaemon(std::move(extra));
  }

  // Starts the daemon again with `extra`.
  void RestartGrantingTheTopic(std::vector<std::string> extra) {
    StopTheDaemon();
    StartGrantingTheTopic(std::move(extra));
  }

  void StopTheDaemon() {
    ::kill(daemon_, SIGKILL);
    ::waitpid(daemon_, nullptr, 0);
  }

  // A producer's segment in the test's folder, as a SluiceSink's local channel makes one.
  std::unique_ptr<SegmentWriter> ProducerSegment(const std::string& name) {
    WriterOptions options;
    options.name = (dir_ / name).string();
    options.kind = ObjectKind::kChunks;
    options.slot_count = kProducerSlots;
    options.slot_size = 64 << 10;
    options.lane_count = 1;
    auto writer = SegmentWriter::Create(options);
    EXPECT_OK(writer);
    return writer.ok() ? writer.MoveValue() : nullptr;
  }

  // Publishes one object of the stream's chunks `seqs`.
  static void Publish(SegmentWriter& writer, const std::vector<uint64_t>& seqs) {
    std::vector<ChunkRow> rows;
    for (uint64_t seq : seqs) rows.push_back({kJob, kStream, seq, false, Payload(seq)});
    ASSERT_OK(PublishChunks(writer, rows));
  }

  // A chunk record of the stream, through Kafka.
  void ProduceChunk(uint64_t seq, bool eos = false) {
    std::vector<std::pair<std::string, std::string>> headers = {
        {"sluice.job", kJob}, {"sluice.stream", kStream}, {"sluice.seq", std::to_string(seq)}};
    if (eos) headers.emplace_back("sluice.eos", "true");
    Produce(kTopic, 0, Payload(seq), headers);
  }

  // Subscribes CHUNK_STREAMS to kTopic; its segment's reader.
  std::unique_ptr<SegmentReader> Subscribe(DaemonConnection& connection) {
    p::Subscribe request;
    request.slot_count = 8;
    request.slot_size = 64 * 1024;
    request.mode = p::Mode::kChunkStreams;
    request.topic = kTopic;
    request.partitions = {{0, p::StartPosition::kEarliest, 0}};
    connection.Send(1, request);
    std::optional<p::Frame> answer = connection.Receive();
    EXPECT_TRUE(answer.has_value()) << Log();
    if (!answer.has_value()) return nullptr;
    auto* subscribed = std::get_if<p::Subscribed>(&answer->message);
    EXPECT_NE(subscribed, nullptr) << p::NameOf(p::TypeOf(answer->message));
    if (subscribed == nullptr) return nullptr;
    auto reader = SegmentReader::Open((dir_ / subscribed->segment_name).string());
    EXPECT_OK(reader);
    return reader.ok() ? reader.MoveValue() : nullptr;
  }

  // Sends PRODUCE; the daemon's answer.
  std::optional<p::Frame> Offer(DaemonConnection& connection, const std::string& topic,
                                const std::string& path) {
    p::Produce request;
    request.topic = topic;
    request.segment_path = path;
    connection.Send(2, request);
    return connection.Receive();
  }

  // PRODUCE that must be answered PRODUCING; the producer id.
  uint64_t StartProducing(DaemonConnection& connection, const std::string& path) {
    std::optional<p::Frame> answer = Offer(connection, kTopic, path);
    EXPECT_TRUE(answer.has_value()) << Log();
    if (!answer.has_value()) return 0;
    EXPECT_EQ(answer->request_id, 2u);
    auto* producing = std::get_if<p::Producing>(&answer->message);
    EXPECT_NE(producing, nullptr) << p::NameOf(p::TypeOf(answer->message)) << " " << Log();
    return producing != nullptr ? producing->producer_id : 0;
  }

  // The (seq, payload) of the chunks the segment delivers until the one with `last`, in order.
  std::vector<std::pair<uint64_t, std::string>> ChunksThrough(SegmentReader& reader,
                                                              uint64_t last) {
    std::vector<std::pair<uint64_t, std::string>> chunks;
    while (chunks.empty() || chunks.back().first != last) {
      auto object = reader.Next(10s);
      EXPECT_OK(object) << Log();
      if (!object.ok()) return chunks;
      EXPECT_EQ(object->partition, -1);
      auto batch = DecodeObject(*object, ChunksSchema());
      EXPECT_OK(batch);
      if (!batch.ok()) return chunks;
      auto seq = std::static_pointer_cast<arrow::UInt64Array>((*batch)->GetColumnByName("seq"));
      auto payload =
          std::static_pointer_cast<arrow::BinaryArray>((*batch)->GetColumnByName("payload"));
      for (int64_t row = 0; row < (*batch)->num_rows(); ++row) {
        chunks.emplace_back(seq->Value(row), std::string(payload->GetView(row)));
      }
      EXPECT_OK(reader.Release(*object));
    }
    return chunks;
  }

  static std::vector<std::pair<uint64_t, std::string>> Expected(uint64_t through) {
    std::vector<std::pair<uint64_t, std::string>> chunks;
    for (uint64_t seq = 0; seq <= through; ++seq) chunks.emplace_back(seq, Payload(seq));
    return chunks;
  }

  // The ERROR `frame` holds (failing the test when it is something else).
  static std::optional<p::ErrorMessage> ErrorIn(const std::optional<p::Frame>& frame) {
    if (!frame.has_value()) return std::nullopt;
    auto* error = std::get_if<p::ErrorMessage>(&frame->message);
    EXPECT_NE(error, nullptr) << p::NameOf(p::TypeOf(frame->message));
    return error != nullptr ? std::optional(*error) : std::nullopt;
  }
};

TEST_F(DaemonLocalProducerTest, LocalAndFetchedChunksOfAStreamArriveOnceEachInSeqOrder) {
  auto subscriber = Connect();
  auto reader = Subscribe(*subscriber);
  ASSERT_NE(reader, nullptr);
  auto segment = ProducerSegment("producer.seg");
  ASSERT_NE(segment, nullptr);
  auto producer = Connect();
  const uint64_t id = StartProducing(*producer, segment->path());
  ASSERT_GE(id, 1u);

  // The local producer has the even seqs, Kafka the odd ones, and seq 4 a second time: a task
  // computed again after it went the local way (docs/generation.md, "Recovery").
  for (uint64_t seq = 0; seq < 20; seq += 4) {
    Publish(*segment, {seq, seq + 2});
    ProduceChunk(seq + 1);
    if (seq == 4) ProduceChunk(4);
    ProduceChunk(seq + 3, seq + 3 == 19);
  }
  EXPECT_EQ(ChunksThrough(*reader, 19), Expected(19));
  // Every slot of the producer's segment goes back once its chunks are in the reader's.
  EXPECT_TRUE(testing::Eventually("the producer's slots back", [&] {
    return segment->FreeSlots() == kProducerSlots;
  })) << Log();
}

TEST_F(DaemonLocalProducerTest, CloseOfTheProducerTakesWhatItPublishedFirst) {
  auto subscriber = Connect();
  auto reader = Subscribe(*subscriber);
  ASSERT_NE(reader, nullptr);
  auto segment = ProducerSegment("producer.seg");
  ASSERT_NE(segment, nullptr);
  auto producer = Connect();
  const uint64_t id = StartProducing(*producer, segment->path());
  ASSERT_GE(id, 1u);

  Publish(*segment, {0, 1});
  Publish(*segment, {2});
  Publish(*segment, {3, 4});
  producer->Send(3, p::Close{id});
  EXPECT_EQ(ChunksThrough(*reader, 4), Expected(4));
  EXPECT_TRUE(testing::Eventually("the daemon to leave the producer's segment", [&] {
    return segment->attached_readers() == 0;
  })) << Log();
  // CLOSE of a producer already ended names nothing of the connection.
  producer->Send(4, p::Close{id});
  const std::optional<p::ErrorMessage> error = ErrorIn(producer->Receive());
  ASSERT_TRUE(error.has_value()) << Log();
  EXPECT_EQ(error->code, p::ErrorCode::kUnknownSubscription);
}

// A killed producer's control connection ends first, long before its heartbeat is stale: the
// daemon takes what it published, then removes its segment and doorbell, which nobody else would.
TEST_F(DaemonLocalProducerTest, TheEndOfAProducersConnectionRemovesItsFilesAfterTakingItsChunks) {
  auto subscriber = Connect();
  auto reader = Subscribe(*subscriber);
  ASSERT_NE(reader, nullptr);
  auto segment = ProducerSegment("sluice-produce-00000000000000aa");
  ASSERT_NE(segment, nullptr);
  const std::string path = segment->path();
  auto producer = Connect();
  ASSERT_GE(StartProducing(*producer, path), 1u);
  Publish(*segment, {0, 1});
  Publish(*segment, {2});
  producer.reset();  // its end, as a SIGKILL of its process ends it

  EXPECT_EQ(ChunksThrough(*reader, 2), Expected(2));
  EXPECT_TRUE(testing::Eventually("the producer's segment and doorbell removed", [&] {
    return !std::filesystem::exists(std::filesystem::symlink_status(path)) &&
           !std::filesystem::exists(std::filesystem::symlink_status(path + ".bell"));
  })) << Log();
  EXPECT_NE(Log().find("event=dead_producer_segment_removed"), std::string::npos) << Log();
  EXPECT_NE(Log().find("cause=connection_ended"), std::string::npos) << Log();
}

// Each producer holds a thread, a mapping and a lane of the daemon's: PRODUCE is bounded per peer
// uid and in all, as SUBSCRIBE is (docs/brokerd.md, "Configuration").
TEST_F(DaemonLocalProducerTest, ProducersBeyondTheLimitsAreRefusedUntilOneEnds) {
  for (const auto& [limits, setting] :
       {std::pair<std::vector<std::string>, std::string>{{"-X", "sluice.producers.max.per.uid=2"},
                                                         "sluice.producers.max.per.uid"},
        {{"-X", "sluice.producers.max=2"}, "sluice.producers.max"}}) {
    SCOPED_TRACE(setting);
    RestartGrantingTheTopic(limits);
    auto first = ProducerSegment("first.seg");
    auto second = ProducerSegment("second.seg");
    auto third = ProducerSegment("third.seg");
    ASSERT_TRUE(first != nullptr && second != nullptr && third != nullptr);
    auto producer = Connect();
    const uint64_t id = StartProducing(*producer, first->path());
    ASSERT_GE(id, 1u);
    auto other = Connect();  // the limits count every connection of the uid
    ASSERT_GE(StartProducing(*other, second->path()), 1u);

    const std::optional<p::ErrorMessage> error = ErrorIn(Offer(*producer, kTopic, third->path()));
    ASSERT_TRUE(error.has_value()) << Log();
    EXPECT_EQ(error->code, p::ErrorCode::kSubscriptionLimit);
    EXPECT_TRUE(error->message.ends_with("local producers, the limit of " + setting))
        << error->message;
    EXPECT_EQ(third->attached_readers(), 0u) << "refused before the segment is opened";
    // A producer that ends gives its place back: the CLOSE is served before the next PRODUCE.
    producer->Send(3, p::Close{id});
    EXPECT_GE(StartProducing(*producer, third->path()), 1u);
  }
}

// Attaching to a producer's segment connects to its doorbell; one that never accepts must neither
// stop the daemon's one control thread, which serves every other connection, nor leave the
// PRODUCE unanswered (docs/brokerd.md, "Local producers").
TEST_F(DaemonLocalProducerTest, ADoorbellThatNeverAcceptsHoldsUpNoOtherConnection) {
  WriterOptions options;
  options.name = (dir_ / "unaccepting.seg").string();
  options.kind = ObjectKind::kChunks;
  options.slot_count = kProducerSlots;
  options.slot_size = 64 << 10;
  options.lane_count = 1;
  options.doorbell = false;  // the doorbell is the test's socket
  ASSERT_OK_AND_ASSIGN(auto segment, SegmentWriter::Create(options));
  testing::UnacceptingSocket doorbell(segment->path() + ".bell");
  ASSERT_EQ(doorbell.error(), "");
  auto producer = Connect();
  auto other = Connect();

  p::Produce request;
  request.topic = kTopic;
  request.segment_path = segment->path();
  producer->Send(2, request);
  // Another peer's request is answered while the PRODUCE waits for the doorbell.
  other->Send(7, p::Close{12345});
  const std::optional<p::ErrorMessage> answer = ErrorIn(other->Receive());
  ASSERT_TRUE(answer.has_value()) << "the control thread is stuck: " << Log();
  EXPECT_EQ(answer->code, p::ErrorCode::kUnknownSubscription);
  // A sequential daemon answers in the order it read, the PRODUCE first: whatever of it has come
  // would be read here (Receive looks at what it read once more before it gives up).
  EXPECT_FALSE(producer->Receive(200ms).has_value()) << "the PRODUCE is still pending";

  const std::optional<p::Frame> refused = producer->Receive();
  ASSERT_TRUE(refused.has_value()) << Log();
  EXPECT_EQ(refused->request_id, 2u);
  const std::optional<p::ErrorMessage> error = ErrorIn(refused);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, p::ErrorCode::kBadRequest);
  EXPECT_NE(error->message.find(segment->path() + ".bell: the doorbell took no connection within"),
            std::string::npos)
      << error->message;
  EXPECT_EQ(segment->attached_readers(), 0u) << "the refused PRODUCE keeps no lane";
  // The connection goes on: a producer with a doorbell that answers is taken.
  auto answering = ProducerSegment("answering.seg");
  ASSERT_NE(answering, nullptr);
  EXPECT_GE(StartProducing(*producer, answering->path()), 1u);
}

// The daemon, often root, opens a producer's segment only by a name directly in its segment
// folder: a segment of the peer's own elsewhere, or reached through a link, is refused before
// anything is opened (docs/brokerd.md, "Local producers").
TEST_F(DaemonLocalProducerTest, ASegmentOutsideTheSegmentFolderIsRefused) {
  std::filesystem::create_directories(dir_ / "elsewhere");
  auto segment = ProducerSegment("elsewhere/producer.seg");
  ASSERT_NE(segment, nullptr);
  std::filesystem::create_directory_symlink(dir_ / "elsewhere", dir_ / "link");
  auto producer = Connect();
  for (const std::string& path : {segment->path(), (dir_ / "link" / "producer.seg").string()}) {
    SCOPED_TRACE(path);
    const std::optional<p::ErrorMessage> error = ErrorIn(Offer(*producer, kTopic, path));
    ASSERT_TRUE(error.has_value()) << Log();
    EXPECT_EQ(error->code, p::ErrorCode::kBadRequest);
    EXPECT_NE(error->message.find("must be named by the segment folder " + dir_.string()),
              std::string::npos)
        << error->message;
  }
  EXPECT_EQ(segment->attached_readers(), 0u);
}

// A file of another owner is refused as a missing one is, in the same words, so that the peer
// learns nothing of files it could not look at itself; the daemon's log says which it was.
TEST_F(DaemonLocalProducerTest, AFileOfAnotherOwnerIsRefusedAsAMissingOneIs) {
  const std::string path = (dir_ / "theirs.seg").string();
  auto producer = Connect();
  const std::optional<p::ErrorMessage> missing = ErrorIn(Offer(*producer, kTopic, path));
  ASSERT_TRUE(missing.has_value()) << Log();
  EXPECT_EQ(missing->code, p::ErrorCode::kBadRequest);
  EXPECT_NE(missing->message.find("no segment of yours named theirs.seg in the segment folder"),
            std::string::npos)
      << missing->message;

  auto segment = ProducerSegment("theirs.seg");
  ASSERT_NE(segment, nullptr);
  // The tests run as root, which may give the file away (to nobody's uid).
  ASSERT_EQ(::chown(path.c_str(), 65534, static_cast<gid_t>(-1)), 0) << std::strerror(errno);
  const std::optional<p::ErrorMessage> error = ErrorIn(Offer(*producer, kTopic, path));
  ASSERT_TRUE(error.has_value()) << Log();
  EXPECT_EQ(error->code, missing->code);
  EXPECT_EQ(error->message, missing->message);
  EXPECT_EQ(segment->attached_readers(), 0u);
  EXPECT_NE(Log().find("reason=\"owned by uid 65534\""), std::string::npos) << Log();
  // The connection goes on: its own file is taken.
  auto own = ProducerSegment("mine.seg");
  ASSERT_NE(own, nullptr);
  EXPECT_GE(StartProducing(*producer, own->path()), 1u);
}

TEST_F(DaemonLocalProducerTest, ATopicNotGrantedIsRefused) {
  auto segment = ProducerSegment("producer.seg");
  ASSERT_NE(segment, nullptr);
  auto producer = Connect();

  const std::optional<p::ErrorMessage> error =
      ErrorIn(Offer(*producer, "sluice.chunks.elsewhere", segment->path()));
  ASSERT_TRUE(error.has_value()) << Log();
  EXPECT_EQ(error->code, p::ErrorCode::kNotAuthorized);
  EXPECT_NE(error->message.find("sluice.chunks.elsewhere"), std::string::npos) << error->message;
  EXPECT_EQ(segment->attached_readers(), 0u) << "refused before the segment is opened";
}

// A read grant is no write grant: a peer that may read the topic produces to it only when
// sluice.produce.topics grants it (docs/brokerd.md, "Security model").
TEST_F(DaemonLocalProducerTest, ATopicGrantedForReadingOnlyIsRefused) {
  StopTheDaemon();
  StartDaemon({"-X", "sluice.allowed.topics=uid=" + std::to_string(::geteuid()) + ":" + kTopic});
  auto segment = ProducerSegment("producer.seg");
  ASSERT_NE(segment, nullptr);
  auto peer = Connect();
  ASSERT_NE(Subscribe(*peer), nullptr) << "it reads the topic";

  const std::optional<p::ErrorMessage> error = ErrorIn(Offer(*peer, kTopic, segment->path()));
  ASSERT_TRUE(error.has_value()) << Log();
  EXPECT_EQ(error->code, p::ErrorCode::kNotAuthorized);
  EXPECT_EQ(error->message, "topic " + std::string(kTopic) + ": uid " +
                                std::to_string(::geteuid()) + " (gid " +
                                std::to_string(::getegid()) +
                                ") may not produce to it through this daemon "
                                "(sluice.produce.topics)");
  EXPECT_EQ(segment->attached_readers(), 0u) << "refused before the segment is opened";
}

TEST_F(DaemonLocalProducerTest, AMalformedObjectEndsTheProducerWithAnErrorNamingIt) {
  auto subscriber = Connect();
  auto reader = Subscribe(*subscriber);
  ASSERT_NE(reader, nullptr);
  auto segment = ProducerSegment("producer.seg");
  ASSERT_NE(segment, nullptr);
  auto producer = Connect();
  const uint64_t id = StartProducing(*producer, segment->path());
  ASSERT_GE(id, 1u);

  Publish(*segment, {0, 1});
  // Bytes that are no Arrow IPC message, claiming one row.
  ASSERT_OK_AND_ASSIGN(SlotBuffer slot, segment->Acquire(10s));
  std::memset(slot.data, 0x5a, 64);
  EncodedObject garbage;
  garbage.length = 64;
  garbage.record_count = 1;
  ASSERT_OK(segment->Publish(garbage).status());

  const std::optional<p::ErrorMessage> error = ErrorIn(producer->Receive());
  ASSERT_TRUE(error.has_value()) << Log();
  EXPECT_EQ(error->code, p::ErrorCode::kBadRequest);
  EXPECT_EQ(error->subscription_id, id) << "the ERROR names the producer";
  EXPECT_NE(error->message.find(segment->path()), std::string::npos) << error->message;
  // The chunks before it were taken.
  EXPECT_EQ(ChunksThrough(*reader, 1), Expected(1));
}

// A producer may truncate its own segment's file under the daemon's mapping, which ended the
// daemon by SIGBUS at its next look at the segment: now it ends that producer alone, with an
// ERROR, while the daemon goes on serving another producer's reader (docs/brokerd.md, "Local
// producers").
TEST_F(DaemonLocalProducerTest, AProducerThatTruncatesItsSegmentEndsAloneWithAnError) {
  auto subscriber = Connect();
  auto reader = Subscribe(*subscriber);
  ASSERT_NE(reader, nullptr);
  auto truncating = ProducerSegment("truncating.seg");
  ASSERT_NE(truncating, nullptr);
  auto producer = Connect();
  const uint64_t id = StartProducing(*producer, truncating->path());
  ASSERT_GE(id, 1u);
  auto other = ProducerSegment("other.seg");
  ASSERT_NE(other, nullptr);
  auto live = Connect();
  ASSERT_GE(StartProducing(*live, other->path()), 1u);
  Publish(*other, {0, 1});

  // The header page stays, which the test's own writer's heartbeat writes; the lanes and slots,
  // which the daemon reads and writes, go.
  const std::string path = truncating->path();
  const auto size = static_cast<off_t>(std::filesystem::file_size(path));
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0) << std::strerror(errno);
  const std::optional<p::ErrorMessage> error = ErrorIn(producer->Receive());
  // Back to its size before the writer, which looks at its lanes when it closes, is destroyed.
  ASSERT_EQ(::truncate(path.c_str(), size), 0) << std::strerror(errno);
  ASSERT_TRUE(error.has_value()) << "the daemon died: " << Log();
  EXPECT_EQ(error->code, p::ErrorCode::kBadRequest);
  EXPECT_EQ(error->subscription_id, id);
  EXPECT_NE(error->message.find("truncated"), std::string::npos) << error->message;

  Publish(*other, {2});
  EXPECT_EQ(ChunksThrough(*reader, 2), Expected(2));
}

}  // namespace
}  // namespace sluice::brokerd
