// Replays the fuzzer's seed corpus through its entry function, built with the project's compiler,
// so every CI run exercises the fuzzed path on the inputs that matter most.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "segment_fuzz_entry.h"

namespace {

TEST(FuzzCorpus, EverySeedRunsThroughTheEntryFunction) {
  size_t seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SLUICE_FUZZ_CORPUS_DIR)) {
    std::ifstream file(entry.path(), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), {});
    EXPECT_EQ(sluice::fuzz::FuzzSegmentImage(bytes.data(), bytes.size()), 0) << entry.path();
    ++seeds;
  }
  EXPECT_GE(seeds, 10u);
}

}  // namespace
