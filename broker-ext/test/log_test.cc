#include "daemon/log.h"

#include <gtest/gtest.h>

namespace sluice::brokerd {
namespace {

TEST(Log, PlainValuesStayBareAndOthersAreQuotedAndEscaped) {
  EXPECT_EQ(FormatLogLine("T", LogLevel::kWarn, "error_sent",
                          {{"code", "BAD_FRAME"},
                           {"message", "frame_length = 3: \"short\"\nend"},
                           {"empty", ""},
                           {"path", "a=b"}}),
            "ts=T level=warn event=error_sent code=BAD_FRAME "
            "message=\"frame_length = 3: \\\"short\\\"\\nend\" empty=\"\" path=\"a=b\"");
}

}  // namespace
}  // namespace sluice::brokerd
