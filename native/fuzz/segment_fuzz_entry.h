// The fuzzed code path: arbitrary bytes taken as a segment image, validated and inspected.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice::fuzz {

// Never crashes, whatever the bytes; returns 0 (libFuzzer's convention).
int FuzzSegmentImage(const uint8_t* data, size_t size);

}  // namespace sluice::fuzz
