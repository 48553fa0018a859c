#include "ordering/chunk_sequencer.h"

#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/log.h"

namespace sluice::brokerd {

ChunkSequencer::ChunkSequencer(MessageSource& upstream, CommitTracker& tracker,
                               PartitionPauses& pauses, DeadLetters* dead_letters,
                               SequencerCounters counters, Options options)
    : upstream_(upstream),
      tracker_(tracker),
      pauses_(pauses),
      dead_letters_(dead_letters),
      counters_(counters),
      options_(std::move(options)),
      reorderer_(options_.window_bytes, options_.gap_timeout) {
  for (const auto& [key, next_seq] : options_.resume) reorderer_.Resume(key, next_seq);
}

Status ChunkSequencer::SettleDeadLetters() {
  if (dead_letters_ == nullptr) return Status::OK();
  for (const OffsetRange& range : dead_letters_->Delivered()) {
    SLUICE_RETURN_NOT_OK(tracker_.Settle(range));
  }
  return Status::OK();
}

Status ChunkSequencer::Poll(std::chrono::milliseconds timeout, std::vector<ReadyMessage>& out) {
  SLUICE_RETURN_NOT_OK(SettleDeadLetters());
  SLUICE_RETURN_NOT_OK(RetryBlocked(out));
  SLUICE_ASSIGN_OR_RETURN(const bool took_local, TakeLocal(out));
  std::vector<ReadyMessage> incoming;
  // Local chunks at hand are not held up by a wait for fetched ones.
  const Status polled =
      upstream_.Poll(took_local ? std::chrono::milliseconds(0) : timeout, incoming);
  for (ReadyMessage& ready : incoming) {
    const int32_t partition = ready.record.partition;
    SLUICE_RETURN_NOT_OK(tracker_.Take({partition, ready.record.offset, ready.record.offset}));
    auto blocked = blocked_.find(partition);
    if (blocked != blocked_.end() && !blocked->second.empty()) {
      blocked->second.push_back(std::move(ready));
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(const bool admitted, Admit(ready, out));
    if (!admitted) {
      blocked_[partition].push_back(std::move(ready));
      SLUICE_RETURN_NOT_OK(pauses_.SetBlocked(partition, true));
    }
  }
  // The wait may have ended for a local chunk: the inbox's wake yields the upstream's queue.
  if (!took_local) SLUICE_RETURN_NOT_OK(TakeLocal(out).status());
  ReportGaps();
  return polled;
}

Result<bool> ChunkSequencer::TakeLocal(std::vector<ReadyMessage>& out) {
  if (options_.local_chunks == nullptr) return false;
  std::vector<ReadyMessage> local;
  options_.local_chunks->Drain(local);
  for (ReadyMessage& chunk : local) {
    // Offered even when chunks of its producer wait for room: unlike a partition's records, which
    // wait behind a blocked one in the broker anyway, this chunk already left its segment, and it
    // may be the very chunk those wait for (a window full of a stream's early chunks is emptied by
    // the next chunk of that stream only).
    SLUICE_ASSIGN_OR_RETURN(const bool admitted, Admit(chunk, out));
    if (!admitted) blocked_local_[chunk.local_producer].push_back(std::move(chunk));
  }
  return !local.empty();
}

namespace {

std::string AfterEndError(const ChunkId& id) {
  return "sluice.seq = " + std::to_string(id.seq) + ": after the end of stream " + id.job + "/" +
         id.stream;
}

// Gives a local chunk bytes of its own on the heap, so that it no longer holds its slot in the
// producer's segment. A local chunk views its topic and payload there, and has no key and no
// headers (docs/brokerd.md, "Local producers").
void MoveToHeap(ReadyMessage& message) {
  struct Bytes {
    std::string topic;
    std::string value;
  };
  auto bytes = std::make_shared<Bytes>(
      Bytes{std::string(message.record.topic), std::string(message.record.value.value_or(""))});
  message.record.topic = bytes->topic;
  if (message.record.value.has_value()) message.record.value = bytes->value;
  message.owner = std::move(bytes);
}

}  // namespace

Result<bool> ChunkSequencer::Admit(ReadyMessage& message, std::vector<ReadyMessage>& out) {
  if (message.chunk == nullptr) {
    // A fetched record says which chunk it is in its headers; a local chunk comes with its id.
    Result<ChunkId> parsed = ParseChunkHeaders(message.record.headers);
    if (!parsed.ok()) {
      SLUICE_RETURN_NOT_OK(Reject(message, parsed.status().message()));
      return true;
    }
    message.chunk = std::make_unique<const ChunkId>(std::move(*parsed));
  }
  // On the heap: stays where it is while the message moves into the window or `out`.
  const ChunkId& id = *message.chunk;
  if (!options_.job_filter.empty() && id.job != options_.job_filter) {
    SLUICE_RETURN_NOT_OK(Settle(message));
    return true;
  }
  const uint64_t bytes = message.record.value_size() + kHeldChunkCostBytes;
  const bool local = message.local_producer != 0;
  ReadyMessage item = std::move(message);
  // Held chunks that an `eos` shows to be past the end come back here, to be dead-lettered
  // like any chunk after the end (docs/brokerd.md, CHUNK_STREAMS).
  std::vector<ReadyMessage> after_end;
  const OfferOutcome outcome = reorderer_.Offer(
      id, bytes, std::move(item), Clock::now(),
      [&out](const StreamKey&, uint64_t, bool, ReadyMessage&& ready) {
        out.push_back(std::move(ready));
      },
      [&after_end](const StreamKey&, uint64_t, ReadyMessage&& held) {
        after_end.push_back(std::move(held));
      });
  for (const ReadyMessage& held : after_end) {
    SLUICE_RETURN_NOT_OK(Reject(held, AfterEndError(*held.chunk)));
  }
  switch (outcome) {
    case OfferOutcome::kDelivered:
      return true;
    case OfferOutcome::kBuffered:
      // An early local chunk must not keep its producer's slot: were the producer's few slots all
      // held by early chunks, the chunk they wait for, behind them in its segment, could never be
      // published (docs/brokerd.md, "Local producers"). A fetched one holds a fetch buffer only.
      if (local) MoveToHeap(*reorderer_.held_item({id.job, id.stream}, id.seq));
      return true;
    case OfferOutcome::kDuplicate:
      counters_.duplicates.Add();
      SLUICE_RETURN_NOT_OK(Settle(item));
      return true;
    case OfferOutcome::kWindowFull:
      message = std::move(item);
      return false;
    case OfferOutcome::kAfterEnd:
      SLUICE_RETURN_NOT_OK(Reject(item, AfterEndError(id)));
      return true;
  }
  return true;
}

Status ChunkSequencer::Reject(const ReadyMessage& message, const std::string& why) {
  counters_.malformed.Add();
  const bool local = message.local_producer != 0;
  const std::string where = Where(message);
  // A local chunk is no Kafka record, and its identity is in no headers: there is nothing to
  // dead-letter, so it is counted and logged.
  DeadLetters* dead_letters = local ? nullptr : dead_letters_;
  Log(LogLevel::kWarn, "malformed_chunk",
      {{"record", where},
       {"error", why},
       {"dead_letter_topic", dead_letters == nullptr ? "-" : dead_letters->topic()}});
  if (dead_letters == nullptr) {
    // Counted and logged is what "not silently" can mean without a dead-letter topic.
    return Settle(message);
  }
  counters_.dead_letters.Add();
  return dead_letters->Send(message.record, why + " (" + where + ")");
}

Status ChunkSequencer::Settle(const ReadyMessage& message) {
  if (message.local_producer != 0) return Status::OK();
  const ConsumedRecord& record = message.record;
  return tracker_.Settle({record.partition, record.offset, record.offset});
}

Result<bool> ChunkSequencer::AdmitWaiting(std::deque<ReadyMessage>& waiting,
                                          std::vector<ReadyMessage>& out) {
  while (!waiting.empty()) {
    SLUICE_ASSIGN_OR_RETURN(const bool admitted, Admit(waiting.front(), out));
    if (!admitted) return false;
    waiting.pop_front();
  }
  return true;
}

Status ChunkSequencer::RetryBlocked(std::vector<ReadyMessage>& out) {
  for (auto& [partition, waiting] : blocked_) {
    SLUICE_ASSIGN_OR_RETURN(const bool emptied, AdmitWaiting(waiting, out));
    if (emptied && pauses_.blocked(partition)) {
      SLUICE_RETURN_NOT_OK(pauses_.SetBlocked(partition, false));
    }
  }
  // Producers come and go: their queues go once empty.
  for (auto it = blocked_local_.begin(); it != blocked_local_.end();) {
    SLUICE_ASSIGN_OR_RETURN(const bool emptied, AdmitWaiting(it->second, out));
    it = emptied ? blocked_local_.erase(it) : std::next(it);
  }
  return Status::OK();
}

void ChunkSequencer::ReportGaps() {
  for (const StreamGap& gap : reorderer_.Gaps(Clock::now())) {
    if (!reported_gaps_.insert({gap.key, gap.missing_from}).second) continue;
    counters_.gaps.Add();
    Log(LogLevel::kWarn, "stream_gap",
        {{"job", gap.key.job},
         {"stream", gap.key.stream},
         {"missing_from", std::to_string(gap.missing_from)},
         {"missing_to", std::to_string(gap.missing_to)},
         {"waited_ms",
          std::to_string(
              std::chrono::duration_cast<std::chrono::milliseconds>(gap.waited).count())}});
    if (options_.on_gap) options_.on_gap(gap);
  }
}

}  // namespace sluice::brokerd
