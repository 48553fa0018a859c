// In-place encoders: each writes one Arrow IPC encapsulated RecordBatch message straight into a
// slot buffer, copying every key, value and payload once, from where the caller holds it into
// shared memory.
//
// Rows are added by reference and encoded at Finish, when every buffer's size is known: the body
// is laid out exactly where Arrow's IPC writer would put it (buffers in schema order, each padded
// to 8 bytes), so the flatbuffer metadata Arrow computes for that body describes it as it lies.
// The metadata goes in front, in room reserved for it (docs/formats.md allows the padding).
// Arrow's own writers (WriteRecordBatch over a FixedSizeBufferWriter on the slot) would be
// simpler, but they copy from buffers that must already exist, so every payload would be copied
// twice: into an Arrow buffer, then into the slot.
#pragma once

#include <arrow/type_fwd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sluice/export.h"
#include "sluice/status.h"

namespace sluice {

struct RecordHeader {
  std::string_view key;
  std::string_view value;
};

// One Kafka record. Bytes are referenced, not copied: they must stay valid until Finish.
struct Record {
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = 0;
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
  std::span<const RecordHeader> headers;
};

// One chunk of a data stream. Bytes are referenced, not copied: they must stay valid until Finish.
struct Chunk {
  std::string_view job;
  std::string_view stream;
  uint64_t seq = 0;
  bool eos = false;
  std::string_view payload;
};

// What Finish wrote, and the descriptor fields that go with it.
struct EncodedObject {
  size_t length = 0;
  uint32_t record_count = 0;
  int32_t partition = -1;  // -1 when the rows span partitions, or none applies
  int64_t first_offset = -1;
  int64_t last_offset = -1;
};

namespace internal {
class BodyWriter;
}

// How Finish stores payloads of 4 KiB and more into the slot: through the caches, or streamed
// past them (non-temporal stores, which the writer must fence before it publishes; SegmentWriter
// does). The bytes written are the same. SegmentWriter picks one per segment: SlotBuffer::stores.
enum class PayloadStores { kCached, kStreaming };

// What both encoders share: the room the metadata needs, and writing the message around a body
// laid out in place. A subclass knows its rows and fills the body buffers in schema order.
class SLUICE_EXPORT BatchEncoder {
 public:
  virtual ~BatchEncoder() = default;

 protected:
  explicit BatchEncoder(std::shared_ptr<arrow::Schema> schema);
  // Lays out the rows added so far through `body`; returns the top-level columns.
  virtual std::vector<std::shared_ptr<arrow::ArrayData>> FillBody(
      internal::BodyWriter& body) const = 0;
  virtual int64_t rows() const = 0;
  // The message's size for a body of `body_size` bytes.
  size_t MessageSize(size_t body_size) const { return metadata_reserve_ + body_size; }
  // Writes the message, whose body takes `body_size` bytes, into out[0, capacity).
  Result<size_t> Encode(uint8_t* out, size_t capacity, size_t body_size,
                        PayloadStores stores) const;

 private:
  std::shared_ptr<arrow::Schema> schema_;
  // Bytes before the body (continuation, length, flatbuffer, padding): a bound computed from the
  // schema, since the body must be placed before Arrow computes the flatbuffer that describes it.
  size_t metadata_reserve_;
};

class SLUICE_EXPORT RecordsBatchBuilder : public BatchEncoder {
 public:
  RecordsBatchBuilder();
  // Keeps the record's byte views (its headers' included), not the bytes.
  void Add(const Record& record);
  // Bytes Finish would write for the rows added so far, and with `record` added too.
  size_t EncodedSize() const { return EncodedSize(totals_); }
  size_t EncodedSizeWith(const Record& record) const;
  size_t num_rows() const { return partitions_.size(); }
  // Writes the message into out[0, capacity) and starts a new, empty batch. Fails with
  // kTooLarge when it does not fit, kInvalidState when no row was added.
  Result<EncodedObject> Finish(uint8_t* out, size_t capacity,
                               PayloadStores stores = PayloadStores::kCached);

 private:
  struct Totals {
    size_t rows = 0, key_nulls = 0, value_nulls = 0, key_bytes = 0, value_bytes = 0;
    size_t headers = 0, header_key_bytes = 0, header_value_bytes = 0;
    void Add(const Record& record);
  };
  // A key or value as the builder keeps it: 16 bytes, where std::optional<std::string_view>
  // takes 24.
  struct MaybeBytes {
    const char* data;
    uint32_t size;
    bool present;
  };
  static MaybeBytes Keep(const std::optional<std::string_view>& bytes) {
    return bytes.has_value() ? MaybeBytes{bytes->data(), static_cast<uint32_t>(bytes->size()), true}
                             : MaybeBytes{nullptr, 0, false};
  }
  size_t EncodedSize(const Totals& totals) const;
  std::vector<std::shared_ptr<arrow::ArrayData>> FillBody(
      internal::BodyWriter& body) const override;
  int64_t rows() const override { return static_cast<int64_t>(num_rows()); }

  // The rows, column by column: Finish writes each column in one pass over its own small array
  // (a batch of 100-byte records has tens of thousands of rows; rows of structs would be walked
  // once per column, far beyond L2).
  std::vector<int32_t> partitions_;
  std::vector<int64_t> offsets_;
  std::vector<int64_t> timestamps_;
  std::vector<MaybeBytes> keys_;
  std::vector<MaybeBytes> values_;
  // Row i's headers are headers_[header_ends_[i - 1], header_ends_[i]): the list column's offsets.
  std::vector<int32_t> header_ends_;
  std::vector<RecordHeader> headers_;
  Totals totals_;
};

// Inline: the daemon and the writers call these once per record.
inline void RecordsBatchBuilder::Totals::Add(const Record& record) {
  ++rows;
  if (record.key.has_value()) {
    key_bytes += record.key->size();
  } else {
    ++key_nulls;
  }
  if (record.value.has_value()) {
    value_bytes += record.value->size();
  } else {
    ++value_nulls;
  }
  headers += record.headers.size();
  for (const auto& header : record.headers) {
    header_key_bytes += header.key.size();
    header_value_bytes += header.value.size();
  }
}

inline void RecordsBatchBuilder::Add(const Record& record) {
  partitions_.push_back(record.partition);
  offsets_.push_back(record.offset);
  timestamps_.push_back(record.timestamp_ms);
  keys_.push_back(Keep(record.key));
  values_.push_back(Keep(record.value));
  headers_.insert(headers_.end(), record.headers.begin(), record.headers.end());
  header_ends_.push_back(static_cast<int32_t>(headers_.size()));
  totals_.Add(record);
}

class SLUICE_EXPORT ChunksBatchBuilder : public BatchEncoder {
 public:
  ChunksBatchBuilder();
  void Add(const Chunk& chunk);
  size_t EncodedSize() const { return EncodedSize(totals_); }
  size_t EncodedSizeWith(const Chunk& chunk) const;
  size_t num_rows() const { return rows_.size(); }
  // As RecordsBatchBuilder::Finish; partition and offsets are -1 (the caller may set them).
  Result<EncodedObject> Finish(uint8_t* out, size_t capacity,
                               PayloadStores stores = PayloadStores::kCached);

 private:
  struct Totals {
    size_t rows = 0, job_bytes = 0, stream_bytes = 0, payload_bytes = 0;
    void Add(const Chunk& chunk);
  };
  size_t EncodedSize(const Totals& totals) const;
  std::vector<std::shared_ptr<arrow::ArrayData>> FillBody(
      internal::BodyWriter& body) const override;
  int64_t rows() const override { return static_cast<int64_t>(rows_.size()); }

  std::vector<Chunk> rows_;
  Totals totals_;
};

}  // namespace sluice
