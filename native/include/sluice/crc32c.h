// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of a slot's data. The SSE4.2
// crc32 instruction computes it when the CPU has it, a table otherwise; both give the standard
// value (crc32c("123456789") = 0xE3069283).
#pragma once

#include <cstddef>
#include <cstdint>

#include "sluice/export.h"

namespace sluice::crc32c {

// The CRC32C of `size` bytes, continuing from `crc` (the value of the bytes before them; 0 to
// start).
SLUICE_EXPORT uint32_t Extend(uint32_t crc, const void* data, size_t size);
inline uint32_t Compute(const void* data, size_t size) { return Extend(0, data, size); }

// The two implementations Extend chooses from, exposed so tests hold them to the same values.
SLUICE_EXPORT uint32_t ExtendPortable(uint32_t crc, const void* data, size_t size);
SLUICE_EXPORT bool HardwareAvailable();
// Only when HardwareAvailable().
SLUICE_EXPORT uint32_t ExtendHardware(uint32_t crc, const void* data, size_t size);

}  // namespace sluice::crc32c
