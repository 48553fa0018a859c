// A reader of a segment: opens and validates it, attaches to a free lane, takes the objects the
// writer publishes to that lane in order, releases them, and detaches.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "sluice/doorbell.h"
#include "sluice/export.h"
#include "sluice/idle_strategy.h"
#include "sluice/liveness.h"
#include "sluice/mapping.h"
#include "sluice/segment_image.h"
#include "sluice/status.h"

namespace sluice {

// The file a segment's path named when it was opened, by device and inode: a path may later name
// another file, and only these tell whether it still names the one mapped.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

struct ReaderOptions {
  // How long Open waits for the segment file to appear.
  std::chrono::nanoseconds open_timeout = std::chrono::nanoseconds(0);
  // Connect to the writer's doorbell; without it a parked reader sleeps with a backoff. A
  // doorbell that is missing or refuses, or that is no socket of the writer's where the reader
  // does not trust it (Open of a segment in a folder), is passed over so; one that takes no
  // connection within DoorbellClient::kConnectTimeout (a full backlog: a writer that never
  // accepts) fails Open with kTimedOut, rather than stall the reader's thread for as long as the
  // writer pleases.
  bool doorbell = true;
  IdleStrategy::Options idle;
  // Map the file with Mapping::MapGuarded: a writer the reader does not trust (a daemon reading a
  // producer's segment, docs/brokerd.md, "Local producers") may truncate its file, which would
  // kill the reader with SIGBUS at its next access; guarded, the segment reads as zeros from
  // then on, which no object or lane state passes for long, and truncated() says why.
  bool guard_truncation = false;
};

class SLUICE_EXPORT SegmentReader {
 public:
  static constexpr std::chrono::nanoseconds kForever = std::chrono::nanoseconds::max();

  // Maps /dev/shm/NAME (or the path NAME, when it starts with '/'), validates its header and
  // attaches to a free lane (kNoFreeLane when every lane is taken).
  static Result<std::unique_ptr<SegmentReader>> Open(const std::string& name,
                                                     const ReaderOptions& options = {});
  // The same for a writer the reader does not trust, for the file open at `fd`, which the caller
  // opened read-write (a reader writes its lane's words) and Open closes whatever the outcome;
  // `path` names it in errors. A daemon that reads a segment a client named opens it itself, by
  // name in a folder of its own with O_NOFOLLOW, and checks its owner on that descriptor; its
  // doorbell is likewise a name in that folder, connected only if it is a socket of the owner
  // (DoorbellClient::ConnectInFolder; docs/brokerd.md, "Local producers").
  static Result<std::unique_ptr<SegmentReader>> Open(int fd, const std::string& path,
                                                     const DoorbellInFolder& doorbell,
                                                     const ReaderOptions& options = {});
  ~SegmentReader();  // detaches; objects not released yet are reclaimed by the writer
  SegmentReader(const SegmentReader&) = delete;
  SegmentReader& operator=(const SegmentReader&) = delete;

  // The next object, waiting up to `timeout` (kTimedOut). kEndOfStream once the writer closed
  // and every object was taken; kWriterDead when the writer stopped heartbeating; kEvicted when
  // the writer took this reader's lane back; kCorrupt for state that breaks the format.
  // The object's bytes stay valid until it is released.
  Result<ObjectView> Next(std::chrono::nanoseconds timeout);
  // Ends the wait of a Next that is waiting, or of the next one to wait, with kTimedOut at once;
  // called from any thread (the daemon stopping a producer whose thread parks on its segment
  // for as long as the producer is idle, docs/brokerd.md "Local producers").
  void Interrupt();
  // Gives the object's slot back (kEvicted when the lane was taken back meanwhile: the bytes
  // read from it may have been overwritten). It may be called from other threads, also while one
  // waits in Next (the daemon's local producers give a slot back from whichever subscription
  // drops its last chunk): it is one atomic operation on the slot's state word and a ring of the
  // doorbell, whose socket stays open until Detach. Not concurrently with Detach.
  Status Release(const ObjectView& object);
  // Leaves the lane; later calls fail with kInvalidState.
  void Detach();

  const SegmentHeader& header() const { return header_; }
  uint32_t lane() const { return lane_; }
  // The file mapped, from fstat of the descriptor Open mapped.
  const FileIdentity& file() const { return file_; }
  // ReaderOptions::guard_truncation: the file was truncated under the mapping, which reads as
  // zeros from then on; whatever Next or an object's bytes said since is none of the writer's.
  bool truncated() const { return mapping_.truncated(); }
  // Why no doorbell was connected at Open (missing, refusing, no socket of the writer's); OK when
  // one was, or when ReaderOptions::doorbell was off.
  const Status& doorbell_status() const { return doorbell_status_; }

 private:
  SegmentReader(const ReaderOptions& options, FileIdentity file, Mapping mapping,
                SegmentHeader header);
  // Maps and validates the segment open at `fd`, which it closes, without attaching.
  static Result<std::unique_ptr<SegmentReader>> Map(int fd, const std::string& path,
                                                    const ReaderOptions& options);
  // Attaches to a free lane and connects its doorbell with `connect_doorbell(lane)`.
  Status Attach(const std::function<Result<DoorbellClient>(uint32_t lane)>& connect_doorbell);
  Status CheckAttached() const;
  // The object at ring position `position`, checked against its descriptor.
  Result<ObjectView> Take(uint64_t position);
  uint8_t* lane_base() const { return mapping_.data() + header_.layout.LaneOffset(lane_); }

  ReaderOptions options_;
  FileIdentity file_;
  Mapping mapping_;
  SegmentHeader header_;
  uint32_t lane_ = 0;
  uint32_t epoch_ = 0;
  bool attached_ = false;
  std::optional<DoorbellClient> doorbell_;
  Status doorbell_status_;
  std::unique_ptr<Heartbeat> heartbeat_;
  std::atomic<bool> interrupted_{false};
  int wake_fd_ = -1;  // an eventfd a parked Next polls beside its doorbell, for Interrupt
};

}  // namespace sluice
