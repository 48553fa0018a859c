// The writer of a segment (docs/formats.md "Segment"): creates it, hands out free slots
// (credits), publishes sealed objects to the attached readers' lanes, reclaims the slots of
// readers that left or died, and closes it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sluice/batch_builder.h"
#include "sluice/doorbell.h"
#include "sluice/export.h"
#include "sluice/file_access.h"
#include "sluice/idle_strategy.h"
#include "sluice/layout.h"
#include "sluice/liveness.h"
#include "sluice/mapping.h"
#include "sluice/status.h"

namespace sluice {

struct WriterOptions {
  // /dev/shm/NAME, or a path when it starts with '/'.
  std::string name;
  ObjectKind kind = ObjectKind::kRecords;
  uint32_t slot_count = 64;
  uint64_t slot_size = 1 << 20;
  uint32_t lane_count = 4;
  std::chrono::nanoseconds liveness_timeout = std::chrono::seconds(5);
  bool checksums = true;
  // Listen on <path>.bell; without it a parked reader sleeps with a backoff instead.
  bool doorbell = true;
  // The group that may open the segment and its doorbell too (mode 0660, docs/formats.md "File
  // layout"); none: the owner alone (0600). The writer must be a member of it, or root.
  std::optional<gid_t> access_group;
  // The one reader of another uid that may open them too, by an ACL entry where the group needs
  // none (docs/formats.md "File layout"): the daemon's segment is its subscriber's alone.
  std::optional<uid_t> reader_uid;
  // Map the segment with Mapping::MapGuarded: a reader opens it read-write and could truncate it
  // under the writer, which would then die of SIGBUS; guarded, it writes to zero pages instead,
  // and truncated() says so (docs/brokerd.md, "Security model").
  bool guard_truncation = false;
  IdleStrategy::Options idle;
};

// A slot the writer holds: write the IPC message into data[0, capacity), then Publish.
struct SlotBuffer {
  uint8_t* data = nullptr;
  size_t capacity = 0;
  uint32_t slot = 0;
  // For the builders' Finish: streaming when the segment's slots outgrow the last-level cache.
  PayloadStores stores = PayloadStores::kCached;
};

class SLUICE_EXPORT SegmentWriter {
 public:
  // A timeout that never expires.
  static constexpr std::chrono::nanoseconds kForever = std::chrono::nanoseconds::max();

  // Creates the segment file (mode 0600, or 0660 and the access group's) under a temporary name,
  // initialises it, and renames it into place; fails when a file of that name exists.
  static Result<std::unique_ptr<SegmentWriter>> Create(const WriterOptions& options);
  ~SegmentWriter();  // Close with no wait, when not closed yet
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  // Takes a free slot, waiting up to `timeout` while readers hold all of them (kTimedOut).
  Result<SlotBuffer> Acquire(std::chrono::nanoseconds timeout);
  // Seals the acquired slot and publishes it to every attached lane; returns its object id.
  // `object` gives the message length and the descriptor fields (as the batch builders fill it).
  Result<uint64_t> Publish(const EncodedObject& object);
  // Waits until at least `count` readers are attached.
  Status WaitForReaders(uint32_t count, std::chrono::nanoseconds timeout);
  uint32_t attached_readers() const;
  // Every object with a smaller id has been released by all its readers (or its lanes were
  // reclaimed): what a committed Kafka offset may cover. Scans the descriptors, so callers ask
  // once in a while, not per object.
  uint64_t ReleasedBelow() const;
  // Slots neither the writer nor any reader holds; a scan of the descriptors, like ReleasedBelow.
  uint32_t FreeSlots() const;
  // Marks the writer CLOSED (readers end after the objects already published), waits up to
  // `drain_timeout` until every slot is released (kTimedOut if not), and unlinks the files.
  Status Close(std::chrono::nanoseconds drain_timeout);

  const std::string& path() const { return path_; }
  // WriterOptions::guard_truncation: the file was truncated under the writer, whose stores since
  // have reached nobody.
  bool truncated() const { return mapping_.truncated(); }
  const SegmentLayout& layout() const { return layout_; }
  // How many of the writer's parks on the doorbell a reader ended (a ring, a connection), rather
  // than the park's end: what says that a release woke a writer waiting for a slot.
  uint64_t rung_parks() const { return rung_parks_.load(std::memory_order_relaxed); }

 private:
  SegmentWriter(const WriterOptions& options, SegmentLayout layout, std::string path,
                Mapping mapping);
  bool TryAcquire();
  void ReclaimLanes();
  void Reclaim(uint32_t lane, uint64_t lane_word);
  // Idles (spin, yield, park on the doorbell) until ready() holds, reclaiming dead lanes
  // meanwhile; kTimedOut after `timeout`, naming `what` it waited for.
  template <typename Ready>
  Status WaitUntil(Ready ready, std::chrono::nanoseconds timeout, const char* what);
  void WakeParkedReaders(uint32_t lanes);
  std::chrono::nanoseconds heartbeat_interval() const {
    return HeartbeatInterval(static_cast<uint64_t>(options_.liveness_timeout.count()));
  }

  WriterOptions options_;
  SegmentLayout layout_;
  std::string path_;
  Mapping mapping_;
  PayloadStores stores_;
  std::optional<DoorbellServer> doorbell_;
  std::unique_ptr<Heartbeat> heartbeat_;
  uint32_t cursor_ = 0;
  std::optional<uint32_t> held_slot_;
  uint32_t held_generation_ = 0;
  uint64_t next_object_id_ = 0;
  bool closed_ = false;
  std::atomic<uint64_t> rung_parks_{0};  // read from other threads than the writer's
};

}  // namespace sluice
