#include "ordering/chunk_sequencer.h"

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

void ChunkSequencer::SettleDeadLetters() {
  if (dead_letters_ == nullptr) return;
  for (const OffsetRange& range : dead_letters_->Delivered()) tracker_.Settle(range);
}

Status ChunkSequencer::Poll(std::chrono::milliseconds timeout, std::vector<ReadyMessage>& out) {
  SettleDeadLetters();
  SLUICE_RETURN_NOT_OK(RetryBlocked(out));
  std::vector<ReadyMessage> incoming;
  const Status polled = upstream_.Poll(timeout, incoming);
  for (ReadyMessage& ready : incoming) {
    const int32_t partition = ready.record.partition;
    tracker_.Take({partition, ready.record.offset, ready.record.offset});
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
  ReportGaps();
  return polled;
}

namespace {

std::string AfterEndError(const ChunkId& id) {
  return "sluice.seq = " + std::to_string(id.seq) + ": after the end of stream " + id.job + "/" +
         id.stream;
}

}  // namespace

Result<bool> ChunkSequencer::Admit(ReadyMessage& message, std::vector<ReadyMessage>& out) {
  const ConsumedRecord& record = message.record;
  Result<ChunkId> id = ParseChunkHeaders(record.headers);
  if (!id.ok()) {
    SLUICE_RETURN_NOT_OK(Reject(record, id.status().message()));
    return true;
  }
  const OffsetRange range{record.partition, record.offset, record.offset};
  if (!options_.job_filter.empty() && id->job != options_.job_filter) {
    tracker_.Settle(range);
    return true;
  }
  const uint64_t bytes = record.value_size();
  message.chunk = std::make_unique<const ChunkId>(*id);
  ReadyMessage item = std::move(message);
  // Held chunks that an `eos` shows to be past the end come back here, to be dead-lettered
  // like any chunk after the end (docs/brokerd.md, CHUNK_STREAMS).
  std::vector<ReadyMessage> after_end;
  const OfferOutcome outcome = reorderer_.Offer(
      *id, bytes, std::move(item), Clock::now(),
      [&out](const StreamKey&, uint64_t, bool, ReadyMessage&& ready) {
        out.push_back(std::move(ready));
      },
      [&after_end](const StreamKey&, uint64_t, ReadyMessage&& held) {
        after_end.push_back(std::move(held));
      });
  for (const ReadyMessage& held : after_end) {
    SLUICE_RETURN_NOT_OK(Reject(held.record, AfterEndError(*held.chunk)));
  }
  switch (outcome) {
    case OfferOutcome::kDelivered:
    case OfferOutcome::kBuffered:
      return true;
    case OfferOutcome::kDuplicate:
      counters_.duplicates.Add();
      tracker_.Settle(range);
      return true;
    case OfferOutcome::kWindowFull:
      message = std::move(item);
      return false;
    case OfferOutcome::kAfterEnd:
      SLUICE_RETURN_NOT_OK(Reject(item.record, AfterEndError(*id)));
      return true;
  }
  return true;
}

Status ChunkSequencer::Reject(const ConsumedRecord& record, const std::string& why) {
  counters_.malformed.Add();
  const std::string where = Where(record);
  Log(LogLevel::kWarn, "malformed_chunk",
      {{"record", where},
       {"error", why},
       {"dead_letter_topic", dead_letters_ == nullptr ? "-" : dead_letters_->topic()}});
  const OffsetRange range{record.partition, record.offset, record.offset};
  if (dead_letters_ == nullptr) {
    // Counted and logged is what "not silently" can mean without a dead-letter topic.
    tracker_.Settle(range);
    return Status::OK();
  }
  counters_.dead_letters.Add();
  return dead_letters_->Send(record, why + " (" + where + ")");
}

Status ChunkSequencer::RetryBlocked(std::vector<ReadyMessage>& out) {
  for (auto& [partition, waiting] : blocked_) {
    while (!waiting.empty()) {
      SLUICE_ASSIGN_OR_RETURN(const bool admitted, Admit(waiting.front(), out));
      if (!admitted) break;
      waiting.pop_front();
    }
    if (waiting.empty() && pauses_.blocked(partition)) {
      SLUICE_RETURN_NOT_OK(pauses_.SetBlocked(partition, false));
    }
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
