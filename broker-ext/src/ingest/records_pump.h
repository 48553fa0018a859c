// Moves records from a librdkafka consumer into RECORDS objects of one segment (issue 4, the
// daemon's inner loop for one subscription).
//
// Records are batched into an object until the next one would not fit the slot or the linger
// time has passed; each key, value and header is copied once, from librdkafka's fetch buffer
// into shared memory. When the readers hold every slot the consumer's partitions are paused,
// so the broker is not read faster than the readers release, and resumed on the next free slot.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "ingest/commit_tracker.h"
#include "sluice/batch_builder.h"
#include "sluice/segment_writer.h"
#include "sluice/status.h"

namespace sluice::brokerd {

struct PumpStats {
  uint64_t records = 0;
  uint64_t bytes = 0;  // keys and values
  uint64_t objects = 0;
  uint64_t pauses = 0;
};

class RecordsPump {
 public:
  struct Options {
    // How long a partly filled object waits for more records before it is published.
    std::chrono::milliseconds linger{2};
    // The longest a single poll of the consumer blocks.
    std::chrono::milliseconds poll_timeout{50};
  };

  // `consumer` must have its partitions assigned; it and `writer` outlive the pump.
  RecordsPump(rd_kafka_t* consumer, SegmentWriter& writer, Options options);
  ~RecordsPump();
  RecordsPump(const RecordsPump&) = delete;
  RecordsPump& operator=(const RecordsPump&) = delete;

  // Consumes and publishes for about `duration`. A record larger than a slot stops the pump with
  // kTooLarge naming its topic, partition and offset; it is not lost, since offsets are committed
  // only up to it. A consumer error stops it with kIoError.
  Status RunFor(std::chrono::nanoseconds duration);

  // The offsets whose records the readers have all released and that moved since the last call;
  // commit them with rd_kafka_commit.
  std::vector<PartitionOffset> TakeCommittable();

  bool paused() const { return paused_; }
  const PumpStats& stats() const { return stats_; }

 private:
  struct Message {
    rd_kafka_message_t* message;
    std::vector<RecordHeader> headers;
  };
  // Moves waiting messages into the object being built until one does not fit.
  Status AddWaiting();
  // Adds `message` to the object being built; false when it does not fit, and the object must be
  // published first.
  Result<bool> TryAdd(rd_kafka_message_t* message);
  // Publishes the pending records, waiting until `deadline` for a free slot. Returns OK with the
  // records still pending when no slot came free in time.
  Status Flush(std::chrono::steady_clock::time_point deadline);
  Status SetPaused(bool paused);
  void DropPending();

  rd_kafka_t* consumer_;
  SegmentWriter& writer_;
  Options options_;
  RecordsBatchBuilder builder_;
  std::vector<Message> pending_;
  // Consumed but not yet in an object, because the object being built had no room for them.
  std::deque<rd_kafka_message_t*> waiting_;
  std::chrono::steady_clock::time_point first_pending_at_;
  CommitTracker tracker_;
  PumpStats stats_;
  bool paused_ = false;
};

}  // namespace sluice::brokerd
