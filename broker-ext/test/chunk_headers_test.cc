#include "ordering/chunk_headers.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "gtest_util.h"

namespace sluice::brokerd {
namespace {

using Headers = std::vector<KafkaHeader>;

Headers Valid(std::string_view seq) {
  return {{"sluice.job", "job-1"}, {"sluice.stream", "cyan"}, {"sluice.seq", seq}};
}

TEST(ChunkHeaders, ParsesTheFourHeadersAndIgnoresOthers) {
  Headers headers = Valid("42");
  headers.push_back({"app", "x"});
  headers.push_back({"sluice.eos", "true"});
  auto id = ParseChunkHeaders(headers);
  ASSERT_OK(id);
  EXPECT_EQ(*id, (ChunkId{"job-1", "cyan", 42, true}));
}

TEST(ChunkHeaders, WithoutEosTheChunkIsNotTheLast) {
  auto id = ParseChunkHeaders(Valid("0"));
  ASSERT_OK(id);
  EXPECT_FALSE(id->eos);
  EXPECT_EQ(id->seq, 0u);
}

TEST(ChunkHeaders, SeqCoversTheWholeUnsignedRange) {
  auto max = ParseSeq("18446744073709551615");
  ASSERT_OK(max);
  EXPECT_EQ(*max, UINT64_MAX);
}

TEST(ChunkHeaders, MalformedSeqIsRefusedNamingTheHeader) {
  for (std::string_view bad : {"", "-1", "+1", "01", "1.5", "12a", " 1", "0x10",
                               "18446744073709551616", "99999999999999999999"}) {
    auto id = ParseChunkHeaders(Valid(bad));
    ASSERT_RAISES(InvalidArgument, id) << "accepted \"" << bad << "\"";
    EXPECT_EQ(id.status().message().rfind("sluice.seq: ", 0), 0u) << id.status().message();
  }
}

TEST(ChunkHeaders, MissingOrRepeatedHeadersAreRefused) {
  struct Case {
    Headers headers;
    std::string_view named;
  };
  const std::vector<Case> cases = {
      {{{"sluice.stream", "s"}, {"sluice.seq", "1"}}, "sluice.job: missing"},
      {{{"sluice.job", "j"}, {"sluice.seq", "1"}}, "sluice.stream: missing"},
      {{{"sluice.job", "j"}, {"sluice.stream", "s"}}, "sluice.seq: missing"},
      {{{"sluice.job", "j"}, {"sluice.stream", "s"}, {"sluice.seq", "1"}, {"sluice.seq", "2"}},
       "sluice.seq: repeated"},
      {{{"sluice.job", "j"}, {"sluice.stream", "s"}, {"sluice.seq", "", false}},
       "sluice.seq: null value"},
      {{{"sluice.job", "j"}, {"sluice.stream", "s"}, {"sluice.seq", "1"}, {"sluice.eos", "yes"}},
       "sluice.eos: \"yes\" is not \"true\""},
  };
  for (const Case& c : cases) {
    auto id = ParseChunkHeaders(c.headers);
    ASSERT_RAISES(InvalidArgument, id) << c.named;
    EXPECT_EQ(id.status().message(), c.named);
  }
}

// Job ids and stream names travel on into readers' file names, logs and metric labels
// (docs/formats.md, "Chunk record").
TEST(ChunkHeaders, AJobOrStreamOutsideTheNamesAlphabetIsRefusedNamingTheHeader) {
  const std::string too_long(129, 'a');
  for (const std::string_view header : {kJobHeader, kStreamHeader}) {
    for (const std::string_view bad :
         {std::string_view(""), std::string_view("../../etc"), std::string_view("a\0b", 3),
          std::string_view("a b"), std::string_view(too_long)}) {
      Headers headers = Valid("1");
      for (KafkaHeader& h : headers) {
        if (h.key == header) h.value = bad;
      }
      auto id = ParseChunkHeaders(headers);
      ASSERT_RAISES(InvalidArgument, id) << header << " accepted \"" << bad << "\"";
      EXPECT_EQ(id.status().message().rfind(std::string(header) + " = ", 0), 0u)
          << id.status().message();
    }
  }
  // The longest name, and every byte of the alphabet, pass.
  Headers headers = {{kJobHeader, std::string_view(too_long).substr(1)},
                     {kStreamHeader, "AZaz09._-"},
                     {kSeqHeader, "1"}};
  EXPECT_OK(ParseChunkHeaders(headers));
}

TEST(ChunkHeaders, AQuotedValueIsBounded) {
  const std::string long_value(1000, '7');
  auto id = ParseChunkHeaders(Valid(long_value + "x"));
  ASSERT_RAISES(InvalidArgument, id);
  EXPECT_LT(id.status().message().size(), 120u);
}

}  // namespace
}  // namespace sluice::brokerd
