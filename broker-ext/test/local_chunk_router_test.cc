// LocalChunkRouter: a local chunk goes to every inbox of its topic whose job filter takes it, a
// copy each sharing one owner, in push order, and is dropped when no inbox takes it.
#include "ingest/local_chunk_router.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace sluice::brokerd {
namespace {

// A local chunk whose owner counts how many messages still view it.
ReadyMessage LocalChunk(const std::string& job, uint64_t seq,
                        const std::shared_ptr<const std::string>& payload) {
  ReadyMessage message;
  message.record.topic = "sluice.chunks.here";
  message.record.partition = -1;
  message.record.offset = -1;
  message.record.value = std::string_view(*payload);
  message.owner = payload;
  message.chunk = std::make_unique<const ChunkId>(ChunkId{job, "s", seq, false});
  message.local_producer = 7;
  return message;
}

std::vector<uint64_t> Seqs(const std::vector<ReadyMessage>& messages) {
  std::vector<uint64_t> seqs;
  for (const auto& message : messages) seqs.push_back(message.chunk->seq);
  return seqs;
}

TEST(LocalChunkRouter, GivesEachChunkToEveryInboxWhoseFilterTakesItInOrder) {
  LocalChunkRouter router;
  std::atomic<int> wakes{0};
  auto every_job = std::make_shared<LocalChunkInbox>("", [&] { ++wakes; });
  auto job_a = std::make_shared<LocalChunkInbox>("a", [&] { ++wakes; });
  auto other_topic = std::make_shared<LocalChunkInbox>("", [&] { ++wakes; });
  router.Add("sluice.chunks.here", every_job);
  router.Add("sluice.chunks.here", job_a);
  router.Add("sluice.chunks.there", other_topic);
  auto payload = std::make_shared<const std::string>("bytes");

  EXPECT_EQ(router.Route("sluice.chunks.here", LocalChunk("a", 1, payload)), 2u);
  EXPECT_EQ(router.Route("sluice.chunks.here", LocalChunk("b", 2, payload)), 1u);
  EXPECT_EQ(router.Route("sluice.chunks.here", LocalChunk("a", 3, payload)), 2u);
  EXPECT_EQ(wakes.load(), 5) << "one wake per push";

  std::vector<ReadyMessage> all, only_a, none;
  every_job->Drain(all);
  job_a->Drain(only_a);
  other_topic->Drain(none);
  EXPECT_EQ(Seqs(all), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(Seqs(only_a), (std::vector<uint64_t>{1, 3}));
  EXPECT_TRUE(none.empty());
  // The copies view the same bytes and carry their own chunk ids.
  EXPECT_EQ(all[0].record.value->data(), only_a[0].record.value->data());
  EXPECT_NE(all[0].chunk.get(), only_a[0].chunk.get());
  EXPECT_EQ(*all[0].chunk, *only_a[0].chunk);
  EXPECT_EQ(only_a[0].local_producer, 7u);
  EXPECT_EQ(only_a[0].record.offset, -1);

  // Drained, an inbox starts empty again.
  std::vector<ReadyMessage> again;
  every_job->Drain(again);
  EXPECT_TRUE(again.empty());
}

TEST(LocalChunkRouter, TheOwnerLivesUntilTheLastCopyIsGone) {
  LocalChunkRouter router;
  auto first = std::make_shared<LocalChunkInbox>("", nullptr);
  auto second = std::make_shared<LocalChunkInbox>("", nullptr);
  router.Add("t", first);
  router.Add("t", second);
  auto payload = std::make_shared<const std::string>("bytes");
  std::weak_ptr<const std::string> watch = payload;
  ASSERT_EQ(router.Route("t", LocalChunk("a", 1, payload)), 2u);
  payload.reset();

  std::vector<ReadyMessage> from_first, from_second;
  first->Drain(from_first);
  second->Drain(from_second);
  from_first.clear();
  EXPECT_FALSE(watch.expired()) << "the second subscription still views the chunk";
  from_second.clear();
  EXPECT_TRUE(watch.expired());
}

TEST(LocalChunkRouter, DropsAChunkNoInboxTakesAndForgetsRemovedInboxes) {
  LocalChunkRouter router;
  auto job_a = std::make_shared<LocalChunkInbox>("a", nullptr);
  router.Add("t", job_a);
  auto payload = std::make_shared<const std::string>("bytes");
  std::weak_ptr<const std::string> watch = payload;
  EXPECT_EQ(router.Route("t", LocalChunk("b", 1, payload)), 0u);
  EXPECT_EQ(router.Route("unknown", LocalChunk("a", 1, payload)), 0u);
  router.Remove("t", job_a.get());
  EXPECT_EQ(router.Route("t", LocalChunk("a", 2, payload)), 0u);
  payload.reset();
  EXPECT_TRUE(watch.expired()) << "an unrouted chunk lets its bytes go";
  std::vector<ReadyMessage> drained;
  job_a->Drain(drained);
  EXPECT_TRUE(drained.empty());
}

}  // namespace
}  // namespace sluice::brokerd
