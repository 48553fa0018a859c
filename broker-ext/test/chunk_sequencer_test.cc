// ChunkSequencer merging the chunks of local producers with fetched chunk records
// (docs/brokerd.md, "Local producers"): one order per stream whichever way a chunk came, local
// duplicates dropped, early local chunks off their producer's slot at once, a full window
// holding a local chunk back in its producer's queue, and a local chunk ending a wait on
// librdkafka's queue.
#include "ordering/chunk_sequencer.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest_util.h"

namespace sluice::brokerd {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kTopic = "sluice.chunks.here";

// Chunk records as a fetch would hand them over, without Kafka: what each Poll returns.
class FetchedChunks final : public MessageSource {
 public:
  void Add(int64_t offset, const std::string& stream, uint64_t seq, const std::string& payload) {
    auto record = std::make_shared<Stored>(Stored{std::to_string(seq), stream, payload});
    ReadyMessage message;
    message.record.topic = kTopic;
    message.record.partition = 0;
    message.record.offset = offset;
    message.record.value = record->payload;
    message.record.headers = {
        {kJobHeader, "job"}, {kStreamHeader, record->stream}, {kSeqHeader, record->seq}};
    message.owner = record;
    waiting_.push_back(std::move(message));
  }

  Status Poll(std::chrono::milliseconds, std::vector<ReadyMessage>& out) override {
    for (ReadyMessage& message : waiting_) out.push_back(std::move(message));
    waiting_.clear();
    return Status::OK();
  }
  const SourceStats& stats() const override { return stats_; }
  bool takes_offsets() const override { return false; }

 private:
  struct Stored {
    std::string seq;
    std::string stream;
    std::string payload;
  };
  std::vector<ReadyMessage> waiting_;
  SourceStats stats_;
};

// A chunk in a local producer's slot; `slot` stands for the slot, held while a message views it.
ReadyMessage LocalChunk(uint64_t producer, const std::string& stream, uint64_t seq,
                        const std::shared_ptr<const std::string>& slot) {
  ReadyMessage message;
  message.record.topic = kTopic;
  message.record.partition = -1;
  message.record.offset = -1;
  message.record.value = std::string_view(*slot);
  message.owner = slot;
  message.chunk = std::make_unique<const ChunkId>(ChunkId{"job", stream, seq, false});
  message.local_producer = producer;
  return message;
}

std::shared_ptr<const std::string> Slot(const std::string& bytes) {
  return std::make_shared<const std::string>(bytes);
}

struct Seen {
  uint64_t seq;
  std::string payload;
  uint64_t producer;
  bool operator==(const Seen&) const = default;
};

class ChunkSequencerTest : public ::testing::Test {
 protected:
  void Start(MessageSource& upstream, uint64_t window_bytes = 1 << 20) {
    inbox_ = std::make_shared<LocalChunkInbox>("", nullptr);
    ChunkSequencer::Options options;
    options.window_bytes = window_bytes;
    options.local_chunks = inbox_;
    sequencer_ = std::make_unique<ChunkSequencer>(
        upstream, tracker_, pauses_, nullptr,
        SequencerCounters{malformed_, duplicates_, dead_letters_, gaps_}, options);
  }

  // One poll; what it handed on, by seq, payload and producer.
  std::vector<Seen> Poll() {
    std::vector<ReadyMessage> out;
    EXPECT_OK(sequencer_->Poll(0ms, out));
    std::vector<Seen> seen;
    for (const ReadyMessage& message : out) {
      seen.push_back({message.chunk->seq, std::string(message.record.value.value_or("")),
                      message.local_producer});
      // Delivered fetched records settle when their object is released, as the pump does it.
      if (message.local_producer == 0) {
        EXPECT_EQ(message.record.partition, 0);
        EXPECT_OK(tracker_.Settle({0, message.record.offset, message.record.offset}));
      }
    }
    return seen;
  }

  CommitTracker tracker_;
  PartitionPauses pauses_{nullptr, std::string(kTopic), {0}};
  Counter malformed_;
  Counter duplicates_;
  Counter dead_letters_;
  Counter gaps_;
  std::shared_ptr<LocalChunkInbox> inbox_;
  std::unique_ptr<ChunkSequencer> sequencer_;
};

TEST_F(ChunkSequencerTest, LocalAndFetchedChunksOfOneStreamMergeInSeqOrder) {
  FetchedChunks fetched;
  Start(fetched);
  fetched.Add(0, "s", 1, "f1");
  fetched.Add(1, "s", 4, "f4");
  fetched.Add(2, "s", 3, "f3");
  inbox_->Push(LocalChunk(7, "s", 2, Slot("l2")));
  inbox_->Push(LocalChunk(7, "s", 0, Slot("l0")));
  std::vector<Seen> seen = Poll();
  inbox_->Push(LocalChunk(8, "s", 5, Slot("l5")));
  for (const Seen& more : Poll()) seen.push_back(more);

  EXPECT_EQ(
      seen,
      (std::vector<Seen>{
          {0, "l0", 7}, {1, "f1", 0}, {2, "l2", 7}, {3, "f3", 0}, {4, "f4", 0}, {5, "l5", 8}}));
  EXPECT_EQ(sequencer_->held_bytes(), 0u);
  // The fetched records, and nothing else, went through the commit tracker.
  EXPECT_EQ(tracker_.TakeCommittable(), (std::vector<PartitionOffset>{{0, 3}}));
}

TEST_F(ChunkSequencerTest, LocalDuplicatesAreDroppedAndCounted) {
  FetchedChunks fetched;
  Start(fetched);
  auto first = Slot("l0");
  auto again = Slot("l0 again");
  inbox_->Push(LocalChunk(7, "s", 0, first));
  EXPECT_EQ(Poll(), (std::vector<Seen>{{0, "l0", 7}}));
  // The same chunk from a producer that computed it again, and through Kafka.
  inbox_->Push(LocalChunk(8, "s", 0, again));
  fetched.Add(0, "s", 0, "f0");
  EXPECT_EQ(Poll(), std::vector<Seen>{});

  EXPECT_EQ(duplicates_.value(), 2u);
  EXPECT_EQ(again.use_count(), 1) << "a dropped duplicate gives its producer's slot back";
  // The fetched duplicate settled at once.
  EXPECT_EQ(tracker_.TakeCommittable(), (std::vector<PartitionOffset>{{0, 1}}));
}

TEST_F(ChunkSequencerTest, AnEarlyLocalChunkGivesItsProducersSlotBackAtOnce) {
  FetchedChunks fetched;
  Start(fetched);
  auto one = Slot("l1");
  auto two = Slot("l2");
  inbox_->Push(LocalChunk(7, "s", 1, one));
  inbox_->Push(LocalChunk(7, "s", 2, two));
  EXPECT_EQ(Poll(), std::vector<Seen>{});
  EXPECT_EQ(sequencer_->held_bytes(), 4u + 2 * ChunkSequencer::kHeldChunkCostBytes);
  EXPECT_EQ(one.use_count(), 1) << "the early chunk still holds its producer's slot";
  EXPECT_EQ(two.use_count(), 1) << "the early chunk still holds its producer's slot";

  fetched.Add(0, "s", 0, "f0");
  EXPECT_EQ(Poll(), (std::vector<Seen>{{0, "f0", 0}, {1, "l1", 7}, {2, "l2", 7}}));
}

TEST_F(ChunkSequencerTest, WithTheWindowFullALocalChunkWaitsInItsProducersQueue) {
  FetchedChunks fetched;
  Start(fetched, /*window_bytes=*/ChunkSequencer::kHeldChunkCostBytes + 10);
  auto two = Slot("eight b2");
  auto three = Slot("eight b3");
  inbox_->Push(LocalChunk(7, "s", 1, Slot("eight b1")));
  inbox_->Push(LocalChunk(7, "s", 2, two));
  inbox_->Push(LocalChunk(7, "s", 3, three));
  // Another producer's chunk of another stream is not held up behind them.
  inbox_->Push(LocalChunk(8, "t", 0, Slot("t0")));
  EXPECT_EQ(Poll(), (std::vector<Seen>{{0, "t0", 8}}));
  EXPECT_EQ(sequencer_->held_bytes(), 8u + ChunkSequencer::kHeldChunkCostBytes);
  EXPECT_GT(two.use_count(), 1) << "a chunk waiting for room holds its slot: backpressure";
  EXPECT_GT(three.use_count(), 1) << "and so does the next that does not fit";
  EXPECT_EQ(pauses_.paused_count(), 0u) << "a local chunk pauses no partition";

  inbox_->Push(LocalChunk(7, "s", 0, Slot("l0")));
  EXPECT_EQ(Poll(), (std::vector<Seen>{{0, "l0", 7}, {1, "eight b1", 7}}));
  EXPECT_EQ(Poll(), (std::vector<Seen>{{2, "eight b2", 7}, {3, "eight b3", 7}}));
  EXPECT_EQ(sequencer_->held_bytes(), 0u);
}

// A fetched chunk whose stream is no name is malformed as a bad header is: counted, skipped and,
// without a dead-letter topic, settled so that its offset is committed (docs/formats.md, "Chunk
// record").
TEST_F(ChunkSequencerTest, AFetchedChunkWhoseStreamIsNoNameIsCountedAndSkipped) {
  FetchedChunks fetched;
  Start(fetched);
  fetched.Add(0, "s", 0, "good");
  fetched.Add(1, "../../etc", 0, "escaping");
  fetched.Add(2, std::string("a\0b", 3), 0, "nul");
  fetched.Add(3, "", 0, "empty");
  fetched.Add(4, "s", 1, "after");
  EXPECT_EQ(Poll(), (std::vector<Seen>{{0, "good", 0}, {1, "after", 0}}));
  EXPECT_EQ(malformed_.value(), 3u);
  EXPECT_EQ(tracker_.TakeCommittable(), (std::vector<PartitionOffset>{{0, 5}}));
}

// Each held chunk counts its cost beyond its payload, so early empty chunks fill the window too:
// the partition pauses at the bound instead of the heap growing without one (docs/brokerd.md,
// CHUNK_STREAMS).
TEST_F(ChunkSequencerTest, EarlyEmptyChunksFillTheWindowAndPauseTheirPartition) {
  FetchedChunks fetched;
  constexpr uint64_t kFits = 32;
  Start(fetched, /*window_bytes=*/kFits * ChunkSequencer::kHeldChunkCostBytes);
  for (uint64_t seq = 1; seq <= 2 * kFits; ++seq) {
    fetched.Add(static_cast<int64_t>(seq), "s", seq, "");
  }
  EXPECT_EQ(Poll(), std::vector<Seen>{});
  EXPECT_EQ(sequencer_->held_bytes(), kFits * ChunkSequencer::kHeldChunkCostBytes);
  EXPECT_TRUE(pauses_.blocked(0)) << "the chunk beyond the bound pauses its partition";
  EXPECT_EQ(pauses_.paused_count(), 1u);

  // The chunk they wait for comes the local way: behind the blocked ones in their partition it
  // would wait too (docs/brokerd.md, "How it works").
  inbox_->Push(LocalChunk(7, "s", 0, Slot("")));
  std::vector<Seen> seen = Poll();
  for (const Seen& more : Poll()) seen.push_back(more);
  ASSERT_EQ(seen.size(), 2 * kFits + 1);
  for (uint64_t seq = 0; seq < seen.size(); ++seq) EXPECT_EQ(seen[seq].seq, seq);
  EXPECT_EQ(sequencer_->held_bytes(), 0u);
  EXPECT_FALSE(pauses_.blocked(0)) << "the partition resumes once its chunks found room";
}

// The inbox's wake as the subscription sets it: rd_kafka_queue_yield on the queue the sequencer's
// upstream waits on.
TEST(ChunkSequencerWakeTest, ALocalChunkEndsAWaitOnLibrdkafkasQueue) {
  std::array<char, 512> error{};
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  ASSERT_EQ(rd_kafka_conf_set(conf, "group.id", "wake-test", error.data(), error.size()),
            RD_KAFKA_CONF_OK);
  std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)> consumer(
      rd_kafka_new(RD_KAFKA_CONSUMER, conf, error.data(), error.size()), &rd_kafka_destroy);
  ASSERT_NE(consumer, nullptr) << error.data();
  rd_kafka_queue_t* queue = rd_kafka_queue_new(consumer.get());
  QueueSource upstream(queue);
  CommitTracker tracker;
  PartitionPauses pauses(nullptr, std::string(kTopic), {});
  Counter malformed, duplicates, dead_letters, gaps;
  auto inbox = std::make_shared<LocalChunkInbox>("", [queue] { rd_kafka_queue_yield(queue); });
  ChunkSequencer::Options options;
  options.local_chunks = inbox;
  ChunkSequencer sequencer(upstream, tracker, pauses, nullptr,
                           SequencerCounters{malformed, duplicates, dead_letters, gaps}, options);

  // Pushed while the poll below waits on the queue, with nothing fetched to end the wait.
  std::thread producer([&inbox] {
    std::this_thread::sleep_for(200ms);
    inbox->Push(LocalChunk(7, "s", 0, Slot("l0")));
  });
  // A poll that only the push can end within ctest's timeout: a local chunk that waited out the
  // poll fails as that timeout, never as a pass.
  std::vector<ReadyMessage> out;
  ASSERT_OK(sequencer.Poll(std::chrono::hours(1), out));
  producer.join();

  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].chunk->seq, 0u);
  out.clear();
  rd_kafka_queue_destroy(queue);
}

}  // namespace
}  // namespace sluice::brokerd
