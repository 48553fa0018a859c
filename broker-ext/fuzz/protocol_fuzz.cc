// libFuzzer target: see README.md beside it. Built with SLUICE_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "protocol_fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto status = sluice::brokerd::fuzz::CheckControlStream({data, size});
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    std::abort();
  }
  return 0;
}
