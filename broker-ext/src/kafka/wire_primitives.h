// The primitives of Kafka's wire format that the native fetch path reads and writes: big-endian
// integers, int16-length strings and int32-length bytes and arrays (the Fetch request and
// response, kafka/fetch_protocol.h), and the zig-zag varints of record batches
// (kafka/record_batch_reader.h).
//
// Why a file of their own: the Fetch codec and the record-batch walk both stand on them, and the
// walk's varint reads are its hot path (a few nanoseconds a record, docs/brokerd.md, "Native
// fetch path"), so they are inline here rather than behind a call.
//
// Nothing here owns bytes: readers view the caller's buffer and return views into it, writers
// append to the caller's string.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "sluice/status.h"

namespace sluice::brokerd::kafka {

inline uint16_t ByteSwap(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t ByteSwap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t ByteSwap(uint64_t v) { return __builtin_bswap64(v); }

// The big-endian integer at `p`.
template <typename T>
inline T Load(const char* p) {
  using U = std::make_unsigned_t<T>;
  U v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::little && sizeof(U) > 1) v = ByteSwap(v);
  return static_cast<T>(v);
}

// Writes `value` big-endian at `p`.
template <typename T>
inline void Store(char* p, T value) {
  auto v = static_cast<std::make_unsigned_t<T>>(value);
  if constexpr (std::endian::native == std::endian::little && sizeof(v) > 1) v = ByteSwap(v);
  std::memcpy(p, &v, sizeof v);
}

// Appends `value` big-endian to `out`.
template <typename T>
inline void Append(std::string& out, T value) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  Store(out.data() + at, value);
}

// Appends a STRING: an int16 length, then the bytes. Kafka bounds the names it accepts far below
// int16's range (topics at 249 bytes); a longer `text` is clamped, which keeps it from corrupting
// the rest of the frame.
void AppendString(std::string& out, std::string_view text);

// Offsets and timestamps come off the wire unchecked: wrap like Java's longs instead of
// overflowing into undefined behaviour.
inline int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// Reads a protobuf-style varint of at most kMaxBytes bytes (5 for Kafka's varint, 10 for its
// varlong); null when it runs past `end` or is longer.
template <int kMaxBytes>
[[gnu::always_inline]] inline const char* ReadRawVarint(const char* p, const char* end,
                                                        uint64_t& out) {
  // Most of a record's varints, its deltas and short lengths, fit one byte: skip the loop.
  if (p < end && static_cast<uint8_t>(*p) < 0x80) [[likely]] {
    out = static_cast<uint8_t>(*p);
    return p + 1;
  }
  uint64_t value = 0;
  for (int i = 0; i < kMaxBytes; ++i, ++p) {
    if (p == end) return nullptr;
    const uint64_t byte = static_cast<uint8_t>(*p);
    value |= (byte & 0x7F) << (7 * i);
    if (byte < 0x80) {
      out = value;
      return p + 1;
    }
  }
  return nullptr;
}

// Java's readVarint keeps the low 32 bits of a 5-byte varint; so does this.
inline int32_t ZigZag32(uint64_t raw) {
  const auto v = static_cast<uint32_t>(raw);
  return static_cast<int32_t>((v >> 1) ^ (0u - (v & 1u)));
}

inline int64_t ZigZag64(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (0 - (v & 1))); }

// A varint length and that many bytes; -1 is null. Null when either runs past `end`.
[[gnu::always_inline]] inline const char* ReadNullableBytes(const char* p, const char* end,
                                                            std::optional<std::string_view>& out) {
  uint64_t raw = 0;
  p = ReadRawVarint<5>(p, end, raw);
  if (p == nullptr) return nullptr;
  const int32_t length = ZigZag32(raw);
  if (length == -1) {
    out.reset();
    return p;
  }
  if (length < 0 || length > end - p) return nullptr;
  out.emplace(p, static_cast<size_t>(length));
  return p + length;
}

// Reads the fields of one frame front to back, naming the field it stops at: "<frame>: <field>
// needs 8 bytes, the frame has 3 left". Views point into the frame.
class WireReader {
 public:
  // `frame_name` starts each error message ("fetch response").
  WireReader(std::string_view frame, std::string_view frame_name)
      : rest_(frame), frame_name_(frame_name) {}

  size_t remaining() const { return rest_.size(); }

  template <typename T>
  Status Read(std::string_view field, T& out) {
    SLUICE_RETURN_NOT_OK(Need(field, sizeof(T)));
    out = Load<T>(rest_.data());
    rest_.remove_prefix(sizeof(T));
    return Status::OK();
  }

  Status Skip(std::string_view field, size_t size);

  // A STRING; negative lengths (null) are errors.
  Status String(std::string_view field, std::string_view& out);

  // An array's count; -1 (null) reads as 0 where `nullable`. Each entry takes at least
  // `min_entry_size` bytes, so a count the frame cannot hold fails here, before anything is
  // reserved for it.
  Status Count(std::string_view field, size_t min_entry_size, bool nullable, int32_t& out);

  // Nullable BYTES; null reads as empty.
  Status NullableBytes(std::string_view field, std::string_view& out);

 private:
  Status Need(std::string_view field, size_t size) const;
  Status Take(std::string_view field, size_t size, std::string_view& out);
  Status Negative(std::string_view field, int64_t value) const;

  std::string_view rest_;
  std::string_view frame_name_;
};

}  // namespace sluice::brokerd::kafka
