// CHUNK_STREAMS mode's source: turns the chunk records of a subscription's partitions into each
// stream's chunks in `seq` order (docs/formats.md, "Chunk topics": many producers, several
// partitions, any order).
//
// Every consumed record is taken in the commit tracker on arrival, since it may wait in the
// reorder window for a while; duplicates, records of other jobs and dead letters settle at once
// (dead letters once the broker has them), delivered chunks when their object is released.
// An early chunk that does not fit the window blocks its partition: the partition is paused and
// the chunk and those behind it wait, in order, until the window has room.
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
  struct Options {
    uint64_t window_bytes = 64ull << 20;
    std::chrono::milliseconds gap_timeout{30000};
    std::string job_filter;  // empty: every job
    // Streams a resuming reader has read up to a seq: they start there, not at 0.
    std::vector<std::pair<StreamKey, uint64_t>> resume;
    // Told of each gap as it is reported (once per hole), on the thread that polls.
    std::function<void(const StreamGap&)> on_gap;
  };

  // `dead_letters` may be null: malformed records are then counted, logged and skipped.
  ChunkSequencer(MessageSource& upstream, CommitTracker& tracker, PartitionPauses& pauses,
                 DeadLetters* dead_letters, SequencerCounters counters, Options options);

  Status Poll(std::chrono::milliseconds timeout, std::vector<ReadyMessage>& out) override;
  const SourceStats& stats() const override { return upstream_.stats(); }
  bool takes_offsets() const override { return true; }

  // Settles the records whose dead letters the broker acknowledged.
  void SettleDeadLetters();

  uint64_t held_bytes() const { return reorderer_.held_bytes(); }

 private:
  using Clock = std::chrono::steady_clock;
  // Offers a message; false when the window had no room and it must wait.
  Result<bool> Admit(ReadyMessage& message, std::vector<ReadyMessage>& out);
  Status Reject(const ConsumedRecord& record, const std::string& why);
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
  std::set<std::pair<StreamKey, uint64_t>> reported_gaps_;
};

}  // namespace sluice::brokerd
