#include "sluice/batch_builder.h"

#include <arrow/array/data.h>
#include <arrow/buffer.h>
#include <arrow/ipc/writer.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include <cstring>
#include <limits>
#include <utility>

#include "copy_bytes.h"
#include "sluice/layout.h"
#include "sluice/schemas.h"

namespace sluice {
namespace internal {

// Hands out the body's buffers one after the other, each at the next 8-byte boundary, as Arrow's
// IPC writer places them; remembers where each went so Encode can check Arrow agrees.
class BodyWriter {
 public:
  BodyWriter(uint8_t* body, PayloadStores stores)
      : body_(body), streaming_(stores == PayloadStores::kStreaming) {}

  struct Placed {
    uint8_t* data;
    std::shared_ptr<arrow::Buffer> buffer;
  };

  // A buffer of `size` bytes; the padding after it is zeroed so a message's bytes are
  // deterministic.
  Placed Next(size_t size) {
    uint8_t* data = body_ + size_;
    const size_t padded = layout::AlignUp(size, 8);
    std::memset(data + size, 0, padded - size);
    size_ += padded;
    placed_.emplace_back(data, size);
    return {data, std::make_shared<arrow::Buffer>(data, static_cast<int64_t>(size))};
  }
  // A validity bitmap that is left out because the column has no nulls: Arrow still lists it, as
  // an empty buffer.
  std::shared_ptr<arrow::Buffer> Absent() {
    placed_.emplace_back(nullptr, 0);
    return nullptr;
  }

  size_t size() const { return size_; }
  bool streaming() const { return streaming_; }
  const std::vector<std::pair<const uint8_t*, size_t>>& placed() const { return placed_; }

 private:
  uint8_t* body_;
  bool streaming_;
  size_t size_ = 0;
  std::vector<std::pair<const uint8_t*, size_t>> placed_;
};

}  // namespace internal

namespace {

using internal::BodyWriter;
using ArrayDataPtr = std::shared_ptr<arrow::ArrayData>;

size_t Pad(size_t size) { return layout::AlignUp(size, 8); }
size_t BitmapBytes(size_t rows) { return (rows + 7) / 8; }
size_t FixedBodySize(size_t rows, size_t width) { return Pad(rows * width); }
size_t BinaryBodySize(size_t rows, size_t bytes, bool has_nulls) {
  return (has_nulls ? Pad(BitmapBytes(rows)) : 0) + Pad(4 * (rows + 1)) + Pad(bytes);
}

// A fixed-width column of `rows` values, value(i) for row i.
template <typename T, typename Value>
ArrayDataPtr WriteFixed(BodyWriter& body, std::shared_ptr<arrow::DataType> type, size_t rows,
                        Value value) {
  auto validity = body.Absent();
  auto values = body.Next(rows * sizeof(T));
  for (size_t i = 0; i < rows; ++i) {
    const T v = value(i);
    std::memcpy(values.data + i * sizeof(T), &v, sizeof(T));
  }
  return arrow::ArrayData::Make(std::move(type), static_cast<int64_t>(rows),
                                {std::move(validity), std::move(values.buffer)}, 0);
}

// A binary or utf8 column; for_each(f) calls f(std::optional<std::string_view>) for every row
// in order. This is where each key, value and payload is copied, once.
template <typename ForEach>
ArrayDataPtr WriteBinary(BodyWriter& body, std::shared_ptr<arrow::DataType> type, size_t rows,
                         size_t bytes, size_t nulls, ForEach for_each) {
  BodyWriter::Placed validity{nullptr, nullptr};
  if (nulls > 0) {
    validity = body.Next(BitmapBytes(rows));
    std::memset(validity.data, 0, BitmapBytes(rows));
  } else {
    body.Absent();
  }
  uint8_t* bitmap = validity.data;
  auto offsets = body.Next(4 * (rows + 1));
  auto values = body.Next(bytes);
  uint8_t* offsets_data = offsets.data;
  uint8_t* values_data = values.data;
  int32_t offset = 0;
  size_t row = 0;
  std::memcpy(offsets_data, &offset, 4);
  for_each([&](std::optional<std::string_view> item) {
    if (item.has_value()) {
      internal::CopyBytes(values_data + offset, item->data(), item->size(), body.streaming());
      offset += static_cast<int32_t>(item->size());
      if (bitmap != nullptr) bitmap[row / 8] |= static_cast<uint8_t>(1u << (row % 8));
    }
    ++row;
    std::memcpy(offsets_data + 4 * row, &offset, 4);
  });
  return arrow::ArrayData::Make(
      std::move(type), static_cast<int64_t>(rows),
      {std::move(validity.buffer), std::move(offsets.buffer), std::move(values.buffer)},
      static_cast<int64_t>(nulls));
}

// How many field nodes and buffers a RecordBatch of this type lists in its metadata.
void CountEntries(const arrow::DataType& type, size_t* nodes, size_t* buffers) {
  ++*nodes;
  *buffers += type.layout().buffers.size();
  for (const auto& child : type.fields()) CountEntries(*child->type(), nodes, buffers);
}

size_t MetadataReserveFor(const arrow::Schema& schema) {
  size_t nodes = 0;
  size_t buffers = 0;
  for (const auto& field : schema.fields()) CountEntries(*field->type(), &nodes, &buffers);
  // Continuation and length (8), the Message and RecordBatch tables with their vtables and
  // scalars (under 256), and one 16-byte struct per FieldNode and per Buffer entry.
  return layout::AlignUp(8 + 256 + 16 * (nodes + buffers), 64);
}

}  // namespace

BatchEncoder::BatchEncoder(std::shared_ptr<arrow::Schema> schema)
    : schema_(std::move(schema)), metadata_reserve_(MetadataReserveFor(*schema_)) {}

Result<size_t> BatchEncoder::Encode(uint8_t* out, size_t capacity, size_t body_size,
                                    PayloadStores stores) const {
  if (rows() == 0) return Status::InvalidState("an object holds at least one row");
  const size_t total = MessageSize(body_size);
  if (total > capacity || body_size > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Status::TooLarge("an object of " + std::to_string(rows()) + " rows takes " +
                            std::to_string(total) + " bytes, more than the " +
                            std::to_string(capacity) + " bytes of the slot");
  }
  BodyWriter body(out + metadata_reserve_, stores);
  auto batch = arrow::RecordBatch::Make(schema_, rows(), FillBody(body));

  arrow::ipc::IpcPayload payload;
  const auto described =
      arrow::ipc::GetRecordBatchPayload(*batch, arrow::ipc::IpcWriteOptions::Defaults(), &payload);
  if (!described.ok()) return Status::InvalidState("Arrow IPC: " + described.ToString());
  // Arrow must describe the body where it lies: same buffers, same order, nothing copied.
  bool same = payload.body_length == static_cast<int64_t>(body.size()) &&
              body.size() == body_size && payload.body_buffers.size() == body.placed().size();
  for (size_t i = 0; same && i < payload.body_buffers.size(); ++i) {
    const auto& [data, size] = body.placed()[i];
    const auto& buffer = payload.body_buffers[i];
    same = static_cast<size_t>(buffer->size()) == size && (size == 0 || buffer->data() == data);
  }
  if (!same) return Status::InvalidState("Arrow's IPC writer laid the body out differently");
  const auto metadata_size = static_cast<size_t>(payload.metadata->size());
  if (8 + metadata_size > metadata_reserve_) {
    return Status::InvalidState("the record batch metadata takes " + std::to_string(metadata_size) +
                                " bytes, more than reserved");
  }

  const uint32_t continuation = 0xFFFFFFFFu;
  const auto metadata_length = static_cast<int32_t>(metadata_reserve_ - 8);
  std::memcpy(out, &continuation, 4);
  std::memcpy(out + 4, &metadata_length, 4);
  std::memcpy(out + 8, payload.metadata->data(), metadata_size);
  std::memset(out + 8 + metadata_size, 0, metadata_reserve_ - 8 - metadata_size);
  return total;
}

RecordsBatchBuilder::RecordsBatchBuilder() : BatchEncoder(RecordsSchema()) {}

size_t RecordsBatchBuilder::EncodedSizeWith(const Record& record) const {
  Totals totals = totals_;
  totals.Add(record);
  return EncodedSize(totals);
}

size_t RecordsBatchBuilder::EncodedSize(const Totals& t) const {
  return MessageSize(FixedBodySize(t.rows, 4) + 2 * FixedBodySize(t.rows, 8) +
                     BinaryBodySize(t.rows, t.key_bytes, t.key_nulls > 0) +
                     BinaryBodySize(t.rows, t.value_bytes, t.value_nulls > 0) +
                     Pad(4 * (t.rows + 1)) + BinaryBodySize(t.headers, t.header_key_bytes, false) +
                     BinaryBodySize(t.headers, t.header_value_bytes, false));
}

std::vector<ArrayDataPtr> RecordsBatchBuilder::FillBody(BodyWriter& body) const {
  const auto& fields = RecordsSchema()->fields();
  const size_t n = num_rows();
  auto emit_all = [](const std::vector<MaybeBytes>& column) {
    return [&column](auto emit) {
      for (const MaybeBytes& bytes : column) {
        emit(bytes.present ? std::optional<std::string_view>(std::in_place, bytes.data, bytes.size)
                           : std::nullopt);
      }
    };
  };
  std::vector<ArrayDataPtr> columns;
  columns.push_back(
      WriteFixed<int32_t>(body, fields[0]->type(), n, [&](size_t i) { return partitions_[i]; }));
  columns.push_back(
      WriteFixed<int64_t>(body, fields[1]->type(), n, [&](size_t i) { return offsets_[i]; }));
  columns.push_back(
      WriteFixed<int64_t>(body, fields[2]->type(), n, [&](size_t i) { return timestamps_[i]; }));
  columns.push_back(WriteBinary(body, fields[3]->type(), n, totals_.key_bytes, totals_.key_nulls,
                                emit_all(keys_)));
  columns.push_back(WriteBinary(body, fields[4]->type(), n, totals_.value_bytes,
                                totals_.value_nulls, emit_all(values_)));

  const auto& list_type = fields[5]->type();
  const auto& struct_type = list_type->field(0)->type();
  auto list_validity = body.Absent();
  auto list_offsets = body.Next(4 * (n + 1));
  const int32_t first = 0;
  std::memcpy(list_offsets.data, &first, 4);
  std::memcpy(list_offsets.data + 4, header_ends_.data(), 4 * n);
  auto struct_validity = body.Absent();
  auto header_keys = WriteBinary(body, struct_type->field(0)->type(), totals_.headers,
                                 totals_.header_key_bytes, 0, [&](auto emit) {
                                   for (const auto& header : headers_) emit(header.key);
                                 });
  auto header_values = WriteBinary(body, struct_type->field(1)->type(), totals_.headers,
                                   totals_.header_value_bytes, 0, [&](auto emit) {
                                     for (const auto& header : headers_) emit(header.value);
                                   });
  auto entries = arrow::ArrayData::Make(struct_type, static_cast<int64_t>(totals_.headers),
                                        {std::move(struct_validity)},
                                        {std::move(header_keys), std::move(header_values)}, 0);
  columns.push_back(arrow::ArrayData::Make(
      list_type, static_cast<int64_t>(n),
      {std::move(list_validity), std::move(list_offsets.buffer)}, {std::move(entries)}, 0));
  return columns;
}

Result<EncodedObject> RecordsBatchBuilder::Finish(uint8_t* out, size_t capacity,
                                                  PayloadStores stores) {
  const size_t body_size = EncodedSize() - MessageSize(0);
  SLUICE_ASSIGN_OR_RETURN(const size_t length, Encode(out, capacity, body_size, stores));
  EncodedObject object;
  object.length = length;
  object.record_count = static_cast<uint32_t>(num_rows());
  object.partition = partitions_.front();
  for (const int32_t partition : partitions_) {
    if (partition != object.partition) object.partition = -1;
  }
  object.first_offset = offsets_.front();
  object.last_offset = offsets_.back();
  partitions_.clear();
  offsets_.clear();
  timestamps_.clear();
  keys_.clear();
  values_.clear();
  header_ends_.clear();
  headers_.clear();
  totals_ = {};
  return object;
}

void ChunksBatchBuilder::Totals::Add(const Chunk& chunk) {
  ++rows;
  job_bytes += chunk.job.size();
  stream_bytes += chunk.stream.size();
  payload_bytes += chunk.payload.size();
}

ChunksBatchBuilder::ChunksBatchBuilder() : BatchEncoder(ChunksSchema()) {}

void ChunksBatchBuilder::Add(const Chunk& chunk) {
  rows_.push_back(chunk);
  totals_.Add(chunk);
}

size_t ChunksBatchBuilder::EncodedSizeWith(const Chunk& chunk) const {
  Totals totals = totals_;
  totals.Add(chunk);
  return EncodedSize(totals);
}

size_t ChunksBatchBuilder::EncodedSize(const Totals& t) const {
  return MessageSize(BinaryBodySize(t.rows, t.job_bytes, false) +
                     BinaryBodySize(t.rows, t.stream_bytes, false) + FixedBodySize(t.rows, 8) +
                     Pad(BitmapBytes(t.rows)) + BinaryBodySize(t.rows, t.payload_bytes, false));
}

std::vector<ArrayDataPtr> ChunksBatchBuilder::FillBody(BodyWriter& body) const {
  const auto& fields = ChunksSchema()->fields();
  const size_t n = rows_.size();
  std::vector<ArrayDataPtr> columns;
  columns.push_back(WriteBinary(body, fields[0]->type(), n, totals_.job_bytes, 0, [&](auto emit) {
    for (const auto& row : rows_) emit(row.job);
  }));
  columns.push_back(
      WriteBinary(body, fields[1]->type(), n, totals_.stream_bytes, 0, [&](auto emit) {
        for (const auto& row : rows_) emit(row.stream);
      }));
  columns.push_back(
      WriteFixed<uint64_t>(body, fields[2]->type(), n, [&](size_t i) { return rows_[i].seq; }));
  auto eos_validity = body.Absent();
  auto eos = body.Next(BitmapBytes(n));
  std::memset(eos.data, 0, BitmapBytes(n));
  for (size_t i = 0; i < n; ++i) {
    if (rows_[i].eos) eos.data[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
  columns.push_back(arrow::ArrayData::Make(fields[3]->type(), static_cast<int64_t>(n),
                                           {std::move(eos_validity), std::move(eos.buffer)}, 0));
  columns.push_back(
      WriteBinary(body, fields[4]->type(), n, totals_.payload_bytes, 0, [&](auto emit) {
        for (const auto& row : rows_) emit(row.payload);
      }));
  return columns;
}

Result<EncodedObject> ChunksBatchBuilder::Finish(uint8_t* out, size_t capacity,
                                                 PayloadStores stores) {
  const size_t body_size = EncodedSize() - MessageSize(0);
  SLUICE_ASSIGN_OR_RETURN(const size_t length, Encode(out, capacity, body_size, stores));
  EncodedObject object;
  object.length = length;
  object.record_count = static_cast<uint32_t>(rows_.size());
  rows_.clear();
  totals_ = {};
  return object;
}

}  // namespace sluice
