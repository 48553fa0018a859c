#include "ingest/object_pump.h"

#include <algorithm>
#include <string>
#include <utility>

namespace sluice::brokerd {

ObjectPump::ObjectPump(MessageSource& source, SegmentWriter& writer, ObjectKind kind,
                       CommitTracker& tracker, PartitionPauses& pauses, Options options)
    : source_(source),
      writer_(writer),
      tracker_(tracker),
      pauses_(pauses),
      options_(options),
      chunks_(kind == ObjectKind::kChunks),
      takes_offsets_(source.takes_offsets()) {}

Status ObjectPump::RunFor(std::chrono::nanoseconds duration) {
  const Clock::time_point end = Clock::now() + duration;
  while (Clock::now() < end) {
    SLUICE_RETURN_NOT_OK(AddWaiting());
    const bool full = waiting_taken_ < waiting_.size();
    if (pending_count_ > 0 &&
        (full || paused() || Clock::now() - first_pending_at_ >= options_.linger)) {
      SLUICE_RETURN_NOT_OK(Flush(end));
      if (pending_count_ > 0) continue;  // no free slot before `end`
      // Messages are ready for the next object: waiting for more would hold them up by a poll
      // timeout per object (a reordered stream's successors are released all at once).
      if (waiting_taken_ < waiting_.size()) continue;
    }
    // While paused little arrives: what was fetched before, and errors.
    const auto wait = paused()              ? std::chrono::milliseconds(0)
                      : pending_count_ == 0 ? options_.poll_timeout
                                            : options_.linger;
    SLUICE_RETURN_NOT_OK(source_.Poll(wait, waiting_));
  }
  return Status::OK();
}

Status ObjectPump::AddWaiting() {
  while (waiting_taken_ < waiting_.size()) {
    Result<bool> added = TryAdd(waiting_[waiting_taken_]);
    if (!added.ok()) {
      ++waiting_taken_;
      return added.status();
    }
    if (!*added) return Status::OK();
    ++waiting_taken_;
  }
  // All taken: the next poll appends from the start, into the capacity kept.
  waiting_.clear();
  waiting_taken_ = 0;
  return Status::OK();
}

Result<bool> ObjectPump::TryAdd(ReadyMessage& ready) {
  const ConsumedRecord& consumed = ready.record;
  size_t size_with = 0;
  Record record;
  Chunk chunk;
  if (chunks_) {
    chunk.job = ready.chunk->job;
    chunk.stream = ready.chunk->stream;
    chunk.seq = ready.chunk->seq;
    chunk.eos = ready.chunk->eos;
    chunk.payload = consumed.value.value_or(std::string_view{});
    size_with = chunk_rows_.EncodedSizeWith(chunk);
  } else {
    headers_.clear();
    for (const KafkaHeader& header : consumed.headers) {
      // The object schema has no null header values; a null one arrives as empty bytes.
      headers_.push_back({header.key, header.value});
    }
    record.partition = consumed.partition;
    record.offset = consumed.offset;
    record.timestamp_ms = consumed.timestamp_ms;
    record.key = consumed.key;
    record.value = consumed.value;
    record.headers = headers_;
    size_with = records_.EncodedSizeWith(record);
  }

  const uint64_t slot_size = writer_.layout().slot_size;
  if (size_with > slot_size) {
    if (pending_count_ == 0) {
      return Status::TooLarge("the record of " + Where(ready) + " does not fit a slot of " +
                              std::to_string(slot_size) + " bytes");
    }
    return false;
  }
  if (pending_count_++ == 0) first_pending_at_ = Clock::now();
  pending_bytes_ += chunks_ ? consumed.value_size() : consumed.key_size() + consumed.value_size();
  // A local chunk has no offset: nothing to commit once it is released.
  if (ready.local_producer == 0) AddOffset(consumed.partition, consumed.offset);
  if (pending_owners_.empty() || pending_owners_.back() != ready.owner) {
    pending_owners_.push_back(std::move(ready.owner));
  }
  if (chunks_) {
    // Job and stream may live inside their std::string (short strings do): view them where they
    // stay until Finish.
    pending_chunks_.push_back(std::move(ready.chunk));
    chunk.job = pending_chunks_.back()->job;
    chunk.stream = pending_chunks_.back()->stream;
    chunk_rows_.Add(chunk);
  } else {
    records_.Add(record);
  }
  return true;
}

void ObjectPump::AddOffset(int32_t partition, int64_t offset) {
  if (takes_offsets_) {
    pending_ranges_.push_back({partition, offset, offset});
    return;
  }
  // Records of a partition come in offset order, so one range per partition covers them.
  if (last_range_ >= pending_ranges_.size() ||
      pending_ranges_[last_range_].partition != partition) {
    last_range_ = 0;
    while (last_range_ < pending_ranges_.size() &&
           pending_ranges_[last_range_].partition != partition) {
      ++last_range_;
    }
    if (last_range_ == pending_ranges_.size()) pending_ranges_.push_back({partition, offset, 0});
  }
  pending_ranges_[last_range_].last_offset = offset;
}

Result<SlotBuffer> ObjectPump::AcquireForReaders(std::chrono::nanoseconds timeout) {
  const Clock::time_point start = Clock::now();
  if (writer_.attached_readers() == 0) SLUICE_RETURN_NOT_OK(writer_.WaitForReaders(1, timeout));
  return writer_.Acquire(std::max<std::chrono::nanoseconds>(timeout - (Clock::now() - start),
                                                            std::chrono::nanoseconds(0)));
}

Status ObjectPump::Flush(Clock::time_point deadline) {
  Result<SlotBuffer> slot = AcquireForReaders(std::chrono::nanoseconds(0));
  if (!slot.ok() && slot.status().code() == StatusCode::kTimedOut) {
    // Readers hold every slot, or none is attached. A long stall stops fetching until a slot
    // comes free for a reader.
    const Clock::time_point now = Clock::now();
    if (!full_since_.has_value()) full_since_ = now;
    if (!paused() && now - *full_since_ >= options_.pause_after) {
      ++stats_.pauses;
      SLUICE_RETURN_NOT_OK(pauses_.SetSlotsFull(true));
    }
    const auto wait = std::min<Clock::duration>(options_.poll_timeout, deadline - now);
    slot = AcquireForReaders(std::max<Clock::duration>(wait, Clock::duration::zero()));
    // Still full: the caller comes back, or its time is up.
    if (!slot.ok() && slot.status().code() == StatusCode::kTimedOut) return Status::OK();
  }
  if (!slot.ok()) return slot.status();
  full_since_.reset();
  SLUICE_RETURN_NOT_OK(pauses_.SetSlotsFull(false));

  Result<EncodedObject> object = chunks_
                                     ? chunk_rows_.Finish(slot->data, slot->capacity, slot->stores)
                                     : records_.Finish(slot->data, slot->capacity, slot->stores);
  if (!object.ok()) return object.status();
  // The descriptor's offsets are one partition's range, or -1 (docs/formats.md, "Slot
  // descriptor"): an object spanning partitions has no such range, and a first offset of one
  // partition with a last of another would read as one. Such an object is not split at its
  // partition boundaries instead: records come in runs per partition (a fetch response's batches
  // are per partition), so it is the object at the seam of two runs, or a fetch of several
  // partitions that together fill less than a slot. Splitting would publish one object per
  // partition of every fetch: with 64 partitions of light traffic, 64 objects of a few records
  // where one holds them all, each taking one of a segment's 8 to 64 slots and costing the reader
  // an acquire, a release and an Arrow batch. Rows carry their partition and offset regardless.
  if (object->partition == -1) object->first_offset = object->last_offset = -1;
  Result<uint64_t> id = writer_.Publish(*object);
  if (!id.ok()) return id.status();

  if (!takes_offsets_) {
    std::sort(pending_ranges_.begin(), pending_ranges_.end(),
              [](const OffsetRange& a, const OffsetRange& b) { return a.partition < b.partition; });
    for (const OffsetRange& range : pending_ranges_) SLUICE_RETURN_NOT_OK(tracker_.Take(range));
  }
  SLUICE_RETURN_NOT_OK(tracker_.Published(*id, pending_ranges_));
  stats_.records += pending_count_;
  stats_.bytes += pending_bytes_;
  ++stats_.objects;
  pending_owners_.clear();
  pending_chunks_.clear();
  pending_ranges_.clear();
  last_range_ = 0;
  pending_count_ = 0;
  pending_bytes_ = 0;
  return Status::OK();
}

Result<std::vector<PartitionOffset>> ObjectPump::TakeCommittable(uint64_t processed_through) {
  const uint64_t released_below = writer_.ReleasedBelow();
  if (released_below > 0) {
    SLUICE_RETURN_NOT_OK(tracker_.ReleasedThrough(std::min(released_below - 1, processed_through)));
  }
  return tracker_.TakeCommittable();
}

}  // namespace sluice::brokerd
