#include "copy_bytes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace sluice::internal {
namespace {

// Every pair of source and destination addresses modulo 64, for sizes on both sides of where the
// vector loop takes over and with every tail length the loop can leave, cached and streaming: the
// bytes copied are the source's, and the bytes around the destination are untouched.
class CopyBytesTest : public testing::TestWithParam<bool> {};

TEST_P(CopyBytesTest, CopiesExactlyTheBytesAtEveryAlignment) {
  constexpr size_t kGuard = 64;
  std::mt19937 random(7);
  std::vector<uint8_t> source(70'000 + 2 * kGuard);
  for (auto& byte : source) byte = static_cast<uint8_t>(random());
  for (size_t size : {0u, 1u, 15u, 16u, 63u, 4095u, 4096u, 4097u, 4111u, 4159u, 65'536u, 65'599u}) {
    for (size_t from = 0; from < 64; ++from) {
      for (size_t to = 0; to < 64; to += (size < 4096 ? 1 : 3)) {
        std::vector<uint8_t> target(size + 2 * kGuard + 64, 0xA5);
        CopyBytes(target.data() + kGuard + to, source.data() + from, size, GetParam());
        FenceCopies();
        ASSERT_TRUE(std::equal(source.begin() + static_cast<ptrdiff_t>(from),
                               source.begin() + static_cast<ptrdiff_t>(from + size),
                               target.begin() + static_cast<ptrdiff_t>(kGuard + to)))
            << "size " << size << ", source at " << from << ", destination at " << to;
        for (size_t i = 0; i < kGuard + to; ++i) ASSERT_EQ(target[i], 0xA5) << "before, " << i;
        for (size_t i = kGuard + to + size; i < target.size(); ++i) {
          ASSERT_EQ(target[i], 0xA5) << "after, " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, CopyBytesTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& param) {
                           return param.param ? "Streaming" : "Cached";
                         });

TEST(StreamingPays, NotForARingThatFitsAnyCache) { EXPECT_FALSE(StreamingPays(64 << 10)); }

}  // namespace
}  // namespace sluice::internal
