#include "ingest/records_pump.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>

namespace sluice::brokerd {
namespace {

using Clock = std::chrono::steady_clock;

// Messages taken from the queue per call: enough to amortise its lock, few enough to bound what
// waits outside an object.
constexpr size_t kConsumeBatch = 256;

std::string Where(const rd_kafka_message_t* message) {
  return std::string(rd_kafka_topic_name(message->rkt)) + " [" +
         std::to_string(message->partition) + "] at offset " + std::to_string(message->offset);
}

std::string_view Bytes(const void* data, size_t length) {
  return {static_cast<const char*>(data), length};
}

}  // namespace

RecordsPump::RecordsPump(rd_kafka_t* consumer, rd_kafka_queue_t* queue, std::string topic,
                         std::vector<int32_t> partitions, SegmentWriter& writer, Options options)
    : consumer_(consumer),
      queue_(queue),
      topic_(std::move(topic)),
      partitions_(std::move(partitions)),
      writer_(writer),
      options_(options) {}

RecordsPump::~RecordsPump() {
  DropPending();
  for (rd_kafka_message_t* message : waiting_) rd_kafka_message_destroy(message);
}

void RecordsPump::DropPending() {
  for (Message& pending : pending_) rd_kafka_message_destroy(pending.message);
  pending_.clear();
}

Status RecordsPump::RunFor(std::chrono::nanoseconds duration) {
  const Clock::time_point end = Clock::now() + duration;
  while (Clock::now() < end) {
    SLUICE_RETURN_NOT_OK(AddWaiting());
    const bool full = !waiting_.empty();
    if (!pending_.empty() &&
        (full || paused_ || Clock::now() - first_pending_at_ >= options_.linger)) {
      SLUICE_RETURN_NOT_OK(Flush(end));
      if (!pending_.empty()) continue;  // no free slot before `end`
    }
    // While paused nothing new arrives: only errors, which the queue must not hold back.
    const auto wait = paused_            ? std::chrono::milliseconds(0)
                      : pending_.empty() ? options_.poll_timeout
                                         : options_.linger;
    std::array<rd_kafka_message_t*, kConsumeBatch> messages{};
    const ssize_t count = rd_kafka_consume_batch_queue(queue_, static_cast<int>(wait.count()),
                                                       messages.data(), messages.size());
    Status failure = Status::OK();
    for (ssize_t i = 0; i < count; ++i) {
      rd_kafka_message_t* message = messages[static_cast<size_t>(i)];
      if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ++stats_.consumed_records;
        stats_.consumed_bytes += message->key_len + message->len;
        waiting_.push_back(message);
        continue;
      }
      if (message->err != RD_KAFKA_RESP_ERR__PARTITION_EOF && failure.ok()) {
        failure = Status(StatusCode::kIoError,
                         std::string("consumer: ") + rd_kafka_message_errstr(message));
      }
      rd_kafka_message_destroy(message);
    }
    SLUICE_RETURN_NOT_OK(failure);
  }
  return Status::OK();
}

Status RecordsPump::AddWaiting() {
  while (!waiting_.empty()) {
    Result<bool> added = TryAdd(waiting_.front());
    if (!added.ok()) {
      rd_kafka_message_destroy(waiting_.front());
      waiting_.pop_front();
      return added.status();
    }
    if (!*added) return Status::OK();
    waiting_.pop_front();
  }
  return Status::OK();
}

Result<bool> RecordsPump::TryAdd(rd_kafka_message_t* message) {
  Message pending{message, {}};
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(message, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* name = nullptr;
    const void* value = nullptr;
    size_t size = 0;
    for (size_t i = 0;
         rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
         ++i) {
      // The object schema has no null header values; a null one arrives as empty bytes.
      pending.headers.push_back({name, value == nullptr ? std::string_view{} : Bytes(value, size)});
    }
  }
  Record record;
  record.partition = message->partition;
  record.offset = message->offset;
  record.timestamp_ms = rd_kafka_message_timestamp(message, nullptr);
  if (message->key != nullptr) record.key = Bytes(message->key, message->key_len);
  if (message->payload != nullptr) record.value = Bytes(message->payload, message->len);
  record.headers = pending.headers;

  const uint64_t slot_size = writer_.layout().slot_size;
  if (builder_.EncodedSizeWith(record) > slot_size) {
    if (pending_.empty()) {
      return Status::TooLarge("the record of " + Where(message) + " does not fit a slot of " +
                              std::to_string(slot_size) + " bytes");
    }
    return false;
  }
  if (pending_.empty()) first_pending_at_ = Clock::now();
  pending_bytes_ += message->key_len + message->len;
  pending_.push_back(std::move(pending));
  // The headers vector moved with its storage, so the span handed to the builder stays valid.
  record.headers = pending_.back().headers;
  builder_.Add(record);
  return true;
}

Status RecordsPump::Flush(Clock::time_point deadline) {
  Result<SlotBuffer> slot = writer_.Acquire(std::chrono::nanoseconds(0));
  if (!slot.ok() && slot.status().code() == StatusCode::kTimedOut) {
    // Readers hold every slot: stop fetching until they release one.
    SLUICE_RETURN_NOT_OK(SetPaused(true));
    const auto wait = std::min<Clock::duration>(options_.poll_timeout, deadline - Clock::now());
    slot = writer_.Acquire(std::max<Clock::duration>(wait, Clock::duration::zero()));
    // Still full: the caller polls the consumer, then comes back, or its time is up.
    if (!slot.ok() && slot.status().code() == StatusCode::kTimedOut) return Status::OK();
  }
  if (!slot.ok()) return slot.status();
  SLUICE_RETURN_NOT_OK(SetPaused(false));

  Result<EncodedObject> object = builder_.Finish(slot->data, slot->capacity);
  if (!object.ok()) return object.status();
  Result<uint64_t> id = writer_.Publish(*object);
  if (!id.ok()) return id.status();

  std::map<int32_t, OffsetRange> ranges;
  for (const Message& pending : pending_) {
    const rd_kafka_message_t* m = pending.message;
    auto [it, inserted] = ranges.try_emplace(m->partition, OffsetRange{m->partition, m->offset, 0});
    it->second.last_offset = m->offset;
  }
  std::vector<OffsetRange> taken;
  for (const auto& [partition, range] : ranges) {
    tracker_.Take(range);
    taken.push_back(range);
  }
  tracker_.Published(*id, taken);
  stats_.records += pending_.size();
  stats_.bytes += pending_bytes_;
  pending_bytes_ = 0;
  ++stats_.objects;
  DropPending();
  return Status::OK();
}

Status RecordsPump::SetPaused(bool paused) {
  if (paused == paused_) return Status::OK();
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(partitions_.size()));
  for (int32_t partition : partitions_) {
    rd_kafka_topic_partition_list_add(list, topic_.c_str(), partition);
  }
  rd_kafka_resp_err_t err = paused ? rd_kafka_pause_partitions(consumer_, list)
                                   : rd_kafka_resume_partitions(consumer_, list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status(StatusCode::kIoError, std::string(paused ? "pause" : "resume") +
                                            " partitions: " + rd_kafka_err2str(err));
  }
  paused_ = paused;
  if (paused) ++stats_.pauses;
  return Status::OK();
}

std::vector<PartitionOffset> RecordsPump::TakeCommittable(uint64_t processed_through) {
  const uint64_t released_below = writer_.ReleasedBelow();
  if (released_below > 0) tracker_.ReleasedThrough(std::min(released_below - 1, processed_through));
  return tracker_.TakeCommittable();
}

}  // namespace sluice::brokerd
