#include "protocol/wire.h"

#include <algorithm>
#include <limits>

namespace sluice::brokerd::protocol {

Status FieldError(std::string_view field, std::string_view value, std::string_view expectation) {
  std::string message(field);
  message.append(" = ").append(value).append(": ").append(expectation);
  return Status::InvalidArgument(std::move(message));
}

Status FieldError(std::string_view field, uint64_t value, std::string_view expectation) {
  return FieldError(field, std::to_string(value), expectation);
}

Status CheckName(std::string_view field, std::string_view name, size_t min, size_t max) {
  if (name.size() < min || name.size() > max) {
    return FieldError(field, Quote(name),
                      "expected " + std::to_string(min) + " to " + std::to_string(max) + " bytes");
  }
  if (!std::ranges::all_of(name, limits::IsNameCharacter)) {
    return FieldError(field, Quote(name),
                      "only [" + std::string(limits::kNameAlphabet) + "] is allowed");
  }
  return Status::OK();
}

std::string Quote(std::string_view text) {
  constexpr size_t kMax = 64;
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string quoted = "\"";
  for (const char c : text.substr(0, kMax)) {
    const auto byte = static_cast<uint8_t>(c);
    if (byte >= 0x20 && byte < 0x7F && c != '"' && c != '\\') {
      quoted.push_back(c);
    } else {
      quoted.append("\\x").push_back(kDigits[byte >> 4]);
      quoted.push_back(kDigits[byte & 0xF]);
    }
  }
  if (text.size() > kMax) quoted.append("...");
  quoted.append("\"");
  return quoted;
}

// Strict UTF-8, as Java's decoder with REPORT reads it: no overlong forms, no surrogates,
// nothing above U+10FFFF, no truncated sequence.
bool IsWellFormedUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<uint8_t>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    uint32_t code_point = 0;
    uint32_t smallest = 0;
    if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code_point = lead & 0x1Fu;
      smallest = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code_point = lead & 0x0Fu;
      smallest = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code_point = lead & 0x07u;
      smallest = 0x10000;
    } else {
      return false;
    }
    if (text.size() - i < length) return false;
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<uint8_t>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code_point = code_point << 6 | (next & 0x3Fu);
    }
    if (code_point < smallest || code_point > 0x10FFFF) return false;
    if (code_point >= 0xD800 && code_point <= 0xDFFF) return false;
    i += length;
  }
  return true;
}

Status WireReader::Need(std::string_view field, uint64_t size, std::string_view what) const {
  if (size <= remaining()) return Status::OK();
  return FieldError(
      field, std::string(what),
      "runs past the end of the frame, which has " + std::to_string(remaining()) + " bytes left");
}

template <typename T>
Result<T> WireReader::Fixed(std::string_view field) {
  SLUICE_RETURN_NOT_OK(Need(field, sizeof(T), std::to_string(sizeof(T)) + " bytes"));
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value = static_cast<T>(value | static_cast<T>(bytes_[position_ + i]) << (8 * i));
  }
  position_ += sizeof(T);
  return value;
}

Result<uint16_t> WireReader::U16(std::string_view field) { return Fixed<uint16_t>(field); }
Result<uint32_t> WireReader::U32(std::string_view field) { return Fixed<uint32_t>(field); }
Result<uint64_t> WireReader::U64(std::string_view field) { return Fixed<uint64_t>(field); }

Result<int32_t> WireReader::I32(std::string_view field) {
  SLUICE_ASSIGN_OR_RETURN(const uint32_t bits, Fixed<uint32_t>(field));
  return static_cast<int32_t>(bits);
}

Result<int64_t> WireReader::I64(std::string_view field) {
  SLUICE_ASSIGN_OR_RETURN(const uint64_t bits, Fixed<uint64_t>(field));
  return static_cast<int64_t>(bits);
}

Result<std::string> WireReader::Str16(std::string_view field) {
  SLUICE_ASSIGN_OR_RETURN(const uint16_t length, Fixed<uint16_t>(field));
  SLUICE_RETURN_NOT_OK(Need(field, length, std::to_string(length) + " bytes"));
  std::string text(reinterpret_cast<const char*>(bytes_.data() + position_), length);
  position_ += length;
  if (!IsWellFormedUtf8(text)) return FieldError(field, Quote(text), "not well-formed UTF-8");
  return text;
}

Result<std::vector<uint8_t>> WireReader::Bytes32(std::string_view field) {
  SLUICE_ASSIGN_OR_RETURN(const uint32_t length, Fixed<uint32_t>(field));
  SLUICE_RETURN_NOT_OK(Need(field, length, std::to_string(length) + " bytes"));
  std::vector<uint8_t> bytes(bytes_.begin() + static_cast<std::ptrdiff_t>(position_),
                             bytes_.begin() + static_cast<std::ptrdiff_t>(position_ + length));
  position_ += length;
  return bytes;
}

Status WireWriter::Str16(std::string_view field, std::string_view text) {
  if (text.size() > std::numeric_limits<uint16_t>::max()) {
    return FieldError(field, std::to_string(text.size()) + " bytes", "longer than 65535");
  }
  U16(static_cast<uint16_t>(text.size()));
  bytes_.insert(bytes_.end(), text.begin(), text.end());
  return Status::OK();
}

Status WireWriter::Bytes32(std::string_view field, std::span<const uint8_t> bytes) {
  if (bytes.size() > std::numeric_limits<uint32_t>::max()) {
    return FieldError(field, std::to_string(bytes.size()) + " bytes", "longer than 4294967295");
  }
  U32(static_cast<uint32_t>(bytes.size()));
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  return Status::OK();
}

void WireWriter::PatchU32(size_t offset, uint32_t value) {
  for (size_t i = 0; i < 4; ++i) bytes_[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

}  // namespace sluice::brokerd::protocol
