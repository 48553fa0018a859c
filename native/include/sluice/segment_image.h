// Reading a segment's bytes without taking part in it: the header validation every reader runs
// before it trusts an offset (docs/formats.md "Validation"), the checks on one published object,
// and an inspection that decodes every published slot of an image without attaching to a lane
// (what the test vectors and the fuzzer go through).
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "sluice/export.h"
#include "sluice/layout.h"
#include "sluice/status.h"

namespace sluice {

// The immutable part of a validated header.
struct SegmentHeader {
  SegmentLayout layout;
  uint32_t flags = 0;
  ObjectKind kind = ObjectKind::kRecords;
  uint64_t liveness_timeout_ns = 0;
  std::shared_ptr<arrow::Schema> schema;

  bool checksums() const { return (flags & layout::header::kFlagChecksums) != 0; }
};

// A published object as its descriptor gives it; `data` points into the mapping.
struct ObjectView {
  const uint8_t* data = nullptr;
  size_t length = 0;
  uint32_t slot = 0;
  uint32_t generation = 0;
  uint64_t object_id = 0;
  uint32_t record_count = 0;
  int32_t partition = -1;
  int64_t first_offset = -1;
  int64_t last_offset = -1;
};

// Checks the header of the `file_size` bytes at `base` (8-byte aligned) against every rule of
// "Validation"; the error names the first field that breaks one, with its value.
SLUICE_EXPORT Result<SegmentHeader> ValidateHeader(const uint8_t* base, uint64_t file_size);

// Reads slot `slot`'s descriptor and checks its length, flags and, when flagged, its CRC32C.
SLUICE_EXPORT Result<ObjectView> ReadObject(const uint8_t* base, const SegmentHeader& header,
                                            uint32_t slot, uint32_t generation);

// Parses the object's IPC message zero-copy over its bytes (the batch points into them), checks
// that every body buffer is 8-byte aligned, the batch fully against `schema` (offsets, lengths,
// UTF-8) and its row count against the descriptor's record_count.
SLUICE_EXPORT Result<std::shared_ptr<arrow::RecordBatch>> DecodeObject(
    const ObjectView& object, const std::shared_ptr<arrow::Schema>& schema);

struct Inspection {
  SegmentHeader header;
  // Every published slot, in object_id order, and its decoded batch.
  std::vector<ObjectView> objects;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
};

// Validates an image (`size` bytes at `base`, 8-byte aligned, not changing meanwhile) and decodes
// every PUBLISHED slot. Slots held by the writer alone, or free, are skipped.
SLUICE_EXPORT Result<Inspection> Inspect(const uint8_t* base, uint64_t size);

}  // namespace sluice
