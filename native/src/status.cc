#include "sluice/status.h"

#include <cstring>

namespace sluice {

Status Status::FromErrno(std::string_view what, int err) {
  return {StatusCode::kIoError, std::string(what) + ": " + std::strerror(err)};
}

Status Status::BadField(std::string_view field, std::string_view value,
                        std::string_view expectation) {
  std::string message(field);
  message.append(" = ").append(value).append(": ").append(expectation);
  return Corrupt(std::move(message));
}

Status Status::BadField(std::string_view field, uint64_t value, std::string_view expectation) {
  return BadField(field, std::to_string(value), expectation);
}

std::string Status::ToString() const {
  static constexpr const char* kNames[] = {
      "OK",           "Invalid argument", "I/O error",     "Corrupt segment",
      "Timed out",    "End of stream",    "Writer dead",   "Evicted",
      "No free lane", "Too large",        "Invalid state", "Already exists",
      "No space"};
  static_assert(std::size(kNames) == static_cast<size_t>(StatusCode::kNoSpace) + 1,
                "a name for every StatusCode");
  std::string text = kNames[static_cast<int>(code_)];
  if (!message_.empty()) text.append(": ").append(message_);
  return text;
}

}  // namespace sluice
