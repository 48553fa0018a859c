#include "daemon/log.h"

#include <unistd.h>

#include <chrono>
#include <ctime>

namespace sluice::brokerd {
namespace {

std::string_view NameOf(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}

void AppendValue(std::string& line, std::string_view value) {
  const bool plain = !value.empty() && value.find_first_of(" \"=\\\n\t") == std::string_view::npos;
  if (plain) {
    line += value;
    return;
  }
  line += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') {
      line += '\\';
      line += c;
    } else if (c == '\n') {
      line += "\\n";
    } else {
      line += c;
    }
  }
  line += '"';
}

std::string Now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[40];
  const size_t length = std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &utc);
  std::string text(buffer, length);
  text += '.';
  text += static_cast<char>('0' + millis / 100);
  text += static_cast<char>('0' + millis / 10 % 10);
  text += static_cast<char>('0' + millis % 10);
  text += 'Z';
  return text;
}

}  // namespace

std::string FormatLogLine(std::string_view timestamp, LogLevel level, std::string_view event,
                          std::initializer_list<LogField> fields) {
  std::string line = "ts=";
  line += timestamp;
  line += " level=";
  line += NameOf(level);
  line += " event=";
  AppendValue(line, event);
  for (const auto& [key, value] : fields) {
    line += ' ';
    line += key;
    line += '=';
    AppendValue(line, value);
  }
  return line;
}

void Log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields) {
  std::string line = FormatLogLine(Now(), level, event, fields);
  line += '\n';
  // One write(2) per line keeps lines whole when threads log at once.
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace sluice::brokerd
