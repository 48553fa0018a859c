#include "daemon/segment_names.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "daemon/log.h"
#include "sluice/random_name.h"

namespace sluice::brokerd {
namespace {

// RUN only tells this daemon's files from those of an earlier one with the same PID; RANDOM is
// what nobody can guess.
constexpr size_t kRunBytes = 4;
constexpr size_t kRandomBytes = 8;
// A name is passed over only when a file is in the way; with 64 random bits that takes someone
// creating files at names they cannot know, so a few attempts are plenty.
constexpr int kNameAttempts = 8;

bool Running(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

}  // namespace

Result<SegmentNames> SegmentNames::ForThisRun() {
  return Create(::getpid(), [](size_t bytes) { return RandomHex(bytes); });
}

Result<SegmentNames> SegmentNames::Create(pid_t pid, RandomSource random) {
  SLUICE_ASSIGN_OR_RETURN(std::string run, random(kRunBytes));
  return SegmentNames(pid, std::move(run), std::move(random));
}

Result<std::string> SegmentNames::Next() {
  SLUICE_ASSIGN_OR_RETURN(const std::string part, random_(kRandomBytes));
  return std::string(kSegmentPrefix) + std::to_string(pid_) + "." + run_ + "." + part;
}

size_t SegmentNames::LongestPathIn(const std::string& dir) const {
  const size_t name =
      kSegmentPrefix.size() + std::to_string(pid_).size() + 1 + run_.size() + 1 + 2 * kRandomBytes;
  return dir.size() + 1 + name + std::string_view(".bell.tmp-").size() + 2 * kRandomBytes;
}

bool SegmentNames::LeftByAGoneDaemon(std::string_view file,
                                     const std::function<bool(pid_t)>& running) const {
  if (!file.starts_with(kSegmentPrefix)) return false;
  // PID, then RUN up to the next dot. Names of daemons before RUN existed
  // (sluice-brokerd.PID.ID) read as a RUN that is not this one's.
  const std::string_view rest = file.substr(kSegmentPrefix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  pid_t pid = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + dot, pid);
  if (error != std::errc() || end != rest.data() + dot || pid <= 0) return false;
  const std::string_view after = rest.substr(dot + 1);
  const std::string_view run = after.substr(0, after.find('.'));
  if (pid == pid_) return run != run_;
  return !running(pid);
}

void SegmentNames::RemoveLeftovers(const std::string& dir) const {
  DIR* listing = ::opendir(dir.c_str());
  if (listing == nullptr) return;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (!LeftByAGoneDaemon(name, Running)) continue;
    if (::unlink((dir + "/" + name).c_str()) == 0) {
      Log(LogLevel::kInfo, "stale_segment_removed", {{"name", name}});
    } else {
      // Another user's file, say, in a sticky folder: it stays, and names are random, so it is
      // in nobody's way.
      Log(LogLevel::kWarn, "stale_segment_kept", {{"name", name}, {"error", std::strerror(errno)}});
    }
  }
  ::closedir(listing);
}

Result<CreatedSegment> CreateSegment(WriterOptions options, const std::string& dir,
                                     SegmentNames& names) {
  for (int attempt = 1;; ++attempt) {
    SLUICE_ASSIGN_OR_RETURN(std::string name, names.Next());
    options.name = dir + "/" + name;
    Result<std::unique_ptr<SegmentWriter>> writer = SegmentWriter::Create(options);
    if (writer.ok()) return CreatedSegment{std::move(name), writer.MoveValue()};
    if (writer.status().code() != StatusCode::kAlreadyExists || attempt == kNameAttempts) {
      return writer.status();
    }
    Log(LogLevel::kWarn, "segment_name_taken", {{"name", name}, {"dir", dir}});
  }
}

}  // namespace sluice::brokerd
