// Mentions: whether an error message says something, for the tests that check what a refusal or
// a failed decode names (the field, the setting, the value) without spelling out all of it.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

namespace sluice::brokerd {

// Whether `message` says `text`; shows the message when not.
inline ::testing::AssertionResult Mentions(std::string_view message, std::string_view text) {
  if (message.find(text) != std::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << '"' << message << "\" does not mention \"" << text << '"';
}

}  // namespace sluice::brokerd
