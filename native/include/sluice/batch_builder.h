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

// What both encoders share: the room the metadata needs, and writing the message around a body
// laid out in place. A subclass knows its rows and fills the body buffers in schema order.
class BatchEncoder {
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
  Result<size_t> Encode(uint8_t* out, size_t capacity, size_t body_size) const;

 private:
  std::shared_ptr<arrow::Schema> schema_;
  // Bytes before the body (continuation, length, flatbuffer, padding): a bound computed from the
  // schema, since the body must be placed before Arrow computes the flatbuffer that describes it.
  size_t metadata_reserve_;
};

class RecordsBatchBuilder : public BatchEncoder {
 public:
  RecordsBatchBuilder();
  void Add(const Record& record);
  // Bytes Finish would write for the rows added so far, and with `record` added too.
  size_t EncodedSize() const { return EncodedSize(totals_); }
  size_t EncodedSizeWith(const Record& record) const;
  size_t num_rows() const { return rows_.size(); }
  // Writes the message into out[0, capacity) and starts a new, empty batch. Fails with
  // kTooLarge when it does not fit, kInvalidState when no row was added.
  Result<EncodedObject> Finish(uint8_t* out, size_t capacity);

 private:
  struct Totals {
    size_t rows = 0, key_nulls = 0, value_nulls = 0, key_bytes = 0, value_bytes = 0;
    size_t headers = 0, header_key_bytes = 0, header_value_bytes = 0;
    void Add(const Record& record);
  };
  size_t EncodedSize(const Totals& totals) const;
  std::vector<std::shared_ptr<arrow::ArrayData>> FillBody(
      internal::BodyWriter& body) const override;
  int64_t rows() const override { return static_cast<int64_t>(rows_.size()); }

  std::vector<Record> rows_;
  Totals totals_;
};

class ChunksBatchBuilder : public BatchEncoder {
 public:
  ChunksBatchBuilder();
  void Add(const Chunk& chunk);
  size_t EncodedSize() const { return EncodedSize(totals_); }
  size_t EncodedSizeWith(const Chunk& chunk) const;
  size_t num_rows() const { return rows_.size(); }
  // As RecordsBatchBuilder::Finish; partition and offsets are -1 (the caller may set them).
  Result<EncodedObject> Finish(uint8_t* out, size_t capacity);

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
