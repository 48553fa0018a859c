#include "sluice/segment_image.h"

#include <arrow/buffer.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/dictionary.h>
#include <arrow/ipc/message.h>
#include <arrow/ipc/reader.h>
#include <arrow/record_batch.h>
#include <arrow/util/align_util.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "fields.h"
#include "sluice/crc32c.h"

namespace sluice {
namespace {

using fields::Read;
namespace h = layout::header;

std::string Hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

Status ExpectPlaced(const uint8_t* base, uint64_t offset, const char* field, uint64_t expected) {
  const auto actual = Read<uint64_t>(base, offset);
  if (actual == expected) return Status::OK();
  return Status::BadField(field, actual, "the layout puts it at " + std::to_string(expected));
}

Result<std::shared_ptr<arrow::Schema>> ParseSchema(const uint8_t* message, uint32_t length) {
  auto buffer = std::make_shared<arrow::Buffer>(message, length);
  arrow::io::BufferReader reader(buffer);
  arrow::ipc::DictionaryMemo memo;
  auto schema = arrow::ipc::ReadSchema(&reader, &memo);
  if (!schema.ok()) {
    return Status::BadField("schema", std::to_string(length) + " bytes",
                            "not an Arrow IPC Schema message: " + schema.status().message());
  }
  return schema.MoveValueUnsafe();
}

// The position of field `index` of the flatbuffer table at `table`, or nothing when the table
// leaves it out (flatbuffers' binary format: a table starts with the signed offset back to its
// vtable, whose u16 entries after two u16 sizes give each field's offset in the table).
std::optional<uint64_t> FlatbufferField(const arrow::Buffer& buffer, uint64_t table,
                                        uint32_t index) {
  const uint8_t* base = buffer.data();
  const auto size = static_cast<uint64_t>(buffer.size());
  if (table > size || size - table < 4) return std::nullopt;
  const auto vtable = static_cast<int64_t>(table) - Read<int32_t>(base, table);
  if (vtable < 0 || static_cast<uint64_t>(vtable) > size - 4) return std::nullopt;
  const auto vtable_size = Read<uint16_t>(base, static_cast<uint64_t>(vtable));
  const uint64_t entry = 4 + 2 * uint64_t{index};
  if (entry + 2 > vtable_size || static_cast<uint64_t>(vtable) + entry + 2 > size) {
    return std::nullopt;
  }
  const auto offset = Read<uint16_t>(base, static_cast<uint64_t>(vtable) + entry);
  if (offset == 0) return std::nullopt;
  return table + offset;
}

// Whether a RecordBatch message's metadata (format/Message.fbs) names a BodyCompression:
// Message's field 2 is its header, the RecordBatch table, whose field 3 is `compression`. Arrow's
// public API does not tell, and ReadRecordBatch would inflate such a body onto the heap, which a
// zero-copy reader never does: 17 KB of LZ4 or ZSTD can claim buffers of hundreds of MiB
// (docs/formats.md, "Read").
bool NamesBodyCompression(const arrow::Buffer& metadata) {
  if (metadata.size() < 4) return false;
  const uint64_t message = Read<uint32_t>(metadata.data(), 0);
  const std::optional<uint64_t> header = FlatbufferField(metadata, message, 2);
  if (!header || static_cast<uint64_t>(metadata.size()) - *header < 4) return false;
  const uint64_t batch = *header + Read<uint32_t>(metadata.data(), *header);
  return FlatbufferField(metadata, batch, 3).has_value();
}

}  // namespace

Result<SegmentHeader> ValidateHeader(const uint8_t* base, uint64_t file_size) {
  if (file_size < layout::kMinFileSize) {
    return Status::BadField("file_size", file_size, "a segment is at least 4096 bytes");
  }
  if (std::memcmp(base + h::kMagic, layout::kMagic, sizeof(layout::kMagic)) != 0) {
    return Status::BadField("magic", Hex(Read<uint64_t>(base, h::kMagic)),
                            "expected the ASCII bytes SLUICESG");
  }
  const auto version = Read<uint32_t>(base, h::kVersion);
  if (version != layout::kVersion) return Status::BadField("version", version, "expected 1");
  SegmentHeader header;
  header.flags = Read<uint32_t>(base, h::kFlags);
  if ((header.flags & ~h::kFlagChecksums) != 0) {
    return Status::BadField("flags", Hex(header.flags), "only bit 0 (CHECKSUMS) is defined");
  }
  const auto slot_count = Read<uint32_t>(base, h::kSlotCount);
  if (slot_count < 1 || slot_count > limits::kMaxSlots) {
    return Status::BadField("slot_count", slot_count, "must be 1 to 65536");
  }
  const auto lane_count = Read<uint32_t>(base, h::kLaneCount);
  if (lane_count < 1 || lane_count > limits::kMaxLanes) {
    return Status::BadField("lane_count", lane_count, "must be 1 to 31");
  }
  const auto slot_size = Read<uint64_t>(base, h::kSlotSize);
  if (slot_size < limits::kMinSlotSize || slot_size % limits::kSlotAlignment != 0 ||
      slot_size > limits::kMaxSlotSize) {
    return Status::BadField("slot_size", slot_size,
                            "must be a multiple of 64 from 256 to 2 GiB - 64");
  }
  const auto header_size = Read<uint32_t>(base, h::kHeaderSize);
  if (header_size < layout::kPageSize || header_size % layout::kPageSize != 0 ||
      header_size > file_size) {
    return Status::BadField("header_size", header_size,
                            "must be a multiple of 4096, at least 4096, inside the file of " +
                                std::to_string(file_size) + " bytes");
  }
  header.layout = SegmentLayout::Derive(slot_count, lane_count, slot_size, header_size);
  const SegmentLayout& l = header.layout;
  const auto ring_capacity = Read<uint32_t>(base, h::kRingCapacity);
  if (ring_capacity != l.ring_capacity) {
    return Status::BadField("ring_capacity", ring_capacity,
                            "expected " + std::to_string(l.ring_capacity) + " for slot_count " +
                                std::to_string(slot_count));
  }
  SLUICE_RETURN_NOT_OK(ExpectPlaced(base, h::kLaneSize, "lane_size", l.lane_size));
  SLUICE_RETURN_NOT_OK(
      ExpectPlaced(base, h::kLaneTableOffset, "lane_table_offset", l.lane_table_offset));
  SLUICE_RETURN_NOT_OK(ExpectPlaced(base, h::kDescriptorTableOffset, "descriptor_table_offset",
                                    l.descriptor_table_offset));
  SLUICE_RETURN_NOT_OK(
      ExpectPlaced(base, h::kSlotDataOffset, "slot_data_offset", l.slot_data_offset));
  SLUICE_RETURN_NOT_OK(ExpectPlaced(base, h::kSegmentSize, "segment_size", l.segment_size));
  if (l.segment_size != file_size) {
    return Status::BadField("segment_size", l.segment_size,
                            "the file has " + std::to_string(file_size) + " bytes");
  }
  const auto schema_length = Read<uint32_t>(base, h::kSchemaLength);
  if (schema_length == 0 || schema_length > header_size - h::kSchema) {
    return Status::BadField(
        "schema_length", schema_length,
        "must be 1 to header_size - 256 = " + std::to_string(header_size - h::kSchema));
  }
  header.liveness_timeout_ns = Read<uint64_t>(base, h::kLivenessTimeoutNs);
  if (static_cast<int64_t>(header.liveness_timeout_ns) <= 0) {
    return Status::BadField("liveness_timeout_ns",
                            std::to_string(static_cast<int64_t>(header.liveness_timeout_ns)),
                            "must be positive");
  }
  const auto kind = Read<uint32_t>(base, h::kObjectKind);
  if (kind != static_cast<uint32_t>(ObjectKind::kRecords) &&
      kind != static_cast<uint32_t>(ObjectKind::kChunks)) {
    return Status::BadField("object_kind", kind, "expected 1 (RECORDS) or 2 (CHUNKS)");
  }
  header.kind = static_cast<ObjectKind>(kind);
  SLUICE_ASSIGN_OR_RETURN(header.schema, ParseSchema(base + h::kSchema, schema_length));
  return header;
}

Result<ObjectView> ReadObject(const uint8_t* base, const SegmentHeader& header, uint32_t slot,
                              uint32_t generation) {
  namespace s = layout::slot;
  const uint8_t* descriptor = base + header.layout.DescriptorOffset(slot);
  const std::string where = "slot " + std::to_string(slot);
  ObjectView object;
  object.slot = slot;
  object.generation = generation;
  object.length = Read<uint32_t>(descriptor, s::kLength);
  if (object.length > header.layout.slot_size) {
    return Status::BadField(
        "length", object.length,
        where + " holds at most slot_size = " + std::to_string(header.layout.slot_size) + " bytes");
  }
  const auto flags = Read<uint32_t>(descriptor, s::kFlags);
  if ((flags & ~s::kHasChecksum) != 0) {
    return Status::BadField("flags", Hex(flags), where + ": only bit 0 (HAS_CHECKSUM) is defined");
  }
  object.data = base + header.layout.SlotDataOffset(slot);
  if ((flags & s::kHasChecksum) != 0) {
    const auto expected = Read<uint32_t>(descriptor, s::kChecksum);
    const uint32_t actual = crc32c::Compute(object.data, object.length);
    if (actual != expected) {
      return Status::BadField("checksum", Hex(expected),
                              where + ": the data's CRC32C is " + Hex(actual));
    }
  }
  object.object_id = Read<uint64_t>(descriptor, s::kObjectId);
  object.record_count = Read<uint32_t>(descriptor, s::kRecordCount);
  object.partition = Read<int32_t>(descriptor, s::kPartition);
  object.first_offset = Read<int64_t>(descriptor, s::kFirstOffset);
  object.last_offset = Read<int64_t>(descriptor, s::kLastOffset);
  return object;
}

Result<std::shared_ptr<arrow::RecordBatch>> DecodeObject(
    const ObjectView& object, const std::shared_ptr<arrow::Schema>& schema) {
  const std::string where = "slot " + std::to_string(object.slot);
  auto fail = [&](const arrow::Status& status) {
    return Status::BadField("message", where, status.message());
  };
  arrow::io::BufferReader reader(
      std::make_shared<arrow::Buffer>(object.data, static_cast<int64_t>(object.length)));
  auto message = arrow::ipc::ReadMessage(&reader);
  if (!message.ok()) return fail(message.status());
  if (*message == nullptr || (*message)->type() != arrow::ipc::MessageType::RECORD_BATCH) {
    return Status::BadField("message", where, "does not hold a RecordBatch message");
  }
  if ((*message)->metadata() != nullptr && NamesBodyCompression(*(*message)->metadata())) {
    return Status::BadField("message", where,
                            "has a compressed body (LZ4 or ZSTD), which is not read in place");
  }
  arrow::ipc::DictionaryMemo memo;
  auto batch =
      arrow::ipc::ReadRecordBatch(**message, schema, &memo, arrow::ipc::IpcReadOptions::Defaults());
  if (!batch.ok()) return fail(batch.status());
  // Arrow's reader takes a buffer wherever the message puts it, and a writer's message may put
  // one off the 8-byte alignment the IPC format requires: its offsets and values would then be
  // read misaligned, by the validation below and by every reader of the batch after it.
  std::vector<bool> misaligned;
  if (!arrow::util::CheckAlignment(**batch, 8, &misaligned)) {
    return Status::BadField("message", where,
                            "has a body buffer off the 8-byte alignment the IPC format requires");
  }
  const auto valid = (*batch)->ValidateFull();
  if (!valid.ok()) return fail(valid);
  if (static_cast<uint64_t>((*batch)->num_rows()) != object.record_count) {
    return Status::BadField("record_count", object.record_count,
                            where + " holds " + std::to_string((*batch)->num_rows()) + " rows");
  }
  return batch.MoveValueUnsafe();
}

Result<Inspection> Inspect(const uint8_t* base, uint64_t size) {
  namespace s = layout::slot;
  Inspection inspection;
  SLUICE_ASSIGN_OR_RETURN(inspection.header, ValidateHeader(base, size));
  const SegmentLayout& l = inspection.header.layout;
  const uint32_t lanes = (1u << l.lane_count) - 1;
  for (uint32_t slot = 0; slot < l.slot_count; ++slot) {
    const auto state = fields::Atomic<uint64_t>(base, l.DescriptorOffset(slot) + s::kStateWord)
                           .load(std::memory_order_acquire);
    const uint32_t holders = s::Holders(state);
    if (holders == 0 || holders == s::kWriterBit) continue;
    if ((holders & s::kWriterBit) != 0 || (holders & ~lanes) != 0) {
      return Status::BadField("state_word", Hex(state),
                              "slot " + std::to_string(slot) + " holders name lanes beyond " +
                                  "lane_count " + std::to_string(l.lane_count) +
                                  " or mix the writer with readers");
    }
    SLUICE_ASSIGN_OR_RETURN(auto object,
                            ReadObject(base, inspection.header, slot, s::Generation(state)));
    inspection.objects.push_back(object);
  }
  std::sort(inspection.objects.begin(), inspection.objects.end(),
            [](const ObjectView& a, const ObjectView& b) { return a.object_id < b.object_id; });
  for (const auto& object : inspection.objects) {
    SLUICE_ASSIGN_OR_RETURN(auto batch, DecodeObject(object, inspection.header.schema));
    inspection.batches.push_back(std::move(batch));
  }
  return inspection;
}

}  // namespace sluice
