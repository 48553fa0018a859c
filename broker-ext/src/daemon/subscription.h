// One reader's subscription: its segment, the pump thread that fills it from its partitions'
// queue on a shared FetchSession, and its commits. Created by the control server on SUBSCRIBE,
// ended by CLOSE, by the end of its connection, by shutdown, or by its own failure. A
// CHUNK_STREAMS subscription also takes the chunks of its topic's local producers, through an
// inbox in the daemon's LocalChunkRouter while it runs (docs/brokerd.md, "Local producers").
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/metrics.h"
#include "daemon/segment_names.h"
#include "ingest/commit_tracker.h"
#include "ingest/dead_letters.h"
#include "ingest/fetch_session.h"
#include "ingest/local_chunk_router.h"
#include "ingest/message_source.h"
#include "ingest/native_fetch_source.h"
#include "ingest/object_pump.h"
#include "ingest/partition_pauses.h"
#include "ordering/chunk_sequencer.h"
#include "protocol/messages.h"
#include "sluice/segment_writer.h"

namespace sluice::brokerd {

struct SubscriptionPlan {
  uint64_t id = 0;
  std::string topic;
  std::map<int32_t, int64_t> starts;  // partition -> offset, or RD_KAFKA_OFFSET_BEGINNING / _END
  uint32_t slot_count = 0;
  uint64_t slot_size = 0;
  std::string segment_dir;
  std::string segment_name;  // set by Subscription::Start, which draws it
  std::chrono::milliseconds liveness_timeout{5000};
  // The subscriber's uid (SO_PEERCRED), who alone besides the daemon opens the segment: not the
  // access group, whose other members could truncate it under the reader (docs/brokerd.md,
  // "Security model").
  uid_t reader_uid = 0;
  ObjectKind kind = ObjectKind::kRecords;
  bool native_fetch = false;  // RECORDS only: the native fetch path instead of librdkafka's queue
  // The broker on the daemon's host (sluice.broker.id): the native fetch path reads an in-sync
  // replica there at once.
  std::optional<int32_t> own_broker;
  // Committed records only, or those of open and aborted transactions too; the session's level
  // must agree (docs/formats.md, SUBSCRIBE's READ_UNCOMMITTED).
  bool read_committed = true;
  std::chrono::milliseconds pause_after{100};
  // CHUNK_STREAMS only:
  ChunkSequencer::Options sequencing;
  std::optional<std::string> dead_letter_topic;
  KafkaSettings kafka;  // for the dead-letter producer and the native fetch path's settings
};

class Subscription {
 public:
  // Creates the segment under the next of `names`, assigns the partitions on `session` (which
  // outlives the subscription), registers a CHUNK_STREAMS subscription's inbox with
  // `local_chunks` (which outlives it too) and starts pumping once a reader has attached.
  static Result<std::unique_ptr<Subscription>> Start(const SubscriptionPlan& plan,
                                                     FetchSession& session, Metrics& metrics,
                                                     SegmentNames& names,
                                                     LocalChunkRouter& local_chunks);
  ~Subscription();  // Close()
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

  // The SUBSCRIBED answer (request id aside).
  protocol::Subscribed Answer() const;
  // The reader's RELEASE watermark; kInvalidArgument when it goes back.
  Status SetProcessedThrough(uint64_t object_id);
  // Why the subscription ended by itself, once; empty while it runs.
  std::optional<protocol::ErrorMessage> TakeFailure();
  // The CHUNK_STREAMS gaps reported since the last call, as STREAM_GAP messages
  // (docs/formats.md, "STREAM_GAP"): each hole once.
  std::vector<protocol::StreamGap> TakeGaps();
  // Leaves the local chunk router, stops pumping, commits what the watermark allows (waiting for
  // the broker), leaves the partitions, marks the segment CLOSED so the reader ends after what it
  // has, and unlinks it.
  void Close();

  uint64_t id() const { return plan_.id; }
  const std::string& segment_name() const { return plan_.segment_name; }
  // What it counts against sluice.segment.max.total.bytes: its slots.
  uint64_t segment_bytes() const { return uint64_t{plan_.slot_count} * plan_.slot_size; }
  const FetchSession& session() const { return session_; }

 private:
  Subscription(SubscriptionPlan plan, FetchSession& session, Metrics& metrics);
  void Run();
  void Fail(protocol::ErrorCode code, const std::string& message);
  void AddGap(const StreamGap& gap);
  // Commits what the readers released. A failed commit is logged and tried again next round; an
  // error of the commit tracker's is returned, and ends the subscription.
  Status Commit(bool wait);
  void Report();

  static constexpr uint64_t kNothingProcessed = UINT64_MAX;
  struct QueueWake;

  SubscriptionPlan plan_;
  std::vector<int32_t> partitions_;
  FetchSession& session_;
  rd_kafka_queue_t* queue_ = nullptr;
  std::unique_ptr<SegmentWriter> writer_;
  CommitTracker tracker_;
  std::unique_ptr<PartitionPauses> pauses_;
  std::unique_ptr<QueueSource> queue_source_;
  std::unique_ptr<NativeFetchSource> native_source_;
  MessageSource* fetched_ = nullptr;  // whichever of the two fetches
  std::unique_ptr<DeadLetters> dead_letters_;
  std::unique_ptr<ChunkSequencer> sequencer_;
  // CHUNK_STREAMS: where it is registered for local chunks, and what their inbox wakes.
  LocalChunkRouter* local_router_ = nullptr;
  std::shared_ptr<LocalChunkInbox> local_inbox_;
  std::shared_ptr<QueueWake> queue_wake_;
  std::unique_ptr<ObjectPump> pump_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> processed_through_{kNothingProcessed};
  bool closed_ = false;

  std::mutex failure_mutex_;
  std::optional<protocol::ErrorMessage> failure_;
  std::vector<protocol::StreamGap> gaps_;  // under failure_mutex_: both go to the control thread

  Metrics& metrics_;  // its series by subscription are removed when it ends
  PumpStats reported_;
  SourceStats reported_in_;
  std::chrono::steady_clock::time_point lag_reported_at_;
  Counter& records_in_;
  Counter& bytes_in_;
  Counter& records_out_;
  Counter& bytes_out_;
  Counter& objects_out_;
  Counter& pauses_out_;
  Gauge& paused_partitions_;
  Gauge& free_slots_;
  Gauge& reorder_held_bytes_;
  Gauge& lag_;
  SequencerCounters sequencer_counters_;
};

}  // namespace sluice::brokerd
