// Replays the control-protocol fuzzer's seed corpus through its entry function, built with the
// project's compiler, so every CI run checks the decoder's round trip on the inputs that matter
// most (fuzz/README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "gtest_util.h"
#include "protocol_fuzz_entry.h"

namespace sluice::brokerd::fuzz {
namespace {

std::vector<uint8_t> ReadFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), {}};
}

TEST(ProtocolFuzzCorpus, EverySeedRunsThroughTheEntryFunction) {
  size_t seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(BROKERD_PROTOCOL_FUZZ_CORPUS_DIR)) {
    const Status status = CheckControlStream(ReadFile(entry.path()));
    EXPECT_OK(status) << entry.path();
    ++seeds;
  }
  EXPECT_GE(seeds, 30u);
}

}  // namespace
}  // namespace sluice::brokerd::fuzz
