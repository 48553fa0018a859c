// Replays the produce fuzzer's seed corpus through its entry function, built with the project's
// compiler, so every CI run checks the daemon's object checks and their properties on real
// producer objects (fuzz/README.md). A seed's name says what the daemon must make of it:
// accepted-*, or refused-* (kCorrupt, which ends the producer).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "gtest_util.h"
#include "produce_fuzz_entry.h"

namespace sluice::brokerd::fuzz {
namespace {

std::vector<uint8_t> ReadFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), {}};
}

TEST(ProduceFuzzCorpus, EverySeedIsAcceptedOrRefusedAsItsNameSays) {
  size_t accepted = 0, refused = 0;
  for (const auto& entry : std::filesystem::directory_iterator(BROKERD_PRODUCE_FUZZ_CORPUS_DIR)) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    ASSERT_TRUE(name.starts_with("accepted-") || name.starts_with("refused-"));
    ASSERT_OK_AND_ASSIGN(const bool taken, CheckProducerObject(ReadFile(entry.path())));
    EXPECT_EQ(taken, name.starts_with("accepted-"));
    ++(taken ? accepted : refused);
  }
  EXPECT_GE(accepted, 5u);
  EXPECT_GE(refused, 10u);
}

}  // namespace
}  // namespace sluice::brokerd::fuzz
