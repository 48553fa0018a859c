// What the kafka/ tests build and read back: record batches and Fetch fields encoded byte by
// byte as a broker sends them (a test-only encoder, independent of the daemon's), the four
// compressors as Kafka's clients use them, and a walk of RecordBatchReader copied out of its views.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kafka/fetch_protocol.h"
#include "kafka/record_batch_reader.h"
#include "mentions.h"
#include "sluice/status.h"

namespace sluice::brokerd::kafka {

// ---- A test-only encoder: builds what a broker sends, field by field. ----

template <typename T>
void PutBig(std::string& out, T value) {
  auto v = static_cast<std::make_unsigned_t<T>>(value);
  for (int shift = 8 * (static_cast<int>(sizeof v) - 1); shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> shift) & 0xFF));
  }
}

void PutVarint(std::string& out, uint64_t v);
void PutZigZag(std::string& out, int64_t v);
void PutNullable(std::string& out, const std::optional<std::string>& bytes);

// Hex digits, spaces ignored: expected bytes written out by hand.
std::string Hex(std::string_view digits);

struct TestHeader {
  std::string key;
  std::optional<std::string> value;
  bool operator==(const TestHeader&) const = default;
};

struct TestRecord {
  int32_t offset_delta = 0;
  int64_t timestamp_delta = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<TestHeader> headers;
};

std::string EncodeRecord(const TestRecord& record);

constexpr int16_t kGzip = 1;
constexpr int16_t kSnappy = 2;
constexpr int16_t kLz4 = 3;
constexpr int16_t kZstd = 4;
constexpr int16_t kLogAppendTime = 0x08;
constexpr int16_t kTransactional = 0x10;
constexpr int16_t kControl = 0x20;

struct TestBatch {
  int64_t base_offset = 0;
  int16_t attributes = 0;
  int64_t base_timestamp = 1'000;
  int64_t max_timestamp = 9'000;
  int64_t producer_id = -1;
  int8_t magic = 2;
  std::vector<TestRecord> records;
  std::optional<int32_t> last_offset_delta;  // default: the last record's offset delta
  std::optional<int32_t> record_count;       // default: the number of records
  std::optional<std::string> raw_records;    // replaces the encoded records
  std::function<std::string(const std::string&)> compress;  // applied to the records' bytes
};

std::string EncodeBatch(const TestBatch& batch);

TestRecord Value(int32_t offset_delta, std::string value);

// A batch of `count` records with consecutive offsets and values "v<offset>".
TestBatch Consecutive(int64_t base_offset, int count, int16_t attributes = 0,
                      int64_t producer_id = -1);

// A control batch of one transaction marker: key int16 version, int16 type (0 ABORT, 1 COMMIT);
// value int16 version, int32 coordinator epoch.
std::string Marker(int64_t offset, int64_t producer_id, bool abort);

// `count` records of varied keys, values, timestamps and headers; the last value of 1 MiB
// compresses far beyond a codec's first output buffer, so the output has to grow.
std::vector<TestRecord> VariedRecords(int count);

// ---- Reading everything back, copied out of the views. ----

struct ReadRecord {
  int64_t offset = 0;
  int64_t timestamp_ms = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<TestHeader> headers;
};

struct Walk {
  std::vector<ReadRecord> records;
  Status status;
  int64_t next_offset = 0;

  std::vector<int64_t> offsets() const {
    std::vector<int64_t> out;
    for (const ReadRecord& record : records) out.push_back(record.offset);
    return out;
  }
  std::vector<std::optional<std::string>> values() const {
    std::vector<std::optional<std::string>> out;
    for (const ReadRecord& record : records) out.push_back(record.value);
    return out;
  }
};

Walk ReadAll(std::string_view batches, std::span<const AbortedTransaction> aborted = {},
             int64_t from_offset = 0);

// ---- Compressors, as Kafka's clients use them. ----

std::string GzipCompress(const std::string& in);
std::string SnappyBlock(std::string_view in);
// Java's framing: magic, version, compatible version, then length-prefixed blocks; two blocks
// here, so the reader has to join them.
std::string XerialSnappy(const std::string& in);
std::string Lz4Frame(const std::string& in);
std::string Zstd(const std::string& in);
// Streaming compressors leave the content size out of the frame header.
std::string ZstdWithoutContentSize(const std::string& in);

}  // namespace sluice::brokerd::kafka
