// libFuzzer target: see README.md beside it. Built with SLUICE_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "produce_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto accepted = sluice::brokerd::fuzz::CheckProducerObject({data, size});
  if (!accepted.ok()) {
    std::fprintf(stderr, "%s\n", accepted.status().ToString().c_str());
    std::abort();
  }
  return 0;
}
