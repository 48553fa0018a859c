#include "content_rule.h"

#include <arrow/array.h>
#include <arrow/record_batch.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "sluice/schemas.h"

namespace sluice::content {
namespace {

Status Mismatch(uint64_t row, std::string_view column, std::string_view detail) {
  return Status::Corrupt("row " + std::to_string(row) + " column " + std::string(column) + ": " +
                         std::string(detail));
}

std::string LittleEndian64(uint64_t value) {
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &value, 8);
  return bytes;
}

}  // namespace

std::string Value(uint64_t i, size_t size) {
  std::string value(size, '\0');
  for (size_t j = 0; j < size; ++j) value[j] = static_cast<char>('a' + (i + j) % 26);
  return value;
}

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

const Record& AppendRecord(std::deque<OwnedRecord>& store, uint64_t i, size_t size) {
  OwnedRecord& r = store.emplace_back();
  if (i % 3 != 0) r.key = "k" + std::to_string(i);
  r.value = Value(i, size);
  r.header_value = LittleEndian64(i);
  r.header = {"h", r.header_value};
  r.view.partition = static_cast<int32_t>(i % 4);
  r.view.offset = static_cast<int64_t>(i);
  r.view.timestamp_ms = kBaseTimestampMs + static_cast<int64_t>(i);
  if (r.key.has_value()) r.view.key = *r.key;
  r.view.value = r.value;
  if (i % 5 == 0) r.view.headers = {&r.header, 1};
  return r.view;
}

const Chunk& AppendChunk(std::deque<OwnedChunk>& store, uint64_t i, uint64_t count, size_t size) {
  OwnedChunk& c = store.emplace_back();
  c.stream = "s" + std::to_string(i % 3);
  c.payload = Value(i, size);
  c.view = {"job-1", c.stream, i / 3, i + 3 >= count, c.payload};
  return c.view;
}

uint64_t ValueHash(const Record& record) {
  return record.value.has_value() ? Fnv1a64(*record.value) : 0;
}

uint64_t ValueHash(const Chunk& chunk) { return Fnv1a64(chunk.payload); }

ValueTotals TotalsOf(const arrow::RecordBatch& batch, ObjectKind kind) {
  const auto& column = static_cast<const arrow::BinaryArray&>(
      *batch.GetColumnByName(kind == ObjectKind::kRecords ? "value" : "payload"));
  ValueTotals totals;
  for (int64_t row = 0; row < column.length(); ++row) {
    if (column.IsNull(row)) continue;
    totals.bytes += static_cast<uint64_t>(column.value_length(row));
    totals.checksum += Fnv1a64(column.GetView(row));
  }
  return totals;
}

std::string FormatChecksum(uint64_t checksum) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(checksum));
  return text;
}

Status Verifier::Add(const arrow::RecordBatch& batch) {
  if (!batch.schema()->Equals(*SchemaFor(kind_), /*check_metadata=*/false)) {
    return Status::Corrupt("the batch's schema is not the kind's: " + batch.schema()->ToString());
  }
  return kind_ == ObjectKind::kRecords ? AddRecords(batch) : AddChunks(batch);
}

Status Verifier::AddRecords(const arrow::RecordBatch& batch) {
  const auto& partition = static_cast<const arrow::Int32Array&>(*batch.column(0));
  const auto& offset = static_cast<const arrow::Int64Array&>(*batch.column(1));
  const auto& timestamp = static_cast<const arrow::TimestampArray&>(*batch.column(2));
  const auto& key = static_cast<const arrow::BinaryArray&>(*batch.column(3));
  const auto& value = static_cast<const arrow::BinaryArray&>(*batch.column(4));
  const auto& headers = static_cast<const arrow::ListArray&>(*batch.column(5));
  const auto& entries = static_cast<const arrow::StructArray&>(*headers.values());
  const auto& header_keys = static_cast<const arrow::StringArray&>(*entries.field(0));
  const auto& header_values = static_cast<const arrow::BinaryArray&>(*entries.field(1));
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    const uint64_t i = rows_;
    if (value.IsNull(row)) return Mismatch(i, "value", "null");
    if (!size_.has_value()) size_ = static_cast<size_t>(value.value_length(row));
    if (partition.Value(row) != static_cast<int32_t>(i % 4)) return Mismatch(i, "partition", "");
    if (offset.Value(row) != static_cast<int64_t>(i)) {
      return Mismatch(i, "offset", "is " + std::to_string(offset.Value(row)));
    }
    if (timestamp.Value(row) != kBaseTimestampMs + static_cast<int64_t>(i)) {
      return Mismatch(i, "timestamp", "");
    }
    if (i % 3 == 0 ? !key.IsNull(row)
                   : key.IsNull(row) || key.GetView(row) != "k" + std::to_string(i)) {
      return Mismatch(i, "key", "");
    }
    if (value.GetView(row) != Value(i, *size_)) return Mismatch(i, "value", "");
    const int64_t expected_headers = i % 5 == 0 ? 1 : 0;
    if (headers.IsNull(row) || headers.value_length(row) != expected_headers) {
      return Mismatch(i, "headers", "count");
    }
    if (expected_headers == 1) {
      const int64_t h = headers.value_offset(row);
      if (header_keys.GetView(h) != "h" || header_values.GetView(h) != LittleEndian64(i)) {
        return Mismatch(i, "headers", "content");
      }
    }
    bytes_ += *size_;
    checksum_ += Fnv1a64(value.GetView(row));
    ++rows_;
  }
  return Status::OK();
}

Status Verifier::AddChunks(const arrow::RecordBatch& batch) {
  const auto& job = static_cast<const arrow::StringArray&>(*batch.column(0));
  const auto& stream = static_cast<const arrow::StringArray&>(*batch.column(1));
  const auto& seq = static_cast<const arrow::UInt64Array&>(*batch.column(2));
  const auto& eos = static_cast<const arrow::BooleanArray&>(*batch.column(3));
  const auto& payload = static_cast<const arrow::BinaryArray&>(*batch.column(4));
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    const uint64_t i = rows_;
    if (!size_.has_value()) size_ = static_cast<size_t>(payload.value_length(row));
    if (job.GetView(row) != "job-1") return Mismatch(i, "job", "");
    if (stream.GetView(row) != "s" + std::to_string(i % 3)) return Mismatch(i, "stream", "");
    if (seq.Value(row) != i / 3) return Mismatch(i, "seq", "");
    if (payload.GetView(row) != Value(i, *size_)) return Mismatch(i, "payload", "");
    if (eos.Value(row)) {
      if (!first_eos_.has_value()) first_eos_ = i;
      ++eos_count_;
    } else if (first_eos_.has_value()) {
      return Mismatch(i, "eos", "false after an eos");
    }
    bytes_ += *size_;
    checksum_ += Fnv1a64(payload.GetView(row));
    ++rows_;
  }
  return Status::OK();
}

Status Verifier::Finish() const {
  if (kind_ == ObjectKind::kChunks && eos_count_ != std::min<uint64_t>(rows_, 3)) {
    return Status::Corrupt(std::to_string(eos_count_) + " of " + std::to_string(rows_) +
                           " chunks carry eos; the last 3 should");
  }
  return Status::OK();
}

}  // namespace sluice::content
