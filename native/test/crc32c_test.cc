#include "sluice/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace sluice {
namespace {

TEST(Crc32c, StandardCheckValue) {
  const std::string check = "123456789";
  EXPECT_EQ(crc32c::Compute(check.data(), check.size()), 0xE3069283u);
  EXPECT_EQ(crc32c::ExtendPortable(0, check.data(), check.size()), 0xE3069283u);
}

TEST(Crc32c, KnownValues) {
  EXPECT_EQ(crc32c::Compute("", 0), 0u);
  const std::vector<uint8_t> zeros(32, 0);
  EXPECT_EQ(crc32c::Compute(zeros.data(), zeros.size()), 0x8A9136AAu);  // RFC 3720 B.4
  const std::vector<uint8_t> ones(32, 0xFF);
  EXPECT_EQ(crc32c::Compute(ones.data(), ones.size()), 0x62A8AB43u);
}

TEST(Crc32c, HardwareAndPortableAgreeAtEveryLengthAndSplit) {
  std::mt19937 random(7);
  std::vector<uint8_t> data(1000);
  for (auto& byte : data) byte = static_cast<uint8_t>(random());
  for (size_t length : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 999u, 1000u}) {
    const uint32_t whole = crc32c::ExtendPortable(0, data.data(), length);
    if (crc32c::HardwareAvailable()) {
      EXPECT_EQ(crc32c::ExtendHardware(0, data.data(), length), whole) << length;
    }
    const size_t half = length / 2;
    EXPECT_EQ(
        crc32c::Extend(crc32c::Extend(0, data.data(), half), data.data() + half, length - half),
        whole)
        << length;
  }
}

}  // namespace
}  // namespace sluice
