#include "daemon/segment_names.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

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

// Where a run's lock file is made before it is linked into place, locked: outside the daemons'
// names, so no cleanup ever looks at it.
constexpr std::string_view kRunLockTemporaryPrefix = ".sluice-brokerd-lock";

// Whether another run's lock file is held. Gone: this daemon holds a shared lock on `fd`, so the
// run cannot come back while its files are removed.
enum class RunState { kLive, kGone, kUnknown };

RunState LockRunOf(int fd) {
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) return RunState::kGone;
  return errno == EWOULDBLOCK ? RunState::kLive : RunState::kUnknown;
}

void Remove(const std::string& dir, const std::string& name) {
  if (::unlink((dir + "/" + name).c_str()) == 0 || errno == ENOENT) {
    Log(LogLevel::kInfo, "stale_segment_removed", {{"name", name}});
  } else {
    // Another user's file, say, in a sticky folder: it stays, and names are random, so it is
    // in nobody's way.
    Log(LogLevel::kWarn, "stale_segment_kept", {{"name", name}, {"error", std::strerror(errno)}});
  }
}

}  // namespace

class SegmentNames::RunLock {
 public:
  RunLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~RunLock() {
    // Unlinked while still locked: a daemon that finds it unlocked finds it gone too.
    ::unlink(path_.c_str());
    ::close(fd_);
  }
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_;
  std::string path_;
};

SegmentNames::SegmentNames(pid_t pid, std::string run, RandomSource random)
    : pid_(pid), run_(std::move(run)), random_(std::move(random)) {}

Status SegmentNames::HoldRunLock(const std::string& dir) {
  if (lock_ != nullptr) return Status::OK();
  const std::string path = dir + "/" + std::string(kSegmentPrefix) + std::to_string(pid_) + "." +
                           run_ + std::string(kRunLockSuffix);
  SLUICE_ASSIGN_OR_RETURN(const std::string part, random_(kRandomBytes));
  const std::string temporary = dir + "/" + std::string(kRunLockTemporaryPrefix) + "." + part;
  const int fd =
      ::open(temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::FromErrno(
        "segment folder " + dir + ": cannot create the run's lock file " + temporary, errno);
  }
  int linked = -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) linked = ::link(temporary.c_str(), path.c_str());
  const int err = errno;
  ::unlink(temporary.c_str());
  if (linked != 0) {
    ::close(fd);
    // A name drawn at start that someone took before this run made its first segment.
    if (err == EEXIST) {
      return Status::AlreadyExists("segment folder " + dir + ": the run's lock file " + path +
                                   " exists already; another program made it");
    }
    return Status::FromErrno("segment folder " + dir + ": cannot lock the run's lock file " + path,
                             err);
  }
  lock_ = std::make_shared<RunLock>(fd, path);
  return Status::OK();
}

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

std::string_view SegmentNames::RunOf(std::string_view file) {
  if (!file.starts_with(kSegmentPrefix)) return {};
  // PID, then RUN up to the next dot.
  const std::string_view rest = file.substr(kSegmentPrefix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  pid_t pid = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + dot, pid);
  if (error != std::errc() || end != rest.data() + dot || pid <= 0) return {};
  const size_t run_end = rest.find('.', dot + 1);
  return file.substr(
      0, kSegmentPrefix.size() + (run_end == std::string_view::npos ? rest.size() : run_end));
}

bool SegmentNames::LeftByAGoneDaemon(std::string_view file,
                                     const std::function<bool(pid_t)>& running) const {
  const std::string_view run = RunOf(file);
  if (run.empty()) return false;
  const std::string_view pid_and_run = run.substr(kSegmentPrefix.size());
  const size_t dot = pid_and_run.find('.');
  pid_t pid = 0;
  std::from_chars(pid_and_run.data(), pid_and_run.data() + dot, pid);
  if (pid == pid_) return pid_and_run.substr(dot + 1) != run_;
  return !running(pid);
}

void SegmentNames::RemoveLeftovers(const std::string& dir) {
  if (const Status held = HoldRunLock(dir); !held.ok()) {
    Log(LogLevel::kError, "run_lock_failed", {{"error", held.message()}});
  }
  DIR* listing = ::opendir(dir.c_str());
  if (listing == nullptr) return;
  // Each run's files, its lock file (if it has one) apart.
  struct Files {
    std::vector<std::string> names;
    bool locked = false;
  };
  std::map<std::string, Files> runs;
  const std::string own = std::string(kSegmentPrefix) + std::to_string(pid_) + "." + run_;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name = entry->d_name;
    const std::string_view run = RunOf(name);
    if (run.empty() || run == own) continue;
    Files& files = runs[std::string(run)];
    if (name.size() == run.size() + kRunLockSuffix.size() && name.ends_with(kRunLockSuffix)) {
      files.locked = true;
    } else {
      files.names.emplace_back(name);
    }
  }
  ::closedir(listing);

  for (const auto& [run, files] : runs) {
    if (!files.locked) {
      for (const std::string& name : files.names) {
        if (LeftByAGoneDaemon(name, Running)) Remove(dir, name);
      }
      continue;
    }
    const std::string lock_name = run + std::string(kRunLockSuffix);
    const int fd = ::open((dir + "/" + lock_name).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    const RunState state = fd < 0 ? RunState::kUnknown : LockRunOf(fd);
    if (state == RunState::kGone) {
      for (const std::string& name : files.names) Remove(dir, name);
      Remove(dir, lock_name);
    } else if (state == RunState::kUnknown) {
      // Another user's lock file, unreadable: nothing proves its run gone.
      Log(LogLevel::kWarn, "stale_segment_kept",
          {{"name", lock_name}, {"error", std::strerror(errno)}});
    }
    if (fd >= 0) ::close(fd);
  }
}

Result<CreatedSegment> CreateSegment(WriterOptions options, const std::string& dir,
                                     SegmentNames& names) {
  SLUICE_RETURN_NOT_OK(names.HoldRunLock(dir));
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
