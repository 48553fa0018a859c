#include "sluice/segment_reader.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "fields.h"
#include "idle_loop.h"

namespace sluice {
namespace {

namespace h = layout::header;
namespace ln = layout::lane;
namespace s = layout::slot;
using fields::Atomic;

// Opens the file read-write, waiting up to `timeout` for it to appear.
Result<int> OpenWhenPresent(const std::string& path, std::chrono::nanoseconds timeout) {
  const uint64_t deadline = internal::DeadlineAfter(timeout);
  IdleStrategy backoff(
      IdleStrategy::Options{0, 0, std::chrono::microseconds(100), std::chrono::milliseconds(10)});
  for (;;) {
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno != ENOENT || MonotonicNanos() >= deadline) {
      return Status::FromErrno("open " + path, errno);
    }
    std::this_thread::sleep_for(backoff.NextBackoff());
  }
}

}  // namespace

Result<std::unique_ptr<SegmentReader>> SegmentReader::Open(const std::string& name,
                                                           const ReaderOptions& options) {
  const std::string path = SegmentPath(name);
  SLUICE_ASSIGN_OR_RETURN(const int fd, OpenWhenPresent(path, options.open_timeout));
  SLUICE_ASSIGN_OR_RETURN(auto reader, Map(fd, path, options));
  SLUICE_RETURN_NOT_OK(reader->Attach(
      [&path](uint32_t lane) { return DoorbellClient::Connect(path + ".bell", lane); }));
  return reader;
}

Result<std::unique_ptr<SegmentReader>> SegmentReader::Open(int fd, const std::string& path,
                                                           const DoorbellInFolder& doorbell,
                                                           const ReaderOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(auto reader, Map(fd, path, options));
  SLUICE_RETURN_NOT_OK(reader->Attach(
      [&doorbell](uint32_t lane) { return DoorbellClient::ConnectInFolder(doorbell, lane); }));
  return reader;
}

Result<std::unique_ptr<SegmentReader>> SegmentReader::Map(int fd, const std::string& path,
                                                          const ReaderOptions& options) {
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    const int err = errno;
    close(fd);
    return Status::FromErrno("stat " + path, err);
  }
  const auto size = static_cast<uint64_t>(info.st_size);
  if (size < layout::kMinFileSize) {
    close(fd);
    return Status::BadField("file_size", size, "a segment is at least 4096 bytes");
  }
  auto mapping = options.guard_truncation ? Mapping::MapGuarded(fd, size) : Mapping::Map(fd, size);
  close(fd);
  if (!mapping.ok()) return mapping.status();
  SLUICE_ASSIGN_OR_RETURN(auto header, ValidateHeader(mapping->data(), size));
  return std::unique_ptr<SegmentReader>(new SegmentReader(
      options, FileIdentity{info.st_dev, info.st_ino}, mapping.MoveValue(), std::move(header)));
}

SegmentReader::SegmentReader(const ReaderOptions& options, FileIdentity file, Mapping mapping,
                             SegmentHeader header)
    : options_(options),
      file_(file),
      mapping_(std::move(mapping)),
      header_(std::move(header)),
      wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

SegmentReader::~SegmentReader() {
  Detach();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void SegmentReader::Interrupt() {
  interrupted_.store(true, std::memory_order_release);
  const uint64_t one = 1;
  // Without the eventfd a parked Next still sees the flag after its backoff's sleep, 1 ms.
  if (wake_fd_ >= 0) (void)write(wake_fd_, &one, sizeof(one));
}

Status SegmentReader::Attach(
    const std::function<Result<DoorbellClient>(uint32_t lane)>& connect_doorbell) {
  for (uint32_t lane = 0; lane < header_.layout.lane_count; ++lane) {
    uint8_t* base = mapping_.data() + header_.layout.LaneOffset(lane);
    auto word = Atomic<uint64_t>(base, ln::kLaneWord);
    uint64_t current = word.load(std::memory_order_acquire);
    if (ln::State(current) != ln::kFree) continue;
    fields::Write<uint64_t>(base, ln::kReaderPid, static_cast<uint64_t>(getpid()));
    Atomic<uint64_t>(base, ln::kReaderHeartbeatNs).store(MonotonicNanos());
    Atomic<uint32_t>(base, ln::kReaderWaiting).store(0);
    // The writer pushes nothing to a FREE lane, so the ring starts empty from here.
    Atomic<uint64_t>(base, ln::kReadPos)
        .store(Atomic<uint64_t>(base, ln::kWritePos).load(std::memory_order_acquire));
    const uint32_t epoch = ln::Epoch(current) + 1;
    if (!word.compare_exchange_strong(current, ln::Word(epoch, ln::kAttached),
                                      std::memory_order_seq_cst)) {
      continue;
    }
    lane_ = lane;
    epoch_ = epoch;
    attached_ = true;
    heartbeat_ =
        std::make_unique<Heartbeat>(reinterpret_cast<uint64_t*>(base + ln::kReaderHeartbeatNs),
                                    HeartbeatInterval(header_.liveness_timeout_ns));
    if (options_.doorbell) {
      auto doorbell = connect_doorbell(lane);
      // Open's caller destroys the reader, which leaves the lane.
      if (doorbell.status().code() == StatusCode::kTimedOut) return doorbell.status();
      if (doorbell.ok()) {
        doorbell_.emplace(doorbell.MoveValue());
      } else {
        doorbell_status_ = doorbell.status();
      }
    }
    return Status::OK();
  }
  return Status::NoFreeLane("all " + std::to_string(header_.layout.lane_count) +
                            " lanes of the segment have a reader");
}

Status SegmentReader::CheckAttached() const {
  if (!attached_) return Status::InvalidState("the reader is detached");
  const uint64_t word =
      Atomic<uint64_t>(lane_base(), ln::kLaneWord).load(std::memory_order_acquire);
  if (word != ln::Word(epoch_, ln::kAttached)) {
    return Status::Evicted("lane " + std::to_string(lane_) + " was taken back by the writer");
  }
  return Status::OK();
}

Result<ObjectView> SegmentReader::Take(uint64_t position) {
  uint8_t* lane = lane_base();
  const uint64_t entry =
      Atomic<uint64_t>(lane, ln::kRing + 8 * (position & (header_.layout.ring_capacity - 1)))
          .load(std::memory_order_acquire);
  Atomic<uint64_t>(lane, ln::kReadPos).store(position + 1, std::memory_order_release);
  const uint32_t slot = layout::ring::SlotIndex(entry);
  const uint32_t generation = layout::ring::Generation(entry);
  if (slot >= header_.layout.slot_count) {
    return Status::BadField("ring", entry,
                            "lane " + std::to_string(lane_) + " names slot " +
                                std::to_string(slot) + " of " +
                                std::to_string(header_.layout.slot_count));
  }
  const uint64_t state =
      Atomic<uint64_t>(mapping_.data(), header_.layout.DescriptorOffset(slot) + s::kStateWord)
          .load(std::memory_order_acquire);
  const uint32_t holders = s::Holders(state);
  if (s::Generation(state) != generation || (holders & (1u << lane_)) == 0 ||
      (holders & s::kWriterBit) != 0) {
    SLUICE_RETURN_NOT_OK(CheckAttached());
    return Status::BadField("state_word", state,
                            "slot " + std::to_string(slot) + " must be generation " +
                                std::to_string(generation) + " and held by lane " +
                                std::to_string(lane_) + ", not the writer");
  }
  return ReadObject(mapping_.data(), header_, slot, generation);
}

Result<ObjectView> SegmentReader::Next(std::chrono::nanoseconds timeout) {
  SLUICE_RETURN_NOT_OK(CheckAttached());
  uint8_t* lane = lane_base();
  auto write_pos = Atomic<uint64_t>(lane, ln::kWritePos);
  auto waiting = Atomic<uint32_t>(lane, ln::kReaderWaiting);
  const uint64_t read_pos = Atomic<uint64_t>(lane, ln::kReadPos).load(std::memory_order_relaxed);
  const uint8_t* base = mapping_.data();
  auto writer_state = Atomic<uint32_t>(base, h::kWriterState);
  auto writer_heartbeat = Atomic<uint64_t>(base, h::kWriterHeartbeatNs);

  // Whether the wait is over: an object arrived, or the stream ended one way or another.
  Status ended;
  auto ready = [&] {
    if (write_pos.load(std::memory_order_acquire) > read_pos) return true;
    ended = CheckAttached();
    if (!ended.ok()) return true;
    // Objects published before CLOSED or before the writer died are still delivered: look at
    // write_pos once more after seeing either.
    if (writer_state.load(std::memory_order_acquire) == h::kWriterClosed) {
      if (write_pos.load(std::memory_order_acquire) > read_pos) return true;
      ended = Status::EndOfStream("the writer closed the segment");
      return true;
    }
    if (IsStale(writer_heartbeat.load(std::memory_order_acquire), header_.liveness_timeout_ns,
                MonotonicNanos())) {
      if (write_pos.load(std::memory_order_acquire) > read_pos) return true;
      ended = Status::WriterDead("the writer's heartbeat is older than " +
                                 std::to_string(header_.liveness_timeout_ns) + " ns");
      return true;
    }
    // A load first: this runs on every spin, and a read-modify-write would take the line.
    if (interrupted_.load(std::memory_order_acquire) &&
        interrupted_.exchange(false, std::memory_order_acq_rel)) {
      uint64_t count = 0;
      if (wake_fd_ >= 0) (void)read(wake_fd_, &count, sizeof(count));  // drained for the next
      ended = Status::TimedOut("interrupted");
      return true;
    }
    return false;
  };
  IdleStrategy idle(options_.idle);
  auto park = [&](std::chrono::nanoseconds wait) {
    waiting.store(1, std::memory_order_seq_cst);
    // Close sets CLOSED before it looks for parked readers: seen here, or the ring comes.
    if (write_pos.load(std::memory_order_seq_cst) == read_pos &&
        writer_state.load(std::memory_order_seq_cst) != h::kWriterClosed) {
      // A doorbell whose writer hung up stays (Release may be ringing it from another thread);
      // the reader parks with a backoff from then on.
      if (!(doorbell_.has_value() && doorbell_->Wait(wait, wake_fd_))) {
        std::this_thread::sleep_for(std::min(wait, idle.NextBackoff()));
      }
    }
    waiting.store(0, std::memory_order_relaxed);
  };
  // Parks are bounded so the writer's liveness is checked while waiting.
  if (!internal::IdleUntil(idle, internal::DeadlineAfter(timeout),
                           HeartbeatInterval(header_.liveness_timeout_ns), ready, park)) {
    return Status::TimedOut("waiting for an object");
  }
  if (!ended.ok() && write_pos.load(std::memory_order_acquire) == read_pos) return ended;
  return Take(read_pos);
}

Status SegmentReader::Release(const ObjectView& object) {
  if (!attached_) return Status::InvalidState("the reader is detached");
  if (object.slot >= header_.layout.slot_count) {
    return Status::InvalidArgument("slot " + std::to_string(object.slot) + " does not exist");
  }
  uint8_t* base = mapping_.data();
  auto state = Atomic<uint64_t>(base, header_.layout.DescriptorOffset(object.slot) + s::kStateWord);
  const uint32_t bit = 1u << lane_;
  uint64_t current = state.load(std::memory_order_acquire);
  for (;;) {
    if (s::Generation(current) != object.generation || (s::Holders(current) & bit) == 0) {
      return Status::Evicted("slot " + std::to_string(object.slot) + " generation " +
                             std::to_string(object.generation) + " is no longer held by lane " +
                             std::to_string(lane_));
    }
    if (state.compare_exchange_weak(current, current & ~static_cast<uint64_t>(bit),
                                    std::memory_order_seq_cst)) {
      break;
    }
  }
  if (s::Holders(current & ~static_cast<uint64_t>(bit)) == 0) {
    auto waiting = Atomic<uint32_t>(base, h::kWriterWaiting);
    if (waiting.load(std::memory_order_seq_cst) == 1 && waiting.exchange(0) == 1 &&
        doorbell_.has_value()) {
      doorbell_->Ring();
    }
  }
  return Status::OK();
}

void SegmentReader::Detach() {
  if (!attached_) return;
  attached_ = false;
  heartbeat_.reset();
  uint64_t expected = ln::Word(epoch_, ln::kAttached);
  Atomic<uint64_t>(lane_base(), ln::kLaneWord)
      .compare_exchange_strong(expected, ln::Word(epoch_, ln::kClosed), std::memory_order_seq_cst);
  // A writer parked for a free slot reclaims this lane's slots as soon as it looks again.
  auto waiting = Atomic<uint32_t>(mapping_.data(), h::kWriterWaiting);
  if (waiting.load(std::memory_order_seq_cst) == 1 && waiting.exchange(0) == 1 &&
      doorbell_.has_value()) {
    doorbell_->Ring();
  }
  doorbell_.reset();
}

}  // namespace sluice
