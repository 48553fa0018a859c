// The names of the daemon's segments in sluice.segment.dir (docs/brokerd.md, "Segments"):
// sluice-brokerd.PID.RUN.RANDOM, their doorbells NAME.bell and the temporary names of both.
//
// The folder is shared with every local user (/dev/shm), so a name anyone can predict can be
// taken first, and a daemon restarted in a container gets the PID of the one it replaces while
// that one's files are still there. Hence RANDOM, drawn per segment from the kernel's random
// source, and a file in the way of a name is passed over for a fresh one. PID and RUN, drawn
// once per daemon run, say whose the files are: a daemon removes the files of PIDs that no
// longer run and those of its own PID from another run.
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

  // Whether `file`, a name in the segment folder, is a segment, doorbell or temporary file of a
  // daemon that is gone: one whose PID does not run (per `running`), or this daemon's PID under
  // another RUN. Files of other programs are never.
  bool LeftByAGoneDaemon(std::string_view file, const std::function<bool(pid_t)>& running) const;

  // Removes the files LeftByAGoneDaemon from `dir`, logging each.
  void RemoveLeftovers(const std::string& dir) const;

 private:
  SegmentNames(pid_t pid, std::string run, RandomSource random)
      : pid_(pid), run_(std::move(run)), random_(std::move(random)) {}

  pid_t pid_;
  std::string run_;
  RandomSource random_;
};

struct CreatedSegment {
  std::string name;
  std::unique_ptr<SegmentWriter> writer;
};

// Creates a segment in `dir` with `options` under the next name of `names`; a file in the way
// (kAlreadyExists) is logged and passed over for another name, a few times.
Result<CreatedSegment> CreateSegment(WriterOptions options, const std::string& dir,
                                     SegmentNames& names);

}  // namespace sluice::brokerd
