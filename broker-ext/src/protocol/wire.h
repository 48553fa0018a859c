// Little-endian field access for the codec: a reader that never goes past the end of its frame
// and a writer, both reporting failures as "field = value: expectation".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/limits.h"
#include "sluice/status.h"

namespace sluice::brokerd::protocol {

// The error every protocol check returns: the field as docs/formats.md spells it, then the
// value found, then what the format expects.
Status FieldError(std::string_view field, std::string_view value, std::string_view expectation);
Status FieldError(std::string_view field, uint64_t value, std::string_view expectation);

// Quotes at most 64 bytes of a string for an error message: recognisable, bounded in size, and
// ASCII (other bytes as \xNN), so the message itself can travel in an ERROR frame.
std::string Quote(std::string_view text);

bool IsWellFormedUtf8(std::string_view text);

// Checks that `name` is `min` to `max` bytes of limits::kNameAlphabet (sluice/limits.h says why).
Status CheckName(std::string_view field, std::string_view name, size_t min, size_t max);

class WireReader {
 public:
  explicit WireReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  Result<uint16_t> U16(std::string_view field);
  Result<uint32_t> U32(std::string_view field);
  Result<uint64_t> U64(std::string_view field);
  Result<int32_t> I32(std::string_view field);
  Result<int64_t> I64(std::string_view field);
  // A str16: u16 length, then well-formed UTF-8.
  Result<std::string> Str16(std::string_view field);
  // A bytes32: u32 length, then the bytes.
  Result<std::vector<uint8_t>> Bytes32(std::string_view field);

  size_t remaining() const { return bytes_.size() - position_; }

 private:
  template <typename T>
  Result<T> Fixed(std::string_view field);
  Status Need(std::string_view field, uint64_t size, std::string_view what) const;

  std::span<const uint8_t> bytes_;
  size_t position_ = 0;
};

class WireWriter {
 public:
  void U16(uint16_t value) { Fixed(value); }
  void U32(uint32_t value) { Fixed(value); }
  void U64(uint64_t value) { Fixed(value); }
  void I32(int32_t value) { Fixed(static_cast<uint32_t>(value)); }
  void I64(int64_t value) { Fixed(static_cast<uint64_t>(value)); }
  // Fail only when the length does not fit its prefix; the codec checks the rest.
  Status Str16(std::string_view field, std::string_view text);
  Status Bytes32(std::string_view field, std::span<const uint8_t> bytes);

  // Overwrites four bytes at `offset` (the frame length, known last).
  void PatchU32(size_t offset, uint32_t value);

  std::vector<uint8_t> Take() { return std::move(bytes_); }
  size_t size() const { return bytes_.size(); }

 private:
  template <typename T>
  void Fixed(T value) {
    for (size_t i = 0; i < sizeof(T); ++i) bytes_.push_back(static_cast<uint8_t>(value >> (8 * i)));
  }

  std::vector<uint8_t> bytes_;
};

}  // namespace sluice::brokerd::protocol
