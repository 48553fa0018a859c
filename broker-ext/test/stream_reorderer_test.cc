#include "ordering/stream_reorderer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace sluice::brokerd {
namespace {

using namespace std::chrono_literals;
using Reorderer = StreamReorderer<std::string>;

struct Delivered {
  std::string stream;
  uint64_t seq;
  bool eos;
  std::string item;
  bool operator==(const Delivered&) const = default;
};

class StreamReordererTest : public testing::Test {
 protected:
  OfferOutcome Offer(std::string_view stream, uint64_t seq, bool eos = false, uint64_t bytes = 10) {
    std::string item = std::string(stream) + "/" + std::to_string(seq);
    return reorderer_.Offer(
        ChunkId{"job", std::string(stream), seq, eos}, bytes, std::move(item), now_,
        [this](const StreamKey& key, uint64_t s, bool e, std::string&& i) {
          delivered_.push_back({key.stream, s, e, std::move(i)});
        },
        [this](const StreamKey&, uint64_t s, std::string&& i) {
          rejected_.emplace_back(s, std::move(i));
        });
  }

  std::vector<uint64_t> RejectedSeqs() const {
    std::vector<uint64_t> seqs;
    for (const auto& r : rejected_) seqs.push_back(r.first);
    return seqs;
  }

  std::vector<uint64_t> DeliveredSeqs(std::string_view stream) const {
    std::vector<uint64_t> seqs;
    for (const auto& d : delivered_) {
      if (d.stream == stream) seqs.push_back(d.seq);
    }
    return seqs;
  }

  Reorderer reorderer_{100, 5s};
  Reorderer::Clock::time_point now_ = Reorderer::Clock::time_point{} + 1h;
  std::vector<Delivered> delivered_;
  std::vector<std::pair<uint64_t, std::string>> rejected_;  // held chunks found after the end
};

TEST_F(StreamReordererTest, InOrderChunksAreHandedOnAtOnce) {
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDelivered);
  EXPECT_EQ(Offer("a", 1), OfferOutcome::kDelivered);
  EXPECT_EQ(delivered_, (std::vector<Delivered>{{"a", 0, false, "a/0"}, {"a", 1, false, "a/1"}}));
  EXPECT_EQ(reorderer_.held_bytes(), 0u);
}

TEST_F(StreamReordererTest, EarlyChunksWaitForTheHoleThenFollowInOrder) {
  EXPECT_EQ(Offer("a", 2), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("a", 1), OfferOutcome::kBuffered);
  EXPECT_EQ(reorderer_.held_bytes(), 20u);
  EXPECT_TRUE(delivered_.empty());
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDelivered);
  EXPECT_EQ(DeliveredSeqs("a"), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(reorderer_.held_bytes(), 0u);
}

TEST_F(StreamReordererTest, StreamsAreOrderedIndependently) {
  EXPECT_EQ(Offer("a", 1), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("b", 0), OfferOutcome::kDelivered);
  EXPECT_EQ(Offer("b", 1), OfferOutcome::kDelivered);
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDelivered);
  EXPECT_EQ(DeliveredSeqs("a"), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(DeliveredSeqs("b"), (std::vector<uint64_t>{0, 1}));
}

TEST_F(StreamReordererTest, DuplicatesAreDroppedWhetherDeliveredOrHeld) {
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDelivered);
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDuplicate);
  EXPECT_EQ(Offer("a", 2), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("a", 2), OfferOutcome::kDuplicate);
  EXPECT_EQ(Offer("a", 1), OfferOutcome::kDelivered);
  EXPECT_EQ(DeliveredSeqs("a"), (std::vector<uint64_t>{0, 1, 2}));
}

TEST_F(StreamReordererTest, TheWindowBoundsHeldBytesButNeverBlocksTheNextChunk) {
  EXPECT_EQ(Offer("a", 1, false, 60), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("b", 1, false, 60), OfferOutcome::kWindowFull);
  EXPECT_EQ(reorderer_.held_bytes(), 60u);
  // The chunk each stream waits for always passes: it frees the window instead of filling it.
  EXPECT_EQ(Offer("b", 0, false, 60), OfferOutcome::kDelivered);
  EXPECT_EQ(Offer("a", 0, false, 60), OfferOutcome::kDelivered);
  EXPECT_EQ(reorderer_.held_bytes(), 0u);
  EXPECT_EQ(Offer("b", 1, false, 60), OfferOutcome::kDelivered);
}

TEST_F(StreamReordererTest, ARefusedItemIsLeftWithTheCaller) {
  EXPECT_EQ(Offer("a", 1, false, 100), OfferOutcome::kBuffered);
  std::string item = "kept";
  auto outcome = reorderer_.Offer(
      ChunkId{"job", "a", 2, false}, 1, std::move(item), now_,
      [](const StreamKey&, uint64_t, bool, std::string&&) {},
      [](const StreamKey&, uint64_t, std::string&&) {});
  EXPECT_EQ(outcome, OfferOutcome::kWindowFull);
  EXPECT_EQ(item, "kept");  // NOLINT(bugprone-use-after-move): not moved from on refusal
}

TEST_F(StreamReordererTest, EosEndsTheStreamAndLaterSeqsAreRefused) {
  const StreamKey key{"job", "a"};
  EXPECT_EQ(Offer("a", 1, true), OfferOutcome::kBuffered);
  EXPECT_FALSE(reorderer_.Finished(key));
  EXPECT_EQ(Offer("a", 2), OfferOutcome::kAfterEnd);
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDelivered);
  EXPECT_TRUE(reorderer_.Finished(key));
  EXPECT_EQ(delivered_.back(), (Delivered{"a", 1, true, "a/1"}));
  EXPECT_EQ(Offer("a", 1, true), OfferOutcome::kDuplicate);
}

TEST_F(StreamReordererTest, AnEosBeforeAlreadyHeldLaterChunksEndsTheStreamAndRejectsThem) {
  EXPECT_EQ(Offer("a", 3), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("a", 2, true), OfferOutcome::kBuffered);
  EXPECT_EQ(RejectedSeqs(), (std::vector<uint64_t>{3}));
  EXPECT_EQ(reorderer_.held_bytes(), 10u);
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDelivered);
  EXPECT_EQ(Offer("a", 1), OfferOutcome::kDelivered);
  EXPECT_EQ(DeliveredSeqs("a"), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_TRUE(reorderer_.Finished(StreamKey{"job", "a"}));
}

// The reproduction of a stream that could never end: a chunk far past the end arrived first,
// and the valid `eos` chunk was refused in its place.
TEST_F(StreamReordererTest, AHeldChunkBeyondTheEndIsRejectedNotTheEos) {
  const StreamKey key{"job", "a"};
  EXPECT_EQ(Offer("a", std::numeric_limits<uint64_t>::max()), OfferOutcome::kBuffered);
  for (uint64_t seq = 0; seq < 4; ++seq) EXPECT_EQ(Offer("a", seq), OfferOutcome::kDelivered);
  EXPECT_EQ(Offer("a", 4, true), OfferOutcome::kDelivered);
  EXPECT_EQ(DeliveredSeqs("a"), (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(delivered_.back().eos);
  EXPECT_TRUE(reorderer_.Finished(key));
  EXPECT_EQ(RejectedSeqs(), (std::vector<uint64_t>{std::numeric_limits<uint64_t>::max()}));
  EXPECT_EQ(reorderer_.held_bytes(), 0u);
  EXPECT_EQ(Offer("a", std::numeric_limits<uint64_t>::max()), OfferOutcome::kAfterEnd);
}

TEST_F(StreamReordererTest, AHeldChunkJustPastTheEndIsNotHandedOnWithTheEos) {
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDelivered);
  EXPECT_EQ(Offer("a", 2), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("a", 1, true), OfferOutcome::kDelivered);
  EXPECT_EQ(DeliveredSeqs("a"), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(RejectedSeqs(), (std::vector<uint64_t>{2}));
  EXPECT_TRUE(reorderer_.Finished(StreamKey{"job", "a"}));
}

// Two `eos` chunks at different seqs (docs/brokerd.md, CHUNK_STREAMS): the lower one is the end,
// so the chunk at the lower seq is never refused and the stream neither hangs nor runs past it.
TEST_F(StreamReordererTest, OfTwoEosSeqsTheLowerIsTheEnd) {
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDelivered);
  EXPECT_EQ(Offer("a", 2, true), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("a", 1, true), OfferOutcome::kDelivered);
  EXPECT_EQ(DeliveredSeqs("a"), (std::vector<uint64_t>{0, 1}));
  EXPECT_TRUE(delivered_.back().eos);
  EXPECT_EQ(RejectedSeqs(), (std::vector<uint64_t>{2}));
  EXPECT_TRUE(reorderer_.Finished(StreamKey{"job", "a"}));
  EXPECT_EQ(reorderer_.held_bytes(), 0u);
  EXPECT_EQ(Offer("a", 2, true), OfferOutcome::kAfterEnd);
}

TEST_F(StreamReordererTest, AHigherEosAfterTheEndIsKnownIsAfterTheEnd) {
  EXPECT_EQ(Offer("a", 1, true), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("a", 3, true), OfferOutcome::kAfterEnd);
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDelivered);
  EXPECT_EQ(DeliveredSeqs("a"), (std::vector<uint64_t>{0, 1}));
  EXPECT_TRUE(rejected_.empty());
}

TEST_F(StreamReordererTest, AHoleIsReportedOnlyAfterTheGapTimeout) {
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDelivered);
  EXPECT_EQ(Offer("a", 4), OfferOutcome::kBuffered);
  EXPECT_TRUE(reorderer_.Gaps(now_ + 4s).empty());
  auto gaps = reorderer_.Gaps(now_ + 6s);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].key, (StreamKey{"job", "a"}));
  EXPECT_EQ(gaps[0].missing_from, 1u);
  EXPECT_EQ(gaps[0].missing_to, 3u);
  EXPECT_EQ(gaps[0].waited, 6s);
}

TEST_F(StreamReordererTest, ProgressRestartsTheGapClock) {
  EXPECT_EQ(Offer("a", 1), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("a", 3), OfferOutcome::kBuffered);
  now_ += 4s;
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDelivered);  // 0 and 1 go; 2 is still missing
  EXPECT_TRUE(reorderer_.Gaps(now_ + 4s).empty());
  EXPECT_EQ(reorderer_.Gaps(now_ + 5s).size(), 1u);
}

TEST_F(StreamReordererTest, SkippingAGapHandsOnWhatIsHeld) {
  EXPECT_EQ(Offer("a", 2), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("a", 3, true), OfferOutcome::kBuffered);
  reorderer_.SkipGap(StreamKey{"job", "a"}, now_,
                     [this](const StreamKey& key, uint64_t s, bool e, std::string&& i) {
                       delivered_.push_back({key.stream, s, e, std::move(i)});
                     });
  EXPECT_EQ(DeliveredSeqs("a"), (std::vector<uint64_t>{2, 3}));
  EXPECT_TRUE(reorderer_.Finished(StreamKey{"job", "a"}));
  EXPECT_EQ(Offer("a", 0), OfferOutcome::kDuplicate);  // too late: the hole was reported
}

TEST_F(StreamReordererTest, ForgettingAStreamReleasesItsHeldBytes) {
  EXPECT_EQ(Offer("a", 5), OfferOutcome::kBuffered);
  reorderer_.Forget(StreamKey{"job", "a"});
  EXPECT_EQ(reorderer_.held_bytes(), 0u);
  EXPECT_EQ(reorderer_.stream_count(), 0u);
}

TEST_F(StreamReordererTest, AResumedStreamStartsWhereItsReaderGotTo) {
  reorderer_.Resume(StreamKey{"job", "a"}, 5);
  EXPECT_EQ(Offer("a", 3), OfferOutcome::kDuplicate) << "delivered before the resume";
  EXPECT_EQ(Offer("a", 6), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("a", 5), OfferOutcome::kDelivered);
  EXPECT_EQ(DeliveredSeqs("a"), (std::vector<uint64_t>{5, 6}));
}

// Random streams against the rules of docs/brokerd.md (CHUNK_STREAMS): each stream's chunks
// 0..end arrive in a random order with duplicates, mixed with chunks past the end (some with
// `eos`, some at 2^64-1) arriving anywhere. A stream must hand on exactly 0..end, in order and
// once each, finish exactly when every seq up to its end has arrived, and refuse every chunk
// past the end (as kAfterEnd, or through `reject` once it is found held), never a valid one.
TEST(StreamReordererProperty, DeliversExactlyTheStreamWhateverTheArrivalOrder) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  std::mt19937_64 rng(20240611);  // fixed seed: the same cases on every run
  auto below = [&rng](uint64_t n) { return rng() % n; };
  struct Chunk {
    int stream;
    uint64_t seq;
    bool eos;
  };
  for (int iteration = 0; iteration < 20000; ++iteration) {
    SCOPED_TRACE("iteration " + std::to_string(iteration));
    constexpr int kStreams = 2;
    uint64_t end[kStreams];
    std::vector<Chunk> arrivals;
    for (int stream = 0; stream < kStreams; ++stream) {
      end[stream] = below(30);
      for (uint64_t seq = 0; seq <= end[stream]; ++seq) {
        const int copies = below(4) == 0 ? 2 + static_cast<int>(below(2)) : 1;
        for (int copy = 0; copy < copies; ++copy) {
          arrivals.push_back({stream, seq, seq == end[stream]});
        }
      }
      const int extras = static_cast<int>(below(5));
      for (int extra = 0; extra < extras; ++extra) {
        uint64_t seq;
        switch (below(3)) {
          case 0:
            seq = end[stream] + 1;
            break;
          case 1:
            seq = end[stream] + 1 + below(40);
            break;
          default:
            seq = kMax - below(2);
        }
        const bool eos = below(3) == 0;
        const int copies = 1 + static_cast<int>(below(2));
        for (int copy = 0; copy < copies; ++copy) arrivals.push_back({stream, seq, eos});
      }
    }
    for (size_t i = arrivals.size(); i > 1; --i) std::swap(arrivals[i - 1], arrivals[below(i)]);

    StreamReorderer<Chunk> reorderer(uint64_t{1} << 40, std::chrono::seconds(5));
    const auto now = StreamReorderer<Chunk>::Clock::time_point{} + std::chrono::hours(1);
    std::vector<uint64_t> delivered[kStreams];
    std::vector<bool> arrived[kStreams];
    uint64_t delivered_eos[kStreams] = {};
    size_t rejected = 0;
    size_t duplicates = 0;
    for (int stream = 0; stream < kStreams; ++stream) arrived[stream].resize(end[stream] + 1);
    for (const Chunk& chunk : arrivals) {
      const StreamKey key{"job", std::to_string(chunk.stream)};
      const bool valid = chunk.seq <= end[chunk.stream];
      const OfferOutcome outcome = reorderer.Offer(
          ChunkId{key.job, key.stream, chunk.seq, chunk.eos}, 1, Chunk(chunk), now,
          [&](const StreamKey& k, uint64_t seq, bool eos, Chunk&& item) {
            ASSERT_EQ(item.seq, seq);
            ASSERT_EQ(item.eos, eos);
            const int s = std::stoi(k.stream);
            ASSERT_LE(seq, end[s]) << "a chunk past the end was handed on";
            delivered[s].push_back(seq);
            if (eos) ++delivered_eos[s];
          },
          [&](const StreamKey& k, uint64_t seq, Chunk&& item) {
            ASSERT_EQ(item.seq, seq);
            ASSERT_GT(seq, end[std::stoi(k.stream)]) << "a valid chunk was rejected";
            ++rejected;
          });
      if (valid) {
        ASSERT_NE(outcome, OfferOutcome::kAfterEnd) << "valid seq " << chunk.seq << " refused";
        ASSERT_NE(outcome, OfferOutcome::kWindowFull);
        ASSERT_EQ(outcome == OfferOutcome::kDuplicate, arrived[chunk.stream][chunk.seq]);
        arrived[chunk.stream][chunk.seq] = true;
      } else {
        ASSERT_TRUE(outcome == OfferOutcome::kBuffered || outcome == OfferOutcome::kAfterEnd ||
                    outcome == OfferOutcome::kDuplicate)
            << "seq " << chunk.seq << " past the end " << end[chunk.stream];
        if (outcome == OfferOutcome::kAfterEnd) ++rejected;
      }
      if (outcome == OfferOutcome::kDuplicate) ++duplicates;
      for (int stream = 0; stream < kStreams; ++stream) {
        const bool complete = std::ranges::all_of(arrived[stream], [](bool a) { return a; });
        ASSERT_EQ(reorderer.Finished(StreamKey{"job", std::to_string(stream)}), complete)
            << "stream " << stream << " after seq " << chunk.seq;
      }
    }
    for (int stream = 0; stream < kStreams; ++stream) {
      std::vector<uint64_t> expected(end[stream] + 1);
      for (uint64_t seq = 0; seq <= end[stream]; ++seq) expected[seq] = seq;
      ASSERT_EQ(delivered[stream], expected) << "stream " << stream;
      ASSERT_EQ(delivered_eos[stream], 1u);
    }
    // Every chunk is accounted for: handed on, dropped as a duplicate, or refused; none held.
    ASSERT_EQ(reorderer.held_bytes(), 0u);
    ASSERT_EQ(delivered[0].size() + delivered[1].size() + duplicates + rejected, arrivals.size());
  }
}

}  // namespace
}  // namespace sluice::brokerd
