// Puts the chunks of every stream back in `seq` order (CHUNK_STREAMS mode).
//
// A stream's chunks may arrive over several partitions and out of order, and an at-least-once
// sink may write some twice. The reorderer hands each stream's chunks on exactly once, in `seq`
// order, holding the early ones in a window bounded in bytes across all streams; a hole that
// outlives the gap timeout is reported, and the end of a stream is marked by its `eos` chunk
// (the lowest, should there be several: docs/brokerd.md, CHUNK_STREAMS).
#pragma once

#include <chrono>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ordering/chunk_headers.h"

namespace sluice::brokerd {

struct StreamKey {
  std::string job;
  std::string stream;

  auto operator<=>(const StreamKey&) const = default;
};

enum class OfferOutcome {
  kDelivered,   // handed on, with any buffered successors it unblocked
  kBuffered,    // early: held until the chunks before it arrive
  kDuplicate,   // already handed on or already held: dropped, and counted by the caller
  kWindowFull,  // early, and holding it would exceed the window: the item was not taken
  kAfterEnd,    // a `seq` beyond the stream's end (its lowest `eos` chunk): malformed
};

struct StreamGap {
  StreamKey key;
  uint64_t missing_from;  // the first `seq` not yet seen
  uint64_t missing_to;    // the last missing `seq` before the earliest held chunk
  std::chrono::nanoseconds waited;
};

template <typename Item>
class StreamReorderer {
 public:
  using Clock = std::chrono::steady_clock;

  StreamReorderer(uint64_t window_bytes, std::chrono::nanoseconds gap_timeout)
      : window_bytes_(window_bytes), gap_timeout_(gap_timeout) {}

  // Offers one chunk of `bytes` payload bytes. `deliver(const StreamKey&, uint64_t seq, bool
  // eos, Item&&)` is called for every chunk handed on, in `seq` order within each stream. The
  // item is moved from only when the outcome is kDelivered or kBuffered.
  //
  // The end of a stream is the lowest `seq` of the `eos` chunks offered (docs/brokerd.md,
  // CHUNK_STREAMS): a chunk can only be known to be past the end once an `eos` below it arrives,
  // so held chunks past a newly learnt end are handed back through `reject(const StreamKey&,
  // uint64_t seq, Item&&)`, to be treated as the malformed chunks they are, and the chunk that
  // brought the end is kept. Keeping the lowest end rather than the first one seen means a chunk
  // at or below every `eos` is never refused, so a stream can neither run past an end nor wait
  // for a `seq` whose chunk was refused.
  template <typename Deliver, typename Reject>
  OfferOutcome Offer(const ChunkId& id, uint64_t bytes, Item&& item, Clock::time_point now,
                     Deliver&& deliver, Reject&& reject) {
    StreamKey key{id.job, id.stream};
    Stream& stream = streams_[key];
    if (id.seq < stream.next_seq || stream.held.contains(id.seq)) return OfferOutcome::kDuplicate;
    if (stream.end_seq && id.seq > *stream.end_seq) return OfferOutcome::kAfterEnd;
    if (id.eos) {
      stream.end_seq = id.seq;
      // Taken before the window check: the end holds even if this chunk must be offered again,
      // and the room freed may be what lets it in.
      RejectAfterEnd(key, stream, reject);
    }
    if (id.seq != stream.next_seq) {
      if (held_bytes_ + bytes > window_bytes_) return OfferOutcome::kWindowFull;
      if (stream.held.empty()) stream.gap_since = now;
      stream.held.emplace(id.seq, Held{id.eos, bytes, std::move(item)});
      held_bytes_ += bytes;
      return OfferOutcome::kBuffered;
    }
    deliver(std::as_const(key), id.seq, id.eos, std::move(item));
    stream.next_seq = id.seq + 1;
    DeliverHeld(key, stream, now, deliver);
    return OfferOutcome::kDelivered;
  }

  // Streams whose earliest held chunk has waited for a missing one longer than the gap timeout.
  std::vector<StreamGap> Gaps(Clock::time_point now) const {
    std::vector<StreamGap> gaps;
    for (const auto& [key, stream] : streams_) {
      if (stream.held.empty() || now - stream.gap_since < gap_timeout_) continue;
      gaps.push_back(
          {key, stream.next_seq, stream.held.begin()->first - 1, now - stream.gap_since});
    }
    return gaps;
  }

  // Gives up on a stream's missing chunks: hands on what is held from its earliest held chunk,
  // so a lost chunk costs a reported hole, not the rest of the stream.
  template <typename Deliver>
  void SkipGap(const StreamKey& key, Clock::time_point now, Deliver&& deliver) {
    auto found = streams_.find(key);
    if (found == streams_.end() || found->second.held.empty()) return;
    found->second.next_seq = found->second.held.begin()->first;
    DeliverHeld(found->first, found->second, now, deliver);
  }

  // The held item of a stream's `seq`, or null: lets the caller change what an item it offered
  // holds on to once it knows the item is kept (kBuffered).
  Item* held_item(const StreamKey& key, uint64_t seq) {
    auto stream = streams_.find(key);
    if (stream == streams_.end()) return nullptr;
    auto held = stream->second.held.find(seq);
    return held == stream->second.held.end() ? nullptr : &held->second.item;
  }

  // Starts a stream at `next_seq`, as when a reader resumes: earlier chunks count as duplicates.
  void Resume(const StreamKey& key, uint64_t next_seq) { streams_[key].next_seq = next_seq; }

  // Whether the stream has handed on its `eos` chunk.
  bool Finished(const StreamKey& key) const {
    auto found = streams_.find(key);
    return found != streams_.end() && found->second.end_seq &&
           found->second.next_seq > *found->second.end_seq;
  }

  // Forgets a finished stream, whose only use is to recognise late duplicates; callers drop
  // streams of jobs that are over, so the map does not grow without bound.
  void Forget(const StreamKey& key) {
    auto found = streams_.find(key);
    if (found == streams_.end()) return;
    for (const auto& [seq, held] : found->second.held) held_bytes_ -= held.bytes;
    streams_.erase(found);
  }

  uint64_t held_bytes() const { return held_bytes_; }
  size_t stream_count() const { return streams_.size(); }

 private:
  struct Held {
    bool eos;
    uint64_t bytes;
    Item item;
  };
  struct Stream {
    uint64_t next_seq = 0;
    std::optional<uint64_t> end_seq;
    std::map<uint64_t, Held> held;
    Clock::time_point gap_since;
  };

  template <typename Deliver>
  void DeliverHeld(const StreamKey& key, Stream& stream, Clock::time_point now, Deliver& deliver) {
    auto next = stream.held.begin();
    while (next != stream.held.end() && next->first == stream.next_seq) {
      deliver(key, next->first, next->second.eos, std::move(next->second.item));
      held_bytes_ -= next->second.bytes;
      ++stream.next_seq;
      next = stream.held.erase(next);
    }
    // Progress restarts the clock of whatever hole remains.
    stream.gap_since = now;
  }

  // Hands back the held chunks past the stream's end, highest first.
  template <typename Reject>
  void RejectAfterEnd(const StreamKey& key, Stream& stream, Reject& reject) {
    while (!stream.held.empty() && stream.held.rbegin()->first > *stream.end_seq) {
      auto last = std::prev(stream.held.end());
      held_bytes_ -= last->second.bytes;
      const uint64_t seq = last->first;
      Item item = std::move(last->second.item);
      stream.held.erase(last);
      reject(key, seq, std::move(item));
    }
  }

  uint64_t window_bytes_;
  std::chrono::nanoseconds gap_timeout_;
  uint64_t held_bytes_ = 0;
  std::map<StreamKey, Stream> streams_;
};

}  // namespace sluice::brokerd
