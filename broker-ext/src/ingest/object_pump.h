// Moves a subscription's messages into objects of its segment (the daemon's inner loop for one
// subscription, docs/brokerd.md "How it works"): RECORDS objects of Kafka records, or CHUNKS
// objects of ordered chunks.
//
// Messages are batched into an object until the next one would not fit the slot or the linger
// time has passed; each key, value, header or payload is copied once, from the fetch buffer
// (librdkafka's, or the native fetch path's) into shared memory. When the readers hold every slot
// the partitions are paused, so the broker is not read faster than the readers release, and resumed
// on the next free slot.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingest/commit_tracker.h"
#include "ingest/kafka_message.h"
#include "ingest/message_source.h"
#include "ingest/partition_pauses.h"
#include "sluice/batch_builder.h"
#include "sluice/segment_writer.h"
#include "sluice/status.h"

namespace sluice::brokerd {

struct PumpStats {
  uint64_t records = 0;  // published in objects
  uint64_t bytes = 0;    // their keys and values, or chunk payloads
  uint64_t objects = 0;
  uint64_t pauses = 0;
};

class ObjectPump {
 public:
  struct Options {
    // How long a partly filled object waits for more records before it is published.
    std::chrono::milliseconds linger{2};
    // The longest a single poll of the source blocks.
    std::chrono::milliseconds poll_timeout{50};
    // How long the readers may hold every slot before the partitions are paused. Until then
    // nothing is taken from librdkafka, whose prefetch queue is bounded and stops fetching when
    // full; a pause is for longer stalls, since resuming costs a refetch.
    std::chrono::milliseconds pause_after{100};
  };

  // Everything passed in outlives the pump; `kind` is the segment's.
  ObjectPump(MessageSource& source, SegmentWriter& writer, ObjectKind kind, CommitTracker& tracker,
             PartitionPauses& pauses, Options options);

  // Consumes and publishes for about `duration`. A message larger than a slot stops the pump
  // with kTooLarge naming its topic, partition and offset (a local chunk: its producer); it is
  // not lost, since offsets are committed only up to it. A consumer error stops it with kIoError.
  Status RunFor(std::chrono::nanoseconds duration);

  // The offsets whose records are in objects up to `processed_through` (the reader's RELEASE
  // watermark) that the readers have all released, where they moved since the last call; commit
  // them with rd_kafka_commit.
  Result<std::vector<PartitionOffset>> TakeCommittable(uint64_t processed_through);

  bool paused() const { return pauses_.slots_full(); }
  const PumpStats& stats() const { return stats_; }

 private:
  using Clock = std::chrono::steady_clock;
  // Moves waiting messages into the object being built until one does not fit.
  Status AddWaiting();
  // Adds the message to the object being built; false when it does not fit, and the object
  // must be published first.
  Result<bool> TryAdd(ReadyMessage& ready);
  void AddOffset(int32_t partition, int64_t offset);
  // A free slot once a reader is attached. Objects reach only the readers attached when they are
  // published: with none (the last one left or was evicted) an object would reach nobody, its
  // records would count as released and be committed, and the pump would drain the partitions.
  Result<SlotBuffer> AcquireForReaders(std::chrono::nanoseconds timeout);
  // Publishes the pending messages, waiting until `deadline` for a free slot. Returns OK with
  // the messages still pending when no slot came free in time.
  Status Flush(Clock::time_point deadline);

  MessageSource& source_;
  SegmentWriter& writer_;
  CommitTracker& tracker_;
  PartitionPauses& pauses_;
  Options options_;
  const bool chunks_;
  const bool takes_offsets_;  // the source's, asked once: AddOffset runs for every record
  RecordsBatchBuilder records_;
  ChunksBatchBuilder chunk_rows_;
  std::vector<RecordHeader> headers_;  // the record being added's, as the builder takes them
  // What the object being built holds. Its rows view bytes of the messages' owners, kept here
  // once per run of messages that share one (a fetch response's records do), and for chunks the
  // job and stream of their identities. Vectors, cleared and reused: a deque allocated a node
  // every few 100-byte records, and moving whole messages here cost more than their rows.
  std::vector<std::shared_ptr<const void>> pending_owners_;
  std::vector<std::unique_ptr<const ChunkId>> pending_chunks_;
  // The offsets it holds: one range per partition, or one per message when the source takes
  // them message by message; local chunks have none (docs/brokerd.md, "Local producers").
  // `last_range_` is the partition added last, most often the next.
  std::vector<OffsetRange> pending_ranges_;
  size_t last_range_ = 0;
  size_t pending_count_ = 0;
  uint64_t pending_bytes_ = 0;
  Clock::time_point first_pending_at_;
  std::optional<Clock::time_point> full_since_;  // when every slot became held
  // Ready, but not yet in an object, because the object being built had no room for them.
  std::vector<ReadyMessage> waiting_;
  size_t waiting_taken_ = 0;  // waiting_[0, waiting_taken_) went into objects already
  PumpStats stats_;
};

}  // namespace sluice::brokerd
