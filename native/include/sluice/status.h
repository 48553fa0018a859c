// Status and Result<T>: how every fallible libsluice call reports failure. Modelled on Arrow's, but
// with the segment's own error codes, which map one to one onto the C API's sluice_err_t.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "sluice/export.h"

namespace sluice {

// Keep in step with sluice_err_t in sluice.h: the C API casts one into the other.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,
  kIoError = 2,
  kCorrupt = 3,
  kTimedOut = 4,
  kEndOfStream = 5,
  kWriterDead = 6,
  kEvicted = 7,
  kNoFreeLane = 8,
  kTooLarge = 9,
  kInvalidState = 10,
  kAlreadyExists = 11,  // a file is in the way of the name asked for
  kNoSpace = 12,        // the segment's folder has no room for it (docs/formats.md, "File layout")
};

class [[nodiscard]] SLUICE_EXPORT Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return {}; }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status Corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
  static Status TimedOut(std::string m) { return {StatusCode::kTimedOut, std::move(m)}; }
  static Status EndOfStream(std::string m) { return {StatusCode::kEndOfStream, std::move(m)}; }
  static Status WriterDead(std::string m) { return {StatusCode::kWriterDead, std::move(m)}; }
  static Status Evicted(std::string m) { return {StatusCode::kEvicted, std::move(m)}; }
  static Status NoFreeLane(std::string m) { return {StatusCode::kNoFreeLane, std::move(m)}; }
  static Status TooLarge(std::string m) { return {StatusCode::kTooLarge, std::move(m)}; }
  static Status InvalidState(std::string m) { return {StatusCode::kInvalidState, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status NoSpace(std::string m) { return {StatusCode::kNoSpace, std::move(m)}; }
  // An I/O failure, with errno's text appended.
  static Status FromErrno(std::string_view what, int err);
  // A segment field that breaks the format; the message reads "field = value: expectation", the
  // shape the Java twin uses, so tests on both sides can look for the field's name.
  static Status BadField(std::string_view field, std::string_view value,
                         std::string_view expectation);
  static Status BadField(std::string_view field, uint64_t value, std::string_view expectation);

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit like arrow::Result
  Result(Status status) : value_(std::move(status)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(value_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(value_);
  }
  T& operator*() & { return std::get<T>(value_); }
  const T& operator*() const& { return std::get<T>(value_); }
  T* operator->() { return &std::get<T>(value_); }
  const T* operator->() const { return &std::get<T>(value_); }
  T MoveValue() { return std::move(std::get<T>(value_)); }

 private:
  std::variant<Status, T> value_;
};

}  // namespace sluice

#define SLUICE_CONCAT_INNER(a, b) a##b
#define SLUICE_CONCAT(a, b) SLUICE_CONCAT_INNER(a, b)

#define SLUICE_RETURN_NOT_OK(expr)                   \
  do {                                               \
    ::sluice::Status _sluice_status = (expr);        \
    if (!_sluice_status.ok()) return _sluice_status; \
  } while (false)

#define SLUICE_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                                 \
  if (!result.ok()) return result.status();             \
  lhs = result.MoveValue()

#define SLUICE_ASSIGN_OR_RETURN(lhs, expr) \
  SLUICE_ASSIGN_OR_RETURN_IMPL(SLUICE_CONCAT(_sluice_result_, __LINE__), lhs, expr)
