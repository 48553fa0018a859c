#include "kafka/record_batch_reader.h"

#include <algorithm>

#include "kafka/decompression.h"
#include "kafka/wire_primitives.h"

namespace sluice::brokerd::kafka {
namespace {

// Record batch layout (magic 2): the offsets of the header fields the reader needs.
constexpr size_t kLengthEnd = 12;  // baseOffset and batchLength: what batchLength does not count
constexpr size_t kMagicAt = 16;
constexpr size_t kAttributesAt = 21;
constexpr size_t kLastOffsetDeltaAt = 23;
constexpr size_t kBaseTimestampAt = 27;
constexpr size_t kMaxTimestampAt = 35;
constexpr size_t kProducerIdAt = 43;
constexpr size_t kRecordCountAt = 57;
constexpr size_t kRecordsAt = 61;

constexpr int16_t kCompressionMask = 0x07;
constexpr int16_t kLogAppendTimeBit = 0x08;
constexpr int16_t kTransactionalBit = 0x10;
constexpr int16_t kControlBit = 0x20;
constexpr int16_t kAbortMarker = 0;  // the type of a control record's key; 1 is COMMIT

// Decodes the record at `p` into `record`, all but its offset and timestamp, which take the
// batch's base values; returns where the record ends, or null with `problem` saying what broke.
[[gnu::always_inline]] inline const char* DecodeRecord(const char* p, const char* end,
                                                       FetchedRecord& record,
                                                       int64_t& timestamp_delta,
                                                       int32_t& offset_delta,
                                                       const char*& problem) {
  uint64_t raw = 0;
  p = ReadRawVarint<5>(p, end, raw);
  if (p == nullptr) {
    problem = "a record's length varint runs past the batch";
    return nullptr;
  }
  const int32_t length = ZigZag32(raw);
  if (length < 0 || length > end - p) {
    problem = "a record's length runs past the batch";
    return nullptr;
  }
  end = p + length;
  if (p == end) {
    problem = "a record is empty";
    return nullptr;
  }
  ++p;  // attributes: Kafka defines none for records
  p = ReadRawVarint<10>(p, end, raw);
  if (p == nullptr) {
    problem = "a record's timestamp delta runs past the record";
    return nullptr;
  }
  timestamp_delta = ZigZag64(raw);
  p = ReadRawVarint<5>(p, end, raw);
  if (p == nullptr) {
    problem = "a record's offset delta runs past the record";
    return nullptr;
  }
  offset_delta = ZigZag32(raw);
  p = ReadNullableBytes(p, end, record.key);
  if (p == nullptr) {
    problem = "a record's key length is below -1 or runs past the record";
    return nullptr;
  }
  p = ReadNullableBytes(p, end, record.value);
  if (p == nullptr) {
    problem = "a record's value length is below -1 or runs past the record";
    return nullptr;
  }
  p = ReadRawVarint<5>(p, end, raw);
  const int32_t header_count = ZigZag32(raw);
  // A header takes two bytes at least: a count beyond that fails before it sizes the vector.
  if (p == nullptr || header_count < 0 || header_count > (end - p) / 2) {
    problem = "a record's header count is negative or runs past the record";
    return nullptr;
  }
  // Filled in place: resize is free when the last record had as many headers, the common case,
  // and never gives capacity back.
  record.headers.resize(static_cast<size_t>(header_count));
  for (KafkaHeader& header : record.headers) {
    p = ReadRawVarint<5>(p, end, raw);
    const int32_t key_length = ZigZag32(raw);
    if (p == nullptr || key_length < 0 || key_length > end - p) {
      problem = "a record header's key is null, negative or runs past the record";
      return nullptr;
    }
    header.key = std::string_view(p, static_cast<size_t>(key_length));
    p += key_length;
    p = ReadRawVarint<5>(p, end, raw);
    const int32_t value_length = ZigZag32(raw);
    if (p == nullptr || value_length < -1 || value_length > end - p) {
      problem = "a record header's value length is below -1 or runs past the record";
      return nullptr;
    }
    header.has_value = value_length >= 0;
    header.value = std::string_view(p, header.has_value ? static_cast<size_t>(value_length) : 0);
    p += header.value.size();
  }
  if (p != end) {
    problem = "a record has bytes after its headers";
    return nullptr;
  }
  return p;
}

// Where a batch starts in a fetch's records, and whether it is all there.
enum class Framing { kComplete, kCutShort, kBadLength, kBadMagic };

// Frames the batch at the start of `bytes`, setting `size` to its bytes when complete. The magic
// is checked as soon as its byte is there, cut short or not: a cut-short batch of another magic is
// garbage, not a batch the next fetch can resume at.
Framing FrameBatch(std::string_view bytes, size_t& size) {
  if (bytes.size() < kLengthEnd) return Framing::kCutShort;
  const int32_t length = Load<int32_t>(bytes.data() + 8);
  if (length < static_cast<int32_t>(kRecordsAt - kLengthEnd)) return Framing::kBadLength;
  if (bytes.size() > kMagicAt && bytes[kMagicAt] != 2) return Framing::kBadMagic;
  if (bytes.size() - kLengthEnd < static_cast<size_t>(length)) return Framing::kCutShort;
  size = kLengthEnd + static_cast<size_t>(length);
  return Framing::kComplete;
}

// One past the last offset of the complete batch at `batch`.
int64_t BatchEnd(const char* batch) {
  return WrappingAdd(Load<int64_t>(batch), int64_t{Load<int32_t>(batch + kLastOffsetDeltaAt)} + 1);
}

// Whether a control batch's first record is an ABORT marker; its key is int16 version, int16
// type.
Result<bool> IsAbortMarker(std::string_view records, int codec, int32_t record_count) {
  if (record_count == 0) return false;
  std::shared_ptr<const std::string> plain;
  if (codec != 0) {
    SLUICE_ASSIGN_OR_RETURN(plain, Decompress(codec, records));
    records = *plain;
  }
  FetchedRecord marker;
  int64_t timestamp_delta = 0;
  int32_t offset_delta = 0;
  const char* problem = nullptr;
  if (DecodeRecord(records.data(), records.data() + records.size(), marker, timestamp_delta,
                   offset_delta, problem) == nullptr) {
    return Status::InvalidArgument(problem);
  }
  if (!marker.key || marker.key->size() < 4) {
    return Status::InvalidArgument("a control record's key is shorter than 4 bytes");
  }
  return Load<int16_t>(marker.key->data() + 2) == kAbortMarker;
}

}  // namespace

RecordBatchReader::RecordBatchReader(std::string_view batches,
                                     std::span<const AbortedTransaction> aborted,
                                     int64_t from_offset)
    : rest_(batches), aborted_(aborted), from_offset_(from_offset), next_offset_(from_offset) {}

Status RecordBatchReader::Stop(std::string_view problem) {
  rest_ = {};
  records_ = {};
  records_left_ = 0;
  return Status::InvalidArgument("record batch at offset " + std::to_string(base_offset_) + ": " +
                                 std::string(problem));
}

Result<bool> RecordBatchReader::NextBatch() {
  for (;;) {
    size_t size = 0;
    const Framing framing = FrameBatch(rest_, size);
    if (framing == Framing::kCutShort) {
      rest_ = {};
      return false;
    }
    const char* const batch = rest_.data();
    base_offset_ = Load<int64_t>(batch);
    if (framing == Framing::kBadLength) {
      return Stop("batch length " + std::to_string(Load<int32_t>(batch + 8)) +
                  " is shorter than a batch header");
    }
    if (framing == Framing::kBadMagic) {
      return Stop("magic " + std::to_string(static_cast<int8_t>(batch[kMagicAt])) +
                  ", only 2 is supported");
    }
    const auto attributes = Load<int16_t>(batch + kAttributesAt);
    const int64_t end = BatchEnd(batch);
    const auto producer_id = Load<int64_t>(batch + kProducerIdAt);
    const auto record_count = Load<int32_t>(batch + kRecordCountAt);
    const std::string_view records = rest_.substr(kRecordsAt, size - kRecordsAt);
    const int codec = attributes & kCompressionMask;
    rest_.remove_prefix(size);
    if (record_count < 0)
      return Stop("record count " + std::to_string(record_count) + " is negative");

    // Read committed, as Java's consumer does it: an aborted transaction is in play from its
    // first offset on, until its producer's ABORT marker. Taking them in at every batch, control
    // batches included, keeps one whose data came before this fetch from outliving its marker
    // and hiding that producer's next transaction.
    while (next_aborted_ < aborted_.size() &&
           aborted_[next_aborted_].first_offset <= WrappingAdd(end, -1)) {
      const int64_t id = aborted_[next_aborted_++].producer_id;
      if (std::find(aborting_.begin(), aborting_.end(), id) == aborting_.end()) {
        aborting_.push_back(id);
      }
    }
    const bool transactional = (attributes & kTransactionalBit) != 0;
    const auto aborting = std::find(aborting_.begin(), aborting_.end(), producer_id);
    const bool aborted = transactional && aborting != aborting_.end();
    bool skip = aborted || WrappingAdd(end, -1) < from_offset_ || record_count == 0;
    if ((attributes & kControlBit) != 0) {
      skip = true;
      if (aborted) {
        Result<bool> abort = IsAbortMarker(records, codec, record_count);
        if (!abort.ok()) return Stop(abort.status().message());
        if (*abort) aborting_.erase(aborting);
      }
    }
    if (skip) {
      next_offset_ = std::max(next_offset_, end);
      continue;
    }

    if (codec == 0) {
      decompressed_.reset();
      records_ = records;
    } else {
      Result<std::shared_ptr<const std::string>> plain = Decompress(codec, records);
      if (!plain.ok()) return Stop(plain.status().message());
      decompressed_ = plain.MoveValue();
      records_ = *decompressed_;
    }
    records_left_ = record_count;
    batch_end_ = end;
    log_append_time_ = (attributes & kLogAppendTimeBit) != 0;
    base_timestamp_ = Load<int64_t>(batch + kBaseTimestampAt);
    max_timestamp_ = Load<int64_t>(batch + kMaxTimestampAt);
    return true;
  }
}

Result<bool> RecordBatchReader::Next(FetchedRecord& record) {
  for (;;) {
    if (records_left_ == 0) {
      SLUICE_ASSIGN_OR_RETURN(const bool entered, NextBatch());
      if (!entered) return false;
      continue;
    }
    if (records_.empty()) [[unlikely]] {
      return Stop("its records end " + std::to_string(records_left_) + " records early");
    }
    int64_t timestamp_delta = 0;
    int32_t offset_delta = 0;
    const char* problem = nullptr;
    const char* const next = DecodeRecord(records_.data(), records_.data() + records_.size(),
                                          record, timestamp_delta, offset_delta, problem);
    if (next == nullptr) [[unlikely]] {
      return Stop(problem);
    }
    records_.remove_prefix(static_cast<size_t>(next - records_.data()));
    record.offset = WrappingAdd(base_offset_, offset_delta);
    if (--records_left_ == 0) {
      if (!records_.empty()) [[unlikely]] {
        return Stop(std::to_string(records_.size()) + " bytes after its last record");
      }
      next_offset_ = std::max(next_offset_, batch_end_);
    }
    if (record.offset < from_offset_) continue;
    record.timestamp_ms =
        log_append_time_ ? max_timestamp_ : WrappingAdd(base_timestamp_, timestamp_delta);
    return true;
  }
}

int64_t NextFetchOffset(std::string_view batches, int64_t from_offset) {
  int64_t next = from_offset;
  size_t size = 0;
  while (FrameBatch(batches, size) == Framing::kComplete) {
    next = std::max(next, BatchEnd(batches.data()));
    batches.remove_prefix(size);
  }
  return next;
}

}  // namespace sluice::brokerd::kafka
