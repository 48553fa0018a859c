#include "daemon/subscription.h"

#include <arrow/buffer.h>
#include <arrow/ipc/api.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "daemon/log.h"
#include "sluice/schemas.h"

namespace sluice::brokerd {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// How long the pump runs between looks at the stop flag, the watermark and the metrics: the
// latency of CLOSE and of commits, not of records.
constexpr auto kPumpRound = 100ms;
constexpr auto kLagInterval = 1s;
// Cluster lookups of the native fetch path: metadata and watermarks.
constexpr auto kKafkaTimeout = 10s;

}  // namespace

// Ends the pump's wait on its queue when a local chunk arrives (rd_kafka_queue_yield: librdkafka's
// rd_kafka_consume_queue returns at once, without a message, on a yielded queue). Reached through
// this rather than the queue itself: a producer thread that took the inbox from the router just
// before the subscription left it may still push, and wake, after the queue is destroyed.
struct Subscription::QueueWake {
  void Wake() {
    std::lock_guard lock(mutex);
    if (queue != nullptr) rd_kafka_queue_yield(queue);
  }
  void Forget() {
    std::lock_guard lock(mutex);
    queue = nullptr;
  }
  std::mutex mutex;
  rd_kafka_queue_t* queue = nullptr;
};

Result<std::unique_ptr<Subscription>> Subscription::Start(const SubscriptionPlan& plan,
                                                          FetchSession& session, Metrics& metrics,
                                                          SegmentNames& names,
                                                          LocalChunkRouter& local_chunks) {
  std::unique_ptr<Subscription> subscription(new Subscription(plan, session, metrics));
  WriterOptions options;
  options.kind = plan.kind;
  options.slot_count = plan.slot_count;
  options.slot_size = plan.slot_size;
  options.lane_count = 1;
  options.liveness_timeout = plan.liveness_timeout;
  options.reader_uid = plan.reader_uid;
  options.guard_truncation = true;
  // Kafka checks its records with CRC32C already; the copy into shared memory is checked by
  // nothing else, but a second checksum pass would cost more than the copy.
  options.checksums = false;
  Result<CreatedSegment> segment = CreateSegment(options, plan.segment_dir, names);
  if (!segment.ok()) return segment.status();
  Subscription& s = *subscription;
  s.plan_.segment_name = std::move(segment->name);
  s.writer_ = std::move(segment->writer);

  if (plan.native_fetch) {
    s.pauses_ = std::make_unique<PartitionPauses>(nullptr, plan.topic, s.partitions_);
    SLUICE_ASSIGN_OR_RETURN(NativeFetchSettings settings, NativeFetchSettings::From(plan.kafka));
    settings.read_committed = plan.read_committed;
    settings.own_broker = plan.own_broker.value_or(-1);
    const std::string& topic = plan.topic;
    NativeFetchSource::Cluster cluster{
        [&session, topic] { return session.LeaderAddresses(topic, kKafkaTimeout); },
        [&session, topic](int32_t partition) {
          return session.Watermarks(topic, partition, kKafkaTimeout);
        }};
    SLUICE_ASSIGN_OR_RETURN(s.native_source_,
                            NativeFetchSource::Create(plan.topic, plan.starts, std::move(settings),
                                                      std::move(cluster), *s.pauses_, &metrics));
    s.fetched_ = s.native_source_.get();
    session.Claim(plan.topic, s.partitions_);
  } else {
    s.queue_ = rd_kafka_queue_new(session.consumer());
    s.pauses_ = std::make_unique<PartitionPauses>(session.consumer(), plan.topic, s.partitions_);
    s.queue_source_ = std::make_unique<QueueSource>(s.queue_);
    s.fetched_ = s.queue_source_.get();
  }
  MessageSource* source = s.fetched_;
  if (plan.kind == ObjectKind::kChunks) {
    if (plan.dead_letter_topic.has_value()) {
      SLUICE_ASSIGN_OR_RETURN(s.dead_letters_,
                              DeadLetters::Create(plan.kafka, *plan.dead_letter_topic));
    }
    ChunkSequencer::Options sequencing = plan.sequencing;
    sequencing.on_gap = [&s](const StreamGap& gap) { s.AddGap(gap); };
    // CHUNK_STREAMS reads through librdkafka's queue (the native fetch path is RECORDS only),
    // which is what a local chunk must wake.
    s.queue_wake_ = std::make_shared<QueueWake>();
    s.queue_wake_->queue = s.queue_;
    s.local_inbox_ = std::make_shared<LocalChunkInbox>(sequencing.job_filter,
                                                       [wake = s.queue_wake_] { wake->Wake(); });
    sequencing.local_chunks = s.local_inbox_;
    s.sequencer_ =
        std::make_unique<ChunkSequencer>(*s.fetched_, s.tracker_, *s.pauses_, s.dead_letters_.get(),
                                         s.sequencer_counters_, std::move(sequencing));
    source = s.sequencer_.get();
  }
  ObjectPump::Options pump_options;
  pump_options.pause_after = plan.pause_after;
  s.pump_ = std::make_unique<ObjectPump>(*source, *s.writer_, plan.kind, s.tracker_, *s.pauses_,
                                         pump_options);
  if (!plan.native_fetch) SLUICE_RETURN_NOT_OK(session.Assign(plan.topic, plan.starts, s.queue_));
  if (s.local_inbox_ != nullptr) {
    local_chunks.Add(plan.topic, s.local_inbox_);
    s.local_router_ = &local_chunks;
  }
  subscription->thread_ = std::thread([raw = subscription.get()] { raw->Run(); });
  return subscription;
}

Subscription::Subscription(SubscriptionPlan plan, FetchSession& session, Metrics& metrics)
    : plan_(std::move(plan)),
      session_(session),
      metrics_(metrics),
      records_in_(metrics.counter("sluice_records_in_total", "Records consumed from Kafka",
                                  {{"topic", plan_.topic}})),
      bytes_in_(metrics.counter("sluice_bytes_in_total", "Key and value bytes consumed from Kafka",
                                {{"topic", plan_.topic}})),
      records_out_(metrics.counter("sluice_records_out_total",
                                   "Records published to readers in shared memory",
                                   {{"topic", plan_.topic}})),
      bytes_out_(metrics.counter("sluice_bytes_out_total",
                                 "Key and value bytes published to readers",
                                 {{"topic", plan_.topic}})),
      objects_out_(metrics.counter("sluice_objects_out_total", "Objects published to readers",
                                   {{"topic", plan_.topic}})),
      pauses_out_(
          metrics.counter("sluice_pauses_total",
                          "Times a subscription paused its partitions for want of a free slot",
                          {{"topic", plan_.topic}})),
      paused_partitions_(metrics.gauge("sluice_paused_partitions",
                                       "Partitions paused because their readers hold every slot",
                                       {{"subscription", std::to_string(plan_.id)}})),
      free_slots_(metrics.gauge("sluice_free_slots",
                                "Slots of a subscription's segment that nobody holds",
                                {{"subscription", std::to_string(plan_.id)}})),
      reorder_held_bytes_(metrics.gauge("sluice_reorder_held_bytes",
                                        "Bytes of early chunks a CHUNK_STREAMS subscription holds "
                                        "for their predecessors: payload, "
                                        "plus " +
                                            std::to_string(ChunkSequencer::kHeldChunkCostBytes) +
                                            " per chunk",
                                        {{"subscription", std::to_string(plan_.id)}})),
      lag_(metrics.gauge("sluice_subscription_lag",
                         "Records between a subscription's position and the high watermarks",
                         {{"subscription", std::to_string(plan_.id)}, {"topic", plan_.topic}})),
      sequencer_counters_{
          metrics.counter("sluice_malformed_chunks_total",
                          "Chunk records with malformed sluice.* headers",
                          {{"topic", plan_.topic}}),
          metrics.counter("sluice_duplicate_chunks_total", "Chunks dropped as duplicates",
                          {{"topic", plan_.topic}}),
          metrics.counter("sluice_dead_letters_total", "Records sent to the dead-letter topic",
                          {{"topic", plan_.topic}}),
          metrics.counter("sluice_stream_gaps_total",
                          "Missing chunks that outlived the gap timeout",
                          {{"topic", plan_.topic}})} {
  for (const auto& [partition, offset] : plan_.starts) partitions_.push_back(partition);
}

Subscription::~Subscription() { Close(); }

protocol::Subscribed Subscription::Answer() const {
  protocol::Subscribed answer;
  answer.subscription_id = plan_.id;
  answer.object_kind = plan_.kind;
  answer.lane_hint = 0;
  answer.partitions = partitions_;
  answer.segment_name = plan_.segment_name;
  answer.segment_dir = plan_.segment_dir;
  // The same bytes as the segment header's schema: both are this serialization.
  auto schema = arrow::ipc::SerializeSchema(*SchemaFor(plan_.kind));
  if (schema.ok()) answer.schema.assign((*schema)->data(), (*schema)->data() + (*schema)->size());
  return answer;
}

void Subscription::Run() {
  // Objects reach only the lanes attached when they are published, so nothing is consumed
  // before the reader is there.
  const Clock::time_point deadline = Clock::now() + plan_.liveness_timeout;
  while (!stop_) {
    Status attached = writer_->WaitForReaders(1, kPumpRound);
    if (attached.ok()) break;
    if (Clock::now() >= deadline) {
      Fail(protocol::ErrorCode::kInternal,
           "no reader attached segment " + plan_.segment_name + " within " +
               std::to_string(plan_.liveness_timeout.count()) + " ms");
      return;
    }
  }
  while (!stop_) {
    const Status status = pump_->RunFor(kPumpRound);
    // Its reader may truncate the file it opened read-write: the pump wrote to zero pages since,
    // and the subscription ends before it commits or reports anything of them (docs/brokerd.md,
    // "Security model").
    if (writer_->truncated()) {
      Fail(protocol::ErrorCode::kBadRequest,
           "segment " + plan_.segment_name +
               " was truncated under the daemon's mapping; the subscription ends");
      return;
    }
    Report();
    const Status committed = Commit(false);
    if (!status.ok()) {
      Fail(status.code() == StatusCode::kTooLarge ? protocol::ErrorCode::kRecordTooLarge
                                                  : protocol::ErrorCode::kInternal,
           status.message());
      return;
    }
    if (!committed.ok()) {
      Fail(protocol::ErrorCode::kInternal, committed.message());
      return;
    }
  }
}

void Subscription::Report() {
  const SourceStats& in = fetched_->stats();
  records_in_.Add(in.records - reported_in_.records);
  bytes_in_.Add(in.bytes - reported_in_.bytes);
  reported_in_ = in;
  const PumpStats& now = pump_->stats();
  records_out_.Add(now.records - reported_.records);
  bytes_out_.Add(now.bytes - reported_.bytes);
  objects_out_.Add(now.objects - reported_.objects);
  pauses_out_.Add(now.pauses - reported_.pauses);
  reported_ = now;
  paused_partitions_.Set(static_cast<int64_t>(pauses_->paused_count()));
  free_slots_.Set(writer_->FreeSlots());
  if (sequencer_ != nullptr)
    reorder_held_bytes_.Set(static_cast<int64_t>(sequencer_->held_bytes()));

  if (native_source_ != nullptr) {
    lag_.Set(native_source_->lag());
    return;
  }
  if (Clock::now() - lag_reported_at_ < kLagInterval) return;
  lag_reported_at_ = Clock::now();
  rd_kafka_topic_partition_list_t* positions =
      rd_kafka_topic_partition_list_new(static_cast<int>(partitions_.size()));
  for (int32_t partition : partitions_) {
    rd_kafka_topic_partition_list_add(positions, plan_.topic.c_str(), partition);
  }
  int64_t lag = 0;
  if (rd_kafka_position(session_.consumer(), positions) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int i = 0; i < positions->cnt; ++i) {
      int64_t low = 0;
      int64_t high = 0;
      const rd_kafka_topic_partition_t& entry = positions->elems[i];
      if (entry.offset >= 0 &&
          rd_kafka_get_watermark_offsets(session_.consumer(), plan_.topic.c_str(), entry.partition,
                                         &low, &high) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        lag += std::max<int64_t>(0, high - entry.offset);
      }
    }
  }
  rd_kafka_topic_partition_list_destroy(positions);
  lag_.Set(lag);
}

Status Subscription::SetProcessedThrough(uint64_t object_id) {
  uint64_t current = processed_through_.load();
  if (current != kNothingProcessed && object_id < current) {
    return Status::InvalidArgument("processed_through = " + std::to_string(object_id) +
                                   ": below the previous RELEASE's " + std::to_string(current));
  }
  processed_through_.store(object_id);
  return Status::OK();
}

Status Subscription::Commit(bool wait) {
  const uint64_t through = processed_through_.load();
  if (session_.group_id().empty() || through == kNothingProcessed) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(const std::vector<PartitionOffset> committable,
                          pump_->TakeCommittable(through));
  std::vector<std::pair<int32_t, int64_t>> offsets;
  for (const PartitionOffset& po : committable) {
    offsets.emplace_back(po.partition, po.offset);
  }
  const Status status = session_.Commit(plan_.topic, offsets, wait);
  if (!status.ok()) {
    Log(LogLevel::kWarn, "commit_failed",
        {{"subscription", std::to_string(plan_.id)}, {"error", status.message()}});
  }
  return Status::OK();
}

void Subscription::Fail(protocol::ErrorCode code, const std::string& message) {
  std::lock_guard lock(failure_mutex_);
  protocol::ErrorMessage error;
  error.subscription_id = plan_.id;
  error.code = code;
  error.message = message;
  failure_ = std::move(error);
}

std::optional<protocol::ErrorMessage> Subscription::TakeFailure() {
  std::lock_guard lock(failure_mutex_);
  return std::exchange(failure_, std::nullopt);
}

void Subscription::AddGap(const StreamGap& gap) {
  std::lock_guard lock(failure_mutex_);
  gaps_.push_back({plan_.id, gap.missing_from, gap.missing_to,
                   static_cast<uint64_t>(gap.waited.count()), gap.key.job, gap.key.stream});
}

std::vector<protocol::StreamGap> Subscription::TakeGaps() {
  std::lock_guard lock(failure_mutex_);
  return std::exchange(gaps_, {});
}

void Subscription::Close() {
  if (closed_) return;
  closed_ = true;
  // First, so that no local chunk comes in while it ends; those in the inbox or the window go
  // with it, as fetched ones do, and the scheduler computes their tasks again
  // (docs/generation.md, "Recovery").
  if (local_router_ != nullptr) local_router_->Remove(plan_.topic, local_inbox_.get());
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (pump_ != nullptr) {
    Report();
    // Dead letters queued so far are waited for, so that their offsets can be committed.
    if (dead_letters_ != nullptr) dead_letters_->Flush(std::chrono::milliseconds(5000));
    Status committed = sequencer_ != nullptr ? sequencer_->SettleDeadLetters() : Status::OK();
    if (committed.ok()) committed = Commit(true);
    // The subscription ends anyway; what the tracker could not vouch for stays uncommitted.
    if (!committed.ok()) {
      Log(LogLevel::kError, "commit_failed",
          {{"subscription", std::to_string(plan_.id)}, {"error", committed.message()}});
    }
  }
  if (native_source_ != nullptr) {
    session_.Unclaim(plan_.topic, partitions_);
  } else if (const Status status = session_.Unassign(plan_.topic, partitions_); !status.ok()) {
    Log(LogLevel::kWarn, "unassign_failed",
        {{"subscription", std::to_string(plan_.id)}, {"error", status.message()}});
  }
  pump_.reset();
  sequencer_.reset();
  queue_source_.reset();
  native_source_.reset();
  if (queue_wake_ != nullptr) queue_wake_->Forget();
  if (queue_ != nullptr) rd_kafka_queue_destroy(queue_);
  queue_ = nullptr;
  // Its gauges end with it, so the series of a scrape are bounded by the live subscriptions; the
  // counters by topic keep its counts (docs/brokerd.md, "Metrics").
  metrics_.RemoveSeries("subscription", std::to_string(plan_.id));
  // The reader drains what is published; unlinking leaves its mapping intact.
  if (writer_ != nullptr) (void)writer_->Close(std::chrono::nanoseconds(0));
}

}  // namespace sluice::brokerd
