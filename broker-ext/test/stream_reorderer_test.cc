#include "ordering/stream_reorderer.h"

#include <gtest/gtest.h>

#include <string>
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
    return reorderer_.Offer(ChunkId{"job", std::string(stream), seq, eos}, bytes, std::move(item),
                            now_,
                            [this](const StreamKey& key, uint64_t s, bool e, std::string&& i) {
                              delivered_.push_back({key.stream, s, e, std::move(i)});
                            });
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
  auto outcome = reorderer_.Offer(ChunkId{"job", "a", 2, false}, 1, std::move(item), now_,
                                  [](const StreamKey&, uint64_t, bool, std::string&&) {});
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

TEST_F(StreamReordererTest, AnEosBeforeAlreadyHeldLaterChunksIsRefused) {
  EXPECT_EQ(Offer("a", 3), OfferOutcome::kBuffered);
  EXPECT_EQ(Offer("a", 2, true), OfferOutcome::kAfterEnd);
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

}  // namespace
}  // namespace sluice::brokerd
