// CHUNK_STREAMS mode's source: turns the chunk records of a subscription's partitions into each
// stream's chunks in `seq` order (docs/formats.md, "Chunk topics": many producers, several
// partitions, any order).
//
// Every consumed record is taken in the commit tracker on arrival, since it may wait in the
// reorder window for a while; duplicates, records of other jobs and dead letters settle at once
// (dead letters once the broker has them), delivered chunks when their object is released.
// An early chunk that does not fit the window blocks its partition: the partition is paused and
// the chunk and those behind it wait, in order, until the window has room.
//
// Chunks of local producers (docs/brokerd.md, "Local producers") come through the subscription's
// inbox and merge into the same order. They have no offset, so they touch neither the commit
// tracker nor the partition pauses: an early one that does not fit the window waits in a queue
// of its producer instead, holding its slot in the producer's segment, which is the producer's
// backpressure. An early one that fits is copied to the heap, so that its slot goes back at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "daemon/metrics.h"
#include "ingest/commit_tracker.h"
#include "ingest/dead_letters.h"
#include "ingest/local_chunk_router.h"
#include "ingest/message_source.h"
#include "ingest/partition_pauses.h"
#include "ordering/stream_reorderer.h"

namespace sluice::brokerd {

struct SequencerCounters {
  Counter& malformed;
  Counter& duplicates;
  Counter& dead_letters;
  Counter& gaps;
};

class ChunkSequencer final : public MessageSource {
 public:
  // What the reorder window counts for a held chunk besides its payload: what holding it costs
  // the heap whatever its size (the message with its headers, its id, its node in the window).
  // Counted by payload alone, early empty chunks were held without bound: 2 M of them through
  // Kafka grew the daemon from 27 MB to 2.4 GB, about 1.2 KB each, with nothing counted and no
  // partition paused (docs/brokerd.md, CHUNK_STREAMS).
  static constexpr uint64_t kHeldChunkCostBytes = 2048;

  struct Options {
    uint64_t window_bytes = 64ull << 20;
    std::chrono::milliseconds gap_timeout{30000};
    std::string job_filter;  // empty: every job
    // Streams a resuming reader has read up to a seq: they start there, not at 0.
    std::vector<std::pair<StreamKey, uint64_t>> resume;
    // Told of each gap as it is reported (once per hole), on the thread that polls.
    std::function<void(const StreamGap&)> on_gap;
    // The chunks local producers route to this subscription; null: fetched records only. Its
    // `wake` must end a wait in `upstream`'s Poll, so that a local chunk does not wait out the
    // poll timeout.
    std::shared_ptr<LocalChunkInbox> local_chunks;
  };

  // `dead_letters` may be null: malformed records are then counted, logged and skipped.
  ChunkSequencer(MessageSource& upstream, CommitTracker& tracker, PartitionPauses& pauses,
                 DeadLetters* dead_letters, SequencerCounters counters, Options options);

  Status Poll(std::chrono::milliseconds timeout, std::vector<ReadyMessage>& out) override;
  const SourceStats& stats() const override { return upstream_.stats(); }
  bool takes_offsets() const override { return true; }

  // Settles the records whose dead letters the broker acknowledged.
  Status SettleDeadLetters();

  // The window's count: held chunks' payload bytes, plus kHeldChunkCostBytes each.
  uint64_t held_bytes() const { return reorderer_.held_bytes(); }

 private:
  using Clock = std::chrono::steady_clock;
  // Admits what the local producers routed here since the last call; false when there was
  // nothing.
  Result<bool> TakeLocal(std::vector<ReadyMessage>& out);
  // Offers a message; false when the window had no room and it must wait.
  Result<bool> Admit(ReadyMessage& message, std::vector<ReadyMessage>& out);
  Status Reject(const ReadyMessage& message, const std::string& why);
  // Settles a fetched record the sequencer is done with; a local chunk has nothing to settle.
  Status Settle(const ReadyMessage& message);
  // Admits waiting messages in order until one finds no room; true when none is left.
  Result<bool> AdmitWaiting(std::deque<ReadyMessage>& waiting, std::vector<ReadyMessage>& out);
  Status RetryBlocked(std::vector<ReadyMessage>& out);
  void ReportGaps();

  MessageSource& upstream_;
  CommitTracker& tracker_;
  PartitionPauses& pauses_;
  DeadLetters* dead_letters_;
  SequencerCounters counters_;
  Options options_;
  StreamReorderer<ReadyMessage> reorderer_;
  std::map<int32_t, std::deque<ReadyMessage>> blocked_;
  // Local chunks waiting for room in the window, by producer id, in the order they came.
  std::map<uint64_t, std::deque<ReadyMessage>> blocked_local_;
  std::set<std::pair<StreamKey, uint64_t>> reported_gaps_;
};

}  // namespace sluice::brokerd
