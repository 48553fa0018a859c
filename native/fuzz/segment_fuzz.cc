// libFuzzer target: see README.md beside it. Built with SLUICE_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>

#include "segment_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::fuzz::FuzzSegmentImage(data, size);
}
