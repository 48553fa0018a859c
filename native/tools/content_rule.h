// The deterministic content the segment tool writes and verifies, shared with the Java tests
// (native/README.md gives the rule in words): record i and chunk i are functions of i, the value
// size and (for a chunk's eos) the count, so a reader can check every row without being told
// what was sent.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "sluice/batch_builder.h"
#include "sluice/layout.h"
#include "sluice/status.h"

namespace sluice::content {

inline constexpr int64_t kBaseTimestampMs = 1700000000000;

// Byte j of value i is 'a' + (i + j) % 26.
std::string Value(uint64_t i, size_t size);
// FNV-1a 64 of the bytes.
uint64_t Fnv1a64(std::string_view bytes);

// Record and chunk i, owning their bytes; View() points into them, so they must not move after.
struct OwnedRecord {
  std::optional<std::string> key;
  std::string value;
  std::string header_value;
  RecordHeader header;
  Record view;
};
struct OwnedChunk {
  std::string stream;
  std::string payload;
  Chunk view;
};

// Appends record/chunk i to `store` (a deque: earlier elements never move) and returns its view.
const Record& AppendRecord(std::deque<OwnedRecord>& store, uint64_t i, size_t size);
const Chunk& AppendChunk(std::deque<OwnedChunk>& store, uint64_t i, uint64_t count, size_t size);

// The FNV-1a 64 of a row's value or payload (0 for a null value): the terms of the checksum.
uint64_t ValueHash(const Record& record);
uint64_t ValueHash(const Chunk& chunk);

// The bytes and the checksum of a batch's values (RECORDS) or payloads (CHUNKS): the checksum is
// the sum (mod 2^64) of their FNV-1a 64; a null value adds 0 to both.
struct ValueTotals {
  uint64_t bytes = 0;
  uint64_t checksum = 0;
};
ValueTotals TotalsOf(const arrow::RecordBatch& batch, ObjectKind kind);

// How the tool and manifest.tsv print a checksum: 0x and 16 hex digits.
std::string FormatChecksum(uint64_t checksum);

// Checks a stream of decoded batches row by row against the rule.
class Verifier {
 public:
  explicit Verifier(ObjectKind kind) : kind_(kind) {}
  // Checks the rows of the next batch; the first row fixes the value size.
  Status Add(const arrow::RecordBatch& batch);
  // Checks what only the end tells (which chunks carry eos).
  Status Finish() const;

  uint64_t rows() const { return rows_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t checksum() const { return checksum_; }

 private:
  Status AddRecords(const arrow::RecordBatch& batch);
  Status AddChunks(const arrow::RecordBatch& batch);

  ObjectKind kind_;
  std::optional<size_t> size_;
  uint64_t rows_ = 0;
  uint64_t bytes_ = 0;
  uint64_t checksum_ = 0;
  uint64_t eos_count_ = 0;
  std::optional<uint64_t> first_eos_;
};

}  // namespace sluice::content
