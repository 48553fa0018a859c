// The names of the daemon's segments in sluice.segment.dir (docs/brokerd.md, "Segment names"):
// sluice-brokerd.PID.RUN.RANDOM, their doorbells NAME.bell and the temporary names of both.
//
// The folder is shared with every user of the host (/dev/shm), so a name anyone can predict can be
// taken first, and a daemon restarted in a container gets the PID of the one it replaces while
// that one's files are still there. Hence RANDOM, drawn per segment from the kernel's random
// source, and a file in the way of a name is passed over for a fresh one. PID and RUN, drawn
// once per daemon run, say whose the files are.
//
// Whether that daemon still runs is proven by a lock, not by its PID: containers sharing one
// /dev/shm each have a PID namespace of their own, where a live daemon's PID may not exist or
// may be this daemon's. Before its first segment a run holds an exclusive flock(2) on its lock
// file, sluice-brokerd.PID.RUN.lock, for as long as it runs (the kernel lets go when the process
// dies, however it dies); a daemon removes another run's files only once it can lock that file
// itself. Files of a run without a lock file are those of daemons from before run locks, and
// are told by their PID as they were (docs/brokerd.md, "Segment names").
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/segment_writer.h"
#include "sluice/status.h"

namespace sluice::brokerd {

inline constexpr std::string_view kSegmentPrefix = "sluice-brokerd.";

class SegmentNames {
 public:
  // `bytes` random bytes as lowercase hex digits: sluice::RandomHex, or a script in tests.
  using RandomSource = std::function<Result<std::string>(size_t bytes)>;

  // This process's names: its PID, a RUN token drawn now, RANDOM parts from getrandom(2).
  static Result<SegmentNames> ForThisRun();
  static Result<SegmentNames> Create(pid_t pid, RandomSource random);

  const std::string& run() const { return run_; }

  // A name no segment has had: sluice-brokerd.PID.RUN.RANDOM.
  Result<std::string> Next();
  // How long the longest path of a segment's files in `dir` is: its doorbell's temporary name,
  // NAME.bell.tmp-RANDOM.
  size_t LongestPathIn(const std::string& dir) const;

  // Creates this run's lock file in `dir` and holds its lock until the names are destroyed,
  // which removes it; the second call on does nothing. The file appears already locked (it is
  // locked under a name outside the daemons' and linked into place), so no other daemon can take
  // this run for a gone one. CreateSegment calls it before the first segment.
  Status HoldRunLock(const std::string& dir);

  // "sluice-brokerd.PID.RUN", the run a file in the segment folder belongs to, for a segment,
  // doorbell, temporary or lock file of a daemon; empty for other programs' files. The names
  // daemons gave before runs were named (sluice-brokerd.PID.ID) read as a run of their own.
  static std::string_view RunOf(std::string_view file);

  // For a run without a lock file (a daemon from before run locks): whether `file` is a file of
  // a daemon that is gone, one whose PID does not run here (per `running`) or this daemon's PID
  // under another RUN. This run's files and other programs' are never.
  bool LeftByAGoneDaemon(std::string_view file, const std::function<bool(pid_t)>& running) const;

  // Takes this run's lock in `dir` (HoldRunLock; a failure is logged, and CreateSegment fails
  // with it later), so that this run is told live before its RUN is known to anyone, then
  // removes from `dir` the files of runs that are gone, logging each: a run whose lock file this
  // daemon can lock (its lock file last, while locked), or one without a lock file that
  // LeftByAGoneDaemon. A run whose lock is held is a live daemon's, whatever its PID, and kept.
  void RemoveLeftovers(const std::string& dir);

 private:
  // The run's lock file, open and locked; unlinked and closed when destroyed.
  class RunLock;

  SegmentNames(pid_t pid, std::string run, RandomSource random);

  pid_t pid_;
  std::string run_;
  RandomSource random_;
  std::shared_ptr<RunLock> lock_;
};

inline constexpr std::string_view kRunLockSuffix = ".lock";

struct CreatedSegment {
  std::string name;
  std::unique_ptr<SegmentWriter> writer;
};

// Creates a segment in `dir` with `options` under the next name of `names`; a file in the way
// (kAlreadyExists) is logged and passed over for another name, a few times.
Result<CreatedSegment> CreateSegment(WriterOptions options, const std::string& dir,
                                     SegmentNames& names);

}  // namespace sluice::brokerd
