#include "produce_fuzz_entry.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/producer_object.h"
#include "sluice/batch_builder.h"

namespace sluice::brokerd::fuzz {
namespace {

// A slot's bytes, 64-aligned as a segment's slots are (docs/formats.md, "Slot descriptor").
class Slot {
 public:
  explicit Slot(size_t length) : lines_(length / 64 + 1), length_(length) {}
  uint8_t* data() { return lines_.data()->bytes; }
  // The object in it, as its descriptor tells the reader.
  ObjectView View(size_t length, uint32_t record_count) {
    ObjectView view;
    view.data = data();
    view.length = length;
    view.object_id = 1;
    view.record_count = record_count;
    return view;
  }
  size_t length() const { return length_; }

 private:
  struct alignas(64) Line {
    uint8_t bytes[64];
  };
  std::vector<Line> lines_;
  size_t length_;
};

// A name as docs/formats.md, "Chunk record", has it, spelled out apart from the daemon's check.
bool IsAName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

bool Inside(std::string_view field, const ObjectView& view) {
  const auto begin = reinterpret_cast<uintptr_t>(field.data());
  const auto slot = reinterpret_cast<uintptr_t>(view.data);
  return field.empty() || (begin >= slot && begin - slot + field.size() <= view.length);
}

Status CheckAccepted(const ProducerObject& object, const ObjectView& view) {
  if (object.rows() < 1 || static_cast<uint64_t>(object.rows()) != view.record_count) {
    return Status::InvalidState("an accepted object has " + std::to_string(object.rows()) +
                                " rows, its descriptor says " + std::to_string(view.record_count));
  }
  ChunksBatchBuilder builder;
  for (int64_t row = 0; row < object.rows(); ++row) {
    const std::string where = "row " + std::to_string(row);
    if (!IsAName(object.job(row)) || !IsAName(object.stream(row))) {
      return Status::InvalidState(where + " of an accepted object has a job or stream no name");
    }
    if (!Inside(object.job(row), view) || !Inside(object.stream(row), view) ||
        !Inside(object.payload(row), view)) {
      return Status::InvalidState(where + " of an accepted object views bytes outside its slot");
    }
    builder.Add(Chunk{object.job(row), object.stream(row), object.seq(row), object.eos(row),
                      object.payload(row)});
  }
  Slot again(builder.EncodedSize());
  auto encoded = builder.Finish(again.data(), again.length());
  if (!encoded.ok()) {
    return Status::InvalidState("an accepted object's chunks do not encode again: " +
                                encoded.status().ToString());
  }
  auto decoded = ProducerObject::Check(again.View(encoded->length, encoded->record_count));
  if (!decoded.ok()) {
    return Status::InvalidState("an accepted object's chunks, encoded again, are refused: " +
                                decoded.status().ToString());
  }
  for (int64_t row = 0; row < object.rows(); ++row) {
    if (decoded->job(row) != object.job(row) || decoded->stream(row) != object.stream(row) ||
        decoded->seq(row) != object.seq(row) || decoded->eos(row) != object.eos(row) ||
        decoded->payload(row) != object.payload(row)) {
      return Status::InvalidState("row " + std::to_string(row) +
                                  " of an accepted object reads back otherwise");
    }
  }
  return Status::OK();
}

}  // namespace

Result<bool> CheckProducerObject(std::span<const uint8_t> bytes) {
  uint8_t count[kRecordCountBytes] = {};
  const size_t prefix = std::min(bytes.size(), kRecordCountBytes);
  std::copy_n(bytes.begin(), prefix, count);
  const uint32_t record_count =
      static_cast<uint32_t>(count[0]) | static_cast<uint32_t>(count[1]) << 8 |
      static_cast<uint32_t>(count[2]) << 16 | static_cast<uint32_t>(count[3]) << 24;
  const std::span<const uint8_t> object_bytes = bytes.subspan(prefix);
  Slot slot(object_bytes.size());
  std::copy(object_bytes.begin(), object_bytes.end(), slot.data());
  const ObjectView view = slot.View(object_bytes.size(), record_count);
  auto object = ProducerObject::Check(view);
  if (!object.ok()) {
    if (object.status().code() == StatusCode::kCorrupt) return false;
    return Status::InvalidState("a refused object is not kCorrupt, which ends its producer: " +
                                object.status().ToString());
  }
  SLUICE_RETURN_NOT_OK(CheckAccepted(*object, view));
  return true;
}

}  // namespace sluice::brokerd::fuzz
