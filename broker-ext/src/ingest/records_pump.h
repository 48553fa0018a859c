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
#include <string>
#include <vector>

#include "ingest/commit_tracker.h"
#include "sluice/batch_builder.h"
#include "sluice/segment_writer.h"
#include "sluice/status.h"

namespace sluice::brokerd {

struct PumpStats {
  uint64_t consumed_records = 0;  // taken from librdkafka
  uint64_t consumed_bytes = 0;    // their keys and values
  uint64_t records = 0;           // published in objects
  uint64_t bytes = 0;             // their keys and values
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

  // Consumes `partitions` of `topic` from `queue`, which their partition queues of `consumer`
  // are forwarded to; the consumer, the queue and `writer` outlive the pump.
  RecordsPump(rd_kafka_t* consumer, rd_kafka_queue_t* queue, std::string topic,
              std::vector<int32_t> partitions, SegmentWriter& writer, Options options);
  ~RecordsPump();
  RecordsPump(const RecordsPump&) = delete;
  RecordsPump& operator=(const RecordsPump&) = delete;

  // Consumes and publishes for about `duration`. A record larger than a slot stops the pump with
  // kTooLarge naming its topic, partition and offset; it is not lost, since offsets are committed
  // only up to it. A consumer error stops it with kIoError.
  Status RunFor(std::chrono::nanoseconds duration);

  // The offsets whose records are in objects up to `processed_through` (the reader's RELEASE
  // watermark) that the readers have all released, where they moved since the last call; commit
  // them with rd_kafka_commit.
  std::vector<PartitionOffset> TakeCommittable(uint64_t processed_through);

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
  rd_kafka_queue_t* queue_;
  std::string topic_;
  std::vector<int32_t> partitions_;
  SegmentWriter& writer_;
  Options options_;
  RecordsBatchBuilder builder_;
  std::vector<Message> pending_;
  uint64_t pending_bytes_ = 0;
  // Consumed but not yet in an object, because the object being built had no room for them.
  std::deque<rd_kafka_message_t*> waiting_;
  std::chrono::steady_clock::time_point first_pending_at_;
  CommitTracker tracker_;
  PumpStats stats_;
  bool paused_ = false;
};

}  // namespace sluice::brokerd
