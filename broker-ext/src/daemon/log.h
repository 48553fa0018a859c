// Structured logs: one logfmt line per event on stderr (`ts=… level=info event=ready socket=…`),
// so they can be grepped by people and parsed by collectors and by the tests that start the
// daemon. Thread-safe: a line is written with one call.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace sluice::brokerd {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

using LogField = std::pair<std::string_view, std::string>;

// `event` is a short snake_case name; a field value with spaces, quotes or `=` is quoted.
void Log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields = {});

// The logfmt line, without its trailing newline (for tests).
std::string FormatLogLine(std::string_view timestamp, LogLevel level, std::string_view event,
                          std::initializer_list<LogField> fields);

}  // namespace sluice::brokerd
