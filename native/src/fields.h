// Reading and writing fields of a mapped segment. Plain fields go through memcpy (no alignment or
// aliasing assumptions on untrusted bytes); shared fields through std::atomic_ref, which the
// format's natural alignment of every concurrently used field makes valid.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>

namespace sluice::fields {

static_assert(std::endian::native == std::endian::little, "the segment format is little-endian");

template <typename T>
T Read(const uint8_t* base, uint64_t offset) {
  T value;
  std::memcpy(&value, base + offset, sizeof(T));
  return value;
}

template <typename T>
void Write(uint8_t* base, uint64_t offset, T value) {
  std::memcpy(base + offset, &value, sizeof(T));
}

template <typename T>
std::atomic_ref<T> Atomic(const uint8_t* base, uint64_t offset) {
  // The mapping is shared and writable; const here only says this caller does not write.
  return std::atomic_ref<T>(*reinterpret_cast<T*>(const_cast<uint8_t*>(base) + offset));
}

}  // namespace sluice::fields
