// GoogleTest helpers for libsluice's Status and Result, shaped like Arrow's
// arrow/testing/gtest_util.h, so that a failed call says which call and what its status was;
// and Eventually, the one wait for a condition the tests poll. Header-only, so broker-ext's
// tests share it through native/test on their include path (as they do small_tmpfs.h).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "sluice/status.h"

namespace sluice::testing {

// The status of a Status or a Result, libsluice's or Arrow's (tests check both kinds of calls).
template <typename S>
requires requires(const S& result) { result.status().ok(); }
auto StatusOf(const S& result) { return result.status(); }
template <typename S>
requires(!requires(const S& status) { status.status(); }) S StatusOf(const S& status) {
  return status;
}

// Polls `condition` every `interval` until it holds or `timeout` passes. The failure names what
// was awaited; callers stream what they saw last after it.
inline ::testing::AssertionResult Eventually(
    std::string_view awaited, const std::function<bool()>& condition,
    std::chrono::milliseconds timeout = std::chrono::seconds(10),
    std::chrono::milliseconds interval = std::chrono::milliseconds(1)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return ::testing::AssertionFailure()
             << "not within " << timeout.count() << " ms: " << awaited;
    }
    std::this_thread::sleep_for(interval);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace sluice::testing

// Fails the test (ASSERT_OK) or records a failure (EXPECT_OK) when `expr`, a Status or a Result,
// is not ok, printing the expression and the status. Both take a further message with <<, on a
// line of its own. The switch keeps an `else` after the macro from binding to its `if`, as
// GoogleTest's own do.
#define SLUICE_CHECK_OK(value, text, on_failure)                                               \
  switch (0)                                                                                   \
  case 0:                                                                                      \
  default:                                                                                     \
    if (const auto _sluice_status = ::sluice::testing::StatusOf(value); _sluice_status.ok()) { \
    } else                                                                                     \
      on_failure() << "'" << text << "' failed with " << _sluice_status.ToString() << '\n'

#define ASSERT_OK(expr) SLUICE_CHECK_OK((expr), #expr, FAIL)
#define EXPECT_OK(expr) SLUICE_CHECK_OK((expr), #expr, ADD_FAILURE)

// Fails the test (ASSERT_RAISES) or records a failure (EXPECT_RAISES) unless `expr`, a Status or
// a Result, failed with StatusCode::k<code> (`ASSERT_RAISES(InvalidArgument, Parse(text))`, as
// Arrow's ASSERT_RAISES), printing the expression and the status it came to, message included,
// so that a failure says why. The _WITH_MESSAGE forms also want `words` in the message.
#define SLUICE_CHECK_RAISES(status_code, words, value, text, on_failure)                       \
  switch (0)                                                                                   \
  case 0:                                                                                      \
  default:                                                                                     \
    if (const auto _sluice_status = ::sluice::testing::StatusOf(value);                        \
        _sluice_status.code() == ::sluice::StatusCode::k##status_code &&                       \
        _sluice_status.message().find(words) != std::string::npos) {                           \
    } else                                                                                     \
      on_failure() << "'" << text << "' was to fail with "                                     \
                   << ::sluice::Status(::sluice::StatusCode::k##status_code, words).ToString() \
                   << ", and came to " << _sluice_status.ToString() << '\n'

#define ASSERT_RAISES(code, expr) SLUICE_CHECK_RAISES(code, "", (expr), #expr, FAIL)
#define EXPECT_RAISES(code, expr) SLUICE_CHECK_RAISES(code, "", (expr), #expr, ADD_FAILURE)
#define ASSERT_RAISES_WITH_MESSAGE(code, words, expr) \
  SLUICE_CHECK_RAISES(code, words, (expr), #expr, FAIL)
#define EXPECT_RAISES_WITH_MESSAGE(code, words, expr) \
  SLUICE_CHECK_RAISES(code, words, (expr), #expr, ADD_FAILURE)

#define SLUICE_ASSERT_OK_AND_ASSIGN_IMPL(result, lhs, rexpr) \
  auto result = (rexpr);                                     \
  SLUICE_CHECK_OK(result, #rexpr, FAIL);                     \
  lhs = std::move(*result)

// Asserts that `rexpr`, a Result, is ok and moves its value into `lhs` (a declaration such as
// `auto reader` or an existing variable).
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  SLUICE_ASSERT_OK_AND_ASSIGN_IMPL(SLUICE_CONCAT(_sluice_assert_result_, __COUNTER__), lhs, rexpr)
