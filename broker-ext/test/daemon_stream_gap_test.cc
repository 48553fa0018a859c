// STREAM_GAP (docs/formats.md): a CHUNK_STREAMS stream that waits for a missing seq past
// sluice.gap.timeout.ms is reported to a version-3 reader, once per hole, and goes on waiting:
// the chunk that fills the hole is delivered with those held behind it. A version-2 reader is
// not sent it.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include "daemon_connection.h"
#include "sluice/schemas.h"
#include "sluice/segment_reader.h"

namespace sluice::brokerd {
namespace {

namespace p = protocol;
using namespace std::chrono_literals;

constexpr auto kGapTimeout = 300ms;

class DaemonStreamGapTest : public DaemonConnectionTest {
 protected:
  void SetUp() override {
    DaemonConnectionTest::SetUp();
    CreateTopic("chunks", 1);
    StartDaemon({"-X", "sluice.gap.timeout.ms=" + std::to_string(kGapTimeout.count())});
  }

  void ProduceChunk(uint64_t seq, bool eos = false) {
    std::vector<std::pair<std::string, std::string>> headers = {
        {"sluice.job", "job-1"}, {"sluice.stream", "cyan"}, {"sluice.seq", std::to_string(seq)}};
    if (eos) headers.emplace_back("sluice.eos", "true");
    Produce("chunks", 0, "chunk-" + std::to_string(seq), headers);
  }

  // Subscribes in `version`; the SUBSCRIBED answer.
  p::Subscribed Subscribe(DaemonConnection& connection, uint16_t version) {
    p::Subscribe request;
    request.slot_count = 8;
    request.slot_size = 64 * 1024;
    request.mode = p::Mode::kChunkStreams;
    request.topic = "chunks";
    request.partitions = {{0, p::StartPosition::kEarliest, 0}};
    connection.Send(1, request, version);
    std::optional<p::Frame> answer = connection.Receive();
    EXPECT_TRUE(answer.has_value()) << Log();
    if (!answer.has_value()) return {};
    auto* subscribed = std::get_if<p::Subscribed>(&answer->message);
    EXPECT_NE(subscribed, nullptr) << p::NameOf(p::TypeOf(answer->message));
    return subscribed != nullptr ? *subscribed : p::Subscribed{};
  }

  // The seqs of the chunks the segment delivers until the one with `last`, in order.
  std::vector<uint64_t> SeqsThrough(SegmentReader& reader, uint64_t last) {
    std::vector<uint64_t> seqs;
    while (seqs.empty() || seqs.back() != last) {
      auto object = reader.Next(10s);
      EXPECT_OK(object) << Log();
      if (!object.ok()) return seqs;
      auto batch = DecodeObject(*object, ChunksSchema());
      EXPECT_OK(batch);
      if (!batch.ok()) return seqs;
      auto seq = std::static_pointer_cast<arrow::UInt64Array>((*batch)->GetColumnByName("seq"));
      for (int64_t row = 0; row < (*batch)->num_rows(); ++row) seqs.push_back(seq->Value(row));
      EXPECT_OK(reader.Release(*object));
    }
    return seqs;
  }
};

TEST_F(DaemonStreamGapTest, AVersionThreeReaderIsToldOfTheHoleAndTheStreamWaitsForIt) {
  auto connection = Connect();
  const p::Subscribed subscribed = Subscribe(*connection, 3);
  auto reader = SegmentReader::Open((dir_ / subscribed.segment_name).string());
  ASSERT_OK(reader);
  ProduceChunk(0);
  ProduceChunk(1);
  ProduceChunk(3);
  EXPECT_EQ(SeqsThrough(**reader, 1), (std::vector<uint64_t>{0, 1}));

  std::optional<p::Frame> frame = connection->Receive();
  ASSERT_TRUE(frame.has_value()) << Log();
  EXPECT_EQ(frame->version, 3);
  EXPECT_EQ(frame->request_id, 0u);
  auto* gap = std::get_if<p::StreamGap>(&frame->message);
  ASSERT_NE(gap, nullptr) << p::NameOf(p::TypeOf(frame->message));
  EXPECT_EQ(gap->subscription_id, subscribed.subscription_id);
  EXPECT_EQ(gap->job, "job-1");
  EXPECT_EQ(gap->stream, "cyan");
  EXPECT_EQ(gap->missing_from, 2u);
  EXPECT_EQ(gap->missing_to, 2u);
  EXPECT_GE(gap->waited_ns, static_cast<uint64_t>(std::chrono::nanoseconds(kGapTimeout).count()));

  // The hole is filled: the stream goes on from it, and the hole is not reported again.
  ProduceChunk(2);
  ProduceChunk(4, true);
  EXPECT_EQ(SeqsThrough(**reader, 4), (std::vector<uint64_t>{2, 3, 4}));
  EXPECT_FALSE(connection->Receive(3 * kGapTimeout).has_value()) << "one STREAM_GAP per hole";
}

TEST_F(DaemonStreamGapTest, AVersionTwoReaderIsNotSentStreamGap) {
  auto connection = Connect();
  const p::Subscribed subscribed = Subscribe(*connection, 2);
  auto reader = SegmentReader::Open((dir_ / subscribed.segment_name).string());
  ASSERT_OK(reader);
  ProduceChunk(0);
  ProduceChunk(2);
  EXPECT_EQ(SeqsThrough(**reader, 0), (std::vector<uint64_t>{0}));
  // The daemon logs the gap; the reader's connection carries heartbeats only.
  ASSERT_TRUE(testing::Eventually(
      "the daemon to log the gap",
      [&] {
        if (Log().find("event=stream_gap") != std::string::npos) return true;
        EXPECT_FALSE(connection->Receive(100ms).has_value());
        return false;
      },
      10s, 0ms))  // each Receive waits 100 ms itself
      << Log();
  EXPECT_FALSE(connection->Receive(3 * kGapTimeout).has_value());
}

}  // namespace
}  // namespace sluice::brokerd
