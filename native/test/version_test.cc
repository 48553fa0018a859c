#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "sluice/sluice.h"

TEST(Version, IsSemantic) {
  const std::string version = sluice_version();
  EXPECT_TRUE(std::regex_match(version, std::regex(R"(\d+\.\d+\.\d+)"))) << version;
}
