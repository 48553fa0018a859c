// sluice/limits.h's name alphabet: the characters IsNameCharacter lets through are the ones
// kNameAlphabet names, which the refusals quote and Python's twin copies.
#include "sluice/limits.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::limits {
namespace {

// The characters of a bracket expression such as "A-Za-z0-9._-": ranges, then single characters
// (a '-' last is itself).
std::string Expand(std::string_view alphabet) {
  std::string characters;
  for (size_t i = 0; i < alphabet.size(); ++i) {
    if (i + 2 < alphabet.size() && alphabet[i + 1] == '-') {
      for (char c = alphabet[i]; c <= alphabet[i + 2]; ++c) characters.push_back(c);
      i += 2;
    } else {
      characters.push_back(alphabet[i]);
    }
  }
  return characters;
}

TEST(LimitsTest, IsNameCharacterAcceptsExactlyTheNamedAlphabet) {
  const std::string named = Expand(kNameAlphabet);
  EXPECT_EQ(named.size(), 26u + 26u + 10u + 3u) << named;
  for (int byte = 0; byte < 256; ++byte) {
    const char c = static_cast<char>(byte);
    EXPECT_EQ(IsNameCharacter(c), named.find(c) != std::string::npos) << "byte " << byte;
  }
}

TEST(LimitsTest, TheLargestSlotIsAlignedAndFitsOneJavaMapping) {
  EXPECT_EQ(kMaxSlotSize % kSlotAlignment, 0u);
  EXPECT_EQ(kMinSlotSize % kSlotAlignment, 0u);
  EXPECT_LE(kMaxSlotSize, uint64_t{0x7fffffff});
}

}  // namespace
}  // namespace sluice::limits
