#include "sluice/segment_writer.h"

#include <arrow/buffer.h>
#include <arrow/ipc/writer.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "copy_bytes.h"
#include "fields.h"
#include "idle_loop.h"
#include "sluice/crc32c.h"
#include "sluice/random_name.h"
#include "sluice/schemas.h"

namespace sluice {
namespace {

namespace h = layout::header;
namespace ln = layout::lane;
namespace s = layout::slot;
using fields::Atomic;
using fields::Read;
using fields::Write;

constexpr int kTemporaryNameAttempts = 8;

// Writes the immutable header, the schema and the writer's own fields of a fresh (zeroed) file.
void InitializeHeader(uint8_t* base, const SegmentLayout& l, const WriterOptions& options,
                      const arrow::Buffer& schema) {
  std::memcpy(base + h::kMagic, layout::kMagic, sizeof(layout::kMagic));
  Write<uint32_t>(base, h::kVersion, layout::kVersion);
  Write<uint32_t>(base, h::kFlags, options.checksums ? h::kFlagChecksums : 0);
  Write<uint32_t>(base, h::kSlotCount, l.slot_count);
  Write<uint32_t>(base, h::kLaneCount, l.lane_count);
  Write<uint64_t>(base, h::kSlotSize, l.slot_size);
  Write<uint64_t>(base, h::kSegmentSize, l.segment_size);
  Write<uint64_t>(base, h::kLaneTableOffset, l.lane_table_offset);
  Write<uint64_t>(base, h::kLaneSize, l.lane_size);
  Write<uint32_t>(base, h::kRingCapacity, l.ring_capacity);
  Write<uint32_t>(base, h::kSchemaLength, static_cast<uint32_t>(schema.size()));
  Write<uint64_t>(base, h::kDescriptorTableOffset, l.descriptor_table_offset);
  Write<uint64_t>(base, h::kSlotDataOffset, l.slot_data_offset);
  Write<uint64_t>(base, h::kLivenessTimeoutNs,
                  static_cast<uint64_t>(options.liveness_timeout.count()));
  Write<uint32_t>(base, h::kObjectKind, static_cast<uint32_t>(options.kind));
  Write<uint32_t>(base, h::kHeaderSize, static_cast<uint32_t>(l.header_size));
  Write<uint64_t>(base, h::kWriterPid, static_cast<uint64_t>(getpid()));
  Write<uint64_t>(base, h::kWriterHeartbeatNs, MonotonicNanos());
  Write<uint32_t>(base, h::kWriterState, h::kWriterActive);
  std::memcpy(base + h::kSchema, schema.data(), static_cast<size_t>(schema.size()));
}

// Gives the file its size with every page reserved. A sparse file (ftruncate) on a tmpfs too
// small for it maps fine and then kills the writer with SIGBUS at the first store into a page the
// tmpfs cannot supply; reserved now, a segment that does not fit fails here, as a Status naming
// the folder, the size and the cause (docs/formats.md, "File layout").
Status ReserveMemory(int fd, const std::string& path, const SegmentLayout& l) {
  int err = 0;
  do {
    // posix_fallocate returns its error rather than setting errno; glibc writes the blocks itself
    // on a file system without fallocate, which reserves them all the same.
    err = posix_fallocate(fd, 0, static_cast<off_t>(l.segment_size));
  } while (err == EINTR);
  if (err == 0) return Status::OK();
  std::string folder = std::filesystem::path(path).parent_path().string();
  std::string message = "segment folder " + folder + " has no room for a segment of " +
                        std::to_string(l.segment_size) + " bytes (" + std::to_string(l.slot_count) +
                        " slots of " + std::to_string(l.slot_size) + "): " + std::strerror(err);
  // ENOSPC: the folder's file system (a tmpfs: its size= or the RAM) is full; EFBIG: beyond the
  // largest file it takes; EDQUOT: the user's quota.
  if (err == ENOSPC || err == EFBIG || err == EDQUOT) return Status::NoSpace(std::move(message));
  return Status(StatusCode::kIoError, std::move(message));
}

}  // namespace

Result<std::unique_ptr<SegmentWriter>> SegmentWriter::Create(const WriterOptions& options) {
  if (options.name.empty()) return Status::InvalidArgument("the segment needs a name");
  if (options.kind != ObjectKind::kRecords && options.kind != ObjectKind::kChunks) {
    return Status::InvalidArgument("object_kind must be RECORDS (1) or CHUNKS (2)");
  }
  if (options.liveness_timeout < std::chrono::milliseconds(10)) {
    return Status::InvalidArgument("liveness_timeout must be at least 10 ms");
  }
  auto schema = arrow::ipc::SerializeSchema(*SchemaFor(options.kind));
  if (!schema.ok()) return Status::InvalidState("Arrow IPC: " + schema.status().ToString());
  SLUICE_ASSIGN_OR_RETURN(
      const SegmentLayout l,
      SegmentLayout::Plan(options.slot_count, options.lane_count, options.slot_size,
                          static_cast<uint64_t>((*schema)->size())));

  const std::string path = SegmentPath(options.name);
  // The temporary name has a random part nobody can take first (docs/formats.md, "File
  // layout"); one taken all the same, by chance, gives way to another.
  std::string suffix;
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    SLUICE_ASSIGN_OR_RETURN(suffix, TemporarySuffix());
    temporary = path + suffix;
    fd = open(temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && (errno != EEXIST || attempt == kTemporaryNameAttempts - 1)) {
      return Status::FromErrno("create " + temporary, errno);
    }
  }
  // Whatever fails from here on leaves nothing behind.
  auto fail = [&](Status status) {
    close(fd);
    unlink(temporary.c_str());
    return status;
  };
  const Sharing sharing{.group = options.access_group, .user = options.reader_uid};
  if (Status shared = ShareFile(fd, temporary, sharing); !shared.ok()) {
    return fail(shared);
  }
  // Reserved before it is mapped and published: nothing can SIGBUS on a page it lacks.
  if (Status reserved = ReserveMemory(fd, path, l); !reserved.ok()) return fail(reserved);
  auto mapping = options.guard_truncation ? Mapping::MapGuarded(fd, l.segment_size)
                                          : Mapping::Map(fd, l.segment_size);
  if (!mapping.ok()) return fail(mapping.status());
  close(fd);
  InitializeHeader(mapping->data(), l, options, **schema);

  std::unique_ptr<SegmentWriter> writer(new SegmentWriter(options, l, path, mapping.MoveValue()));
  if (options.doorbell) {
    // Bound under a temporary name too, so the doorbell is there as soon as the segment is.
    auto doorbell = DoorbellServer::Listen(path + ".bell" + suffix, l.lane_count, sharing);
    if (doorbell.ok()) writer->doorbell_.emplace(doorbell.MoveValue());
  }
  if (renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) != 0) {
    const int err = errno;
    unlink(temporary.c_str());
    writer->closed_ = true;  // nothing of its own to unlink
    if (err == EEXIST) {
      return Status::AlreadyExists("create " + path + ": a file of that name exists already");
    }
    return Status::FromErrno("rename " + temporary + " to " + path, err);
  }
  if (writer->doorbell_.has_value() && !writer->doorbell_->MoveTo(path + ".bell").ok()) {
    writer->doorbell_.reset();
  }
  writer->heartbeat_ = std::make_unique<Heartbeat>(
      reinterpret_cast<uint64_t*>(writer->mapping_.data() + h::kWriterHeartbeatNs),
      writer->heartbeat_interval());
  return writer;
}

SegmentWriter::SegmentWriter(const WriterOptions& options, SegmentLayout layout, std::string path,
                             Mapping mapping)
    : options_(options),
      layout_(layout),
      path_(std::move(path)),
      mapping_(std::move(mapping)),
      stores_(internal::StreamingPays(static_cast<size_t>(layout.slot_count) * layout.slot_size)
                  ? PayloadStores::kStreaming
                  : PayloadStores::kCached) {}

SegmentWriter::~SegmentWriter() {
  if (!closed_) (void)Close(std::chrono::nanoseconds(0));
}

bool SegmentWriter::TryAcquire() {
  uint8_t* base = mapping_.data();
  for (uint32_t i = 0; i < layout_.slot_count; ++i) {
    const uint32_t slot = (cursor_ + i) % layout_.slot_count;
    auto state = Atomic<uint64_t>(base, layout_.DescriptorOffset(slot) + s::kStateWord);
    uint64_t word = state.load(std::memory_order_acquire);
    if (s::Holders(word) != 0) continue;
    const uint32_t generation = s::Generation(word) + 1;
    if (!state.compare_exchange_strong(word, s::Word(generation, s::kWriterBit),
                                       std::memory_order_acq_rel)) {
      continue;
    }
    held_slot_ = slot;
    held_generation_ = generation;
    cursor_ = (slot + 1) % layout_.slot_count;
    return true;
  }
  return false;
}

uint32_t SegmentWriter::FreeSlots() const {
  uint32_t free = 0;
  for (uint32_t slot = 0; slot < layout_.slot_count; ++slot) {
    const uint64_t word =
        Atomic<uint64_t>(mapping_.data(), layout_.DescriptorOffset(slot) + s::kStateWord)
            .load(std::memory_order_acquire);
    if (s::Holders(word) == 0) ++free;
  }
  return free;
}

void SegmentWriter::ReclaimLanes() {
  const uint64_t now = MonotonicNanos();
  for (uint32_t lane = 0; lane < layout_.lane_count; ++lane) {
    const uint8_t* lane_base = mapping_.data() + layout_.LaneOffset(lane);
    const uint64_t word =
        Atomic<uint64_t>(lane_base, ln::kLaneWord).load(std::memory_order_acquire);
    const uint32_t state = ln::State(word);
    const bool dead =
        state == ln::kAttached &&
        IsStale(Atomic<uint64_t>(lane_base, ln::kReaderHeartbeatNs).load(std::memory_order_acquire),
                static_cast<uint64_t>(options_.liveness_timeout.count()), now);
    if (state == ln::kClosed || dead) Reclaim(lane, word);
  }
}

void SegmentWriter::Reclaim(uint32_t lane, uint64_t lane_word) {
  uint8_t* base = mapping_.data();
  const uint64_t lane_offset = layout_.LaneOffset(lane);
  auto word = Atomic<uint64_t>(base, lane_offset + ln::kLaneWord);
  const uint32_t epoch = ln::Epoch(lane_word);
  if (!word.compare_exchange_strong(lane_word, ln::Word(epoch, ln::kReclaiming),
                                    std::memory_order_acq_rel)) {
    return;  // the reader acted meanwhile; look again next time
  }
  const uint32_t bit = 1u << lane;
  for (uint32_t slot = 0; slot < layout_.slot_count; ++slot) {
    auto state = Atomic<uint64_t>(base, layout_.DescriptorOffset(slot) + s::kStateWord);
    uint64_t current = state.load(std::memory_order_acquire);
    while ((s::Holders(current) & bit) != 0 &&
           !state.compare_exchange_weak(current, current & ~static_cast<uint64_t>(bit),
                                        std::memory_order_acq_rel)) {
    }
  }
  Atomic<uint64_t>(base, lane_offset + ln::kReadPos)
      .store(Atomic<uint64_t>(base, lane_offset + ln::kWritePos).load(std::memory_order_relaxed),
             std::memory_order_release);
  if (doorbell_.has_value()) doorbell_->Drop(lane);
  word.store(ln::Word(epoch, ln::kFree), std::memory_order_release);
}

template <typename Ready>
Status SegmentWriter::WaitUntil(Ready ready, std::chrono::nanoseconds timeout, const char* what) {
  auto waiting = Atomic<uint32_t>(mapping_.data(), h::kWriterWaiting);
  IdleStrategy idle(options_.idle);
  // ready() may act when it holds (Acquire's takes the slot it found), so once it held it is not
  // asked again: when the park's last look found a slot, the loop's next look would take a
  // second one, and the first would stay the writer's for good.
  bool held = false;
  auto ready_once = [&] { return held || (held = ready()); };
  auto ready_or_reclaimed = [&] {
    if (ready_once()) return true;
    ReclaimLanes();
    return ready_once();
  };
  auto park = [&](std::chrono::nanoseconds wait) {
    waiting.store(1, std::memory_order_seq_cst);
    if (!ready_once()) {
      if (doorbell_.has_value()) {
        if (doorbell_->Wait(wait)) rung_parks_.fetch_add(1, std::memory_order_relaxed);
      } else {
        std::this_thread::sleep_for(std::min(wait, idle.NextBackoff()));
      }
    }
    waiting.store(0, std::memory_order_relaxed);
  };
  // Parks are bounded so dead readers are noticed and reclaimed while waiting.
  if (internal::IdleUntil(idle, internal::DeadlineAfter(timeout), heartbeat_interval(),
                          ready_or_reclaimed, park)) {
    return Status::OK();
  }
  return Status::TimedOut(std::string("waiting for ") + what);
}

Result<SlotBuffer> SegmentWriter::Acquire(std::chrono::nanoseconds timeout) {
  if (closed_) return Status::InvalidState("the writer is closed");
  if (held_slot_.has_value()) return Status::InvalidState("a slot is already acquired");
  SLUICE_RETURN_NOT_OK(WaitUntil([this] { return TryAcquire(); }, timeout, "a free slot"));
  return SlotBuffer{mapping_.data() + layout_.SlotDataOffset(*held_slot_), layout_.slot_size,
                    *held_slot_, stores_};
}

Result<uint64_t> SegmentWriter::Publish(const EncodedObject& object) {
  if (!held_slot_.has_value()) return Status::InvalidState("no slot is acquired");
  if (object.length > layout_.slot_size) {
    return Status::TooLarge("an object of " + std::to_string(object.length) +
                            " bytes does not fit a slot of " + std::to_string(layout_.slot_size));
  }
  uint8_t* base = mapping_.data();
  const uint32_t slot = *held_slot_;
  uint8_t* descriptor = base + layout_.DescriptorOffset(slot);
  const uint64_t object_id = next_object_id_++;
  Write<uint32_t>(descriptor, s::kFlags, options_.checksums ? s::kHasChecksum : 0);
  Write<uint32_t>(descriptor, s::kLength, static_cast<uint32_t>(object.length));
  Write<uint64_t>(descriptor, s::kObjectId, object_id);
  Write<uint32_t>(descriptor, s::kRecordCount, object.record_count);
  Write<int32_t>(descriptor, s::kPartition, object.partition);
  Write<int64_t>(descriptor, s::kFirstOffset, object.first_offset);
  Write<int64_t>(descriptor, s::kLastOffset, object.last_offset);
  Write<uint32_t>(
      descriptor, s::kChecksum,
      options_.checksums ? crc32c::Compute(base + layout_.SlotDataOffset(slot), object.length) : 0);

  // The payload's streaming stores (CopyBytes) before the release store that seals the slot.
  internal::FenceCopies();
  uint32_t lanes = 0;
  for (uint32_t lane = 0; lane < layout_.lane_count; ++lane) {
    const uint64_t word = Atomic<uint64_t>(base, layout_.LaneOffset(lane) + ln::kLaneWord)
                              .load(std::memory_order_acquire);
    if (ln::State(word) == ln::kAttached) lanes |= 1u << lane;
    // A reader that left gets its lane back to the pool now, even when slots are plentiful.
    if (ln::State(word) == ln::kClosed) Reclaim(lane, word);
  }
  Atomic<uint64_t>(descriptor, s::kStateWord)
      .store(s::Word(held_generation_, lanes), std::memory_order_release);
  held_slot_.reset();
  for (uint32_t lane = 0; lane < layout_.lane_count; ++lane) {
    if ((lanes & (1u << lane)) == 0) continue;
    uint8_t* lane_base = base + layout_.LaneOffset(lane);
    auto write_pos = Atomic<uint64_t>(lane_base, ln::kWritePos);
    const uint64_t position = write_pos.load(std::memory_order_relaxed);
    Atomic<uint64_t>(lane_base, ln::kRing + 8 * (position & (layout_.ring_capacity - 1)))
        .store(layout::ring::Entry(held_generation_, slot), std::memory_order_relaxed);
    write_pos.store(position + 1, std::memory_order_seq_cst);
  }
  Atomic<uint64_t>(base, h::kObjectsPublished).store(next_object_id_, std::memory_order_release);
  WakeParkedReaders(lanes);
  return object_id;
}

void SegmentWriter::WakeParkedReaders(uint32_t lanes) {
  for (uint32_t lane = 0; lane < layout_.lane_count; ++lane) {
    if ((lanes & (1u << lane)) == 0) continue;
    auto waiting = Atomic<uint32_t>(mapping_.data(), layout_.LaneOffset(lane) + ln::kReaderWaiting);
    if (waiting.load(std::memory_order_seq_cst) == 1 && waiting.exchange(0) == 1 &&
        doorbell_.has_value()) {
      doorbell_->Ring(lane);
    }
  }
}

uint32_t SegmentWriter::attached_readers() const {
  uint32_t count = 0;
  for (uint32_t lane = 0; lane < layout_.lane_count; ++lane) {
    const uint64_t word =
        Atomic<uint64_t>(mapping_.data(), layout_.LaneOffset(lane) + ln::kLaneWord)
            .load(std::memory_order_acquire);
    if (ln::State(word) == ln::kAttached) ++count;
  }
  return count;
}

uint64_t SegmentWriter::ReleasedBelow() const {
  uint64_t oldest = next_object_id_;
  for (uint32_t slot = 0; slot < layout_.slot_count; ++slot) {
    const uint8_t* descriptor = mapping_.data() + layout_.DescriptorOffset(slot);
    const uint32_t holders =
        s::Holders(Atomic<uint64_t>(descriptor, s::kStateWord).load(std::memory_order_acquire));
    // A slot the writer holds has no object yet; its object_id field is a previous object's.
    if (holders == 0 || (holders & s::kWriterBit) != 0) continue;
    oldest = std::min(oldest, Read<uint64_t>(descriptor, s::kObjectId));
  }
  return oldest;
}

Status SegmentWriter::WaitForReaders(uint32_t count, std::chrono::nanoseconds timeout) {
  if (closed_) return Status::InvalidState("the writer is closed");
  return WaitUntil([&] { return attached_readers() >= count; }, timeout, "readers to attach");
}

Status SegmentWriter::Close(std::chrono::nanoseconds drain_timeout) {
  if (closed_) return Status::OK();
  uint8_t* base = mapping_.data();
  if (held_slot_.has_value()) {
    // An acquired slot that was never published goes back unused.
    Atomic<uint64_t>(base, layout_.DescriptorOffset(*held_slot_) + s::kStateWord)
        .store(s::Word(held_generation_, 0), std::memory_order_release);
    held_slot_.reset();
  }
  Atomic<uint32_t>(base, h::kWriterState).store(h::kWriterClosed, std::memory_order_seq_cst);
  WakeParkedReaders((1u << layout_.lane_count) - 1);
  Status drained = WaitUntil([this] { return FreeSlots() == layout_.slot_count; }, drain_timeout,
                             "readers to release every slot");
  closed_ = true;
  heartbeat_.reset();
  doorbell_.reset();
  unlink(path_.c_str());
  return drained;
}

}  // namespace sluice
