#include "ingest/local_producer.h"

#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/log.h"
#include "ingest/producer_object.h"
#include "protocol/wire.h"
#include "sluice/layout.h"
#include "sluice/limits.h"
#include "sluice/liveness.h"
#include "sluice/schemas.h"
#include "sluice/segment_image.h"

namespace sluice::brokerd {

// Shared by the producer and every chunk it routed: the reader stays attached, and the topic the
// chunks' records view stays alive, until the last chunk is gone.
struct LocalProducer::Attachment {
  std::unique_ptr<SegmentReader> reader;
  std::string segment_path;  // the segment folder's path, then the name
  std::string segment_name;  // in the segment folder
  uid_t owner_uid;
  std::string topic;
  std::string segment_dir;
};

namespace {

// One object's slot, held while a chunk of it lives; released when the last is gone, from
// whichever pump thread drops it: SegmentReader::Release may be called beside the producer
// thread's Next.
class HeldObject {
 public:
  HeldObject(std::shared_ptr<const void> attachment, SegmentReader& reader, const ObjectView& view,
             std::shared_ptr<arrow::RecordBatch> batch)
      : attachment_(std::move(attachment)),
        reader_(reader),
        view_(view),
        batch_(std::move(batch)) {}
  HeldObject(const HeldObject&) = delete;
  HeldObject& operator=(const HeldObject&) = delete;
  // kEvicted: the writer took the lane back, the slot is no longer the daemon's to give.
  ~HeldObject() { (void)reader_.Release(view_); }

 private:
  const std::shared_ptr<const void> attachment_;  // keeps reader_ attached
  SegmentReader& reader_;
  const ObjectView view_;
  const std::shared_ptr<arrow::RecordBatch> batch_;  // the row views point into the slot
};

std::string Describe(uint64_t id, const std::string& path) {
  return "local producer " + std::to_string(id) + " (segment " + path + ")";
}

// What became of a file a dead producer left in the segment folder.
struct Removal {
  enum Kind { kRemoved, kGone, kKept } kind;
  std::string reason;  // kKept: why
};

// Removes `name` from the segment folder open at `folder` unless `keep` gives a reason to keep
// what the name holds now. Both the look and the unlink go by the name in that folder
// (fstatat, unlinkat), so no path a peer could swap, a symbolic link to another folder say, is
// followed between them; between the two only the file's owner or root may put another file
// under the name in a sticky folder (/dev/shm), and nobody else's file is ever at stake.
Removal RemoveUnless(int folder, const std::string& name,
                     const std::function<std::optional<std::string>(const struct stat&)>& keep) {
  struct stat info {};
  if (::fstatat(folder, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return {Removal::kGone, {}};
    return {Removal::kKept, std::string("fstatat: ") + std::strerror(errno)};
  }
  if (std::optional<std::string> reason = keep(info)) return {Removal::kKept, *std::move(reason)};
  if (::unlinkat(folder, name.c_str(), 0) != 0) {
    return {Removal::kKept, std::string("unlinkat: ") + std::strerror(errno)};
  }
  return {Removal::kRemoved, {}};
}

// A dead writer's doorbell, NAME.bell: it shares the segment's unpredictable name, so a socket
// there of the segment's owner is the dead writer's; anything else is left alone.
Removal RemoveDoorbell(int folder, const std::string& segment_name, uid_t owner_uid) {
  return RemoveUnless(folder, segment_name + ".bell",
                      [owner_uid](const struct stat& info) -> std::optional<std::string> {
                        if (S_ISSOCK(info.st_mode) && info.st_uid == owner_uid) return std::nullopt;
                        return "the path names something else than a socket of the producer's "
                               "user";
                      });
}

// The segment folder, open as a directory for RemoveUnless.
class SegmentFolder {
 public:
  explicit SegmentFolder(const std::string& dir)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)), error_(errno) {}
  ~SegmentFolder() {
    if (fd_ >= 0) ::close(fd_);
  }
  SegmentFolder(const SegmentFolder&) = delete;
  SegmentFolder& operator=(const SegmentFolder&) = delete;

  int fd() const { return fd_; }
  int error() const { return error_; }

 private:
  int fd_;
  int error_;
};

// The name of `path` in `folder`, when `path` names a file directly in it by a name as segments
// have (docs/brokerd.md, "Segment names": [A-Za-z0-9._-], not `.` or `..`). A producer's segment
// must be such a name in the segment folder: the daemon, often root, then opens and removes only
// files of that folder, by name through the folder's descriptor, and follows no path the
// producer chose (docs/brokerd.md, "Local producers").
Result<std::string> NameIn(std::string_view folder, std::string_view path) {
  while (folder.size() > 1 && folder.back() == '/') folder.remove_suffix(1);
  const auto refuse = [&] {
    return Status::InvalidArgument("a producer's segment must be named by the segment folder " +
                                   std::string(folder) +
                                   " (sluice.segment.dir), a slash and a name of [" +
                                   std::string(limits::kNameAlphabet) + "]");
  };
  if (!path.starts_with(folder) || path.size() <= folder.size() || path[folder.size()] != '/') {
    return refuse();
  }
  const std::string_view name = path.substr(folder.size() + 1);
  if (name == "." || name == ".." ||
      !protocol::CheckName("name", name, 1, limits::kMaxSegmentNameLength).ok()) {
    return refuse();
  }
  return std::string(name);
}

// Opens the producer's segment `name` in the segment folder open at `folder` for its reader
// (read-write: a reader writes its lane's words), refusing anything but a regular file of
// `owner_uid`: opened by name in the folder without following a link, the checks on the very
// descriptor then mapped, so no file can be swapped in between. What is wrong is told apart in
// `detail` only, for the daemon's log; the peer is told the one refusal NotYours, so that the
// daemon, often root, tells it nothing of files it could not look at itself (which exist, which
// are another's or no file).
Result<int> OpenOwnSegment(int folder, const std::string& name, uid_t owner_uid,
                           std::string& detail) {
  const auto not_yours = [&name] {
    return Status::InvalidArgument("no segment of yours named " + name + " in the segment folder");
  };
  const int fd = ::openat(folder, name.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    detail = std::string("openat: ") + std::strerror(errno);
    return not_yours();
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    detail = std::string("fstat: ") + std::strerror(errno);
  } else if (!S_ISREG(info.st_mode)) {
    detail = "not a regular file";
  } else if (info.st_uid != owner_uid) {
    detail = "owned by uid " + std::to_string(info.st_uid);
  } else {
    return fd;
  }
  ::close(fd);
  return not_yours();
}

// Whether the producer segment open at `fd` (a regular file of `size` bytes) has lost its
// writer: a valid header whose writer closed or whose heartbeat is older than the segment's
// liveness timeout, as a reader calls a writer dead. Mapped read-only: the look takes no lane
// and writes nothing, so a live producer's segment is untouched.
Result<bool> WriterIsGone(int fd, uint64_t size) {
  void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) return Status::FromErrno("mmap", errno);
  const auto* base = static_cast<const uint8_t*>(mapped);
  Result<SegmentHeader> header = ValidateHeader(base, size);
  bool gone = false;
  if (header.ok()) {
    namespace h = layout::header;
    const auto state = __atomic_load_n(reinterpret_cast<const uint32_t*>(base + h::kWriterState),
                                       __ATOMIC_ACQUIRE);
    const auto heartbeat = __atomic_load_n(
        reinterpret_cast<const uint64_t*>(base + h::kWriterHeartbeatNs), __ATOMIC_ACQUIRE);
    gone = state == h::kWriterClosed ||
           IsStale(heartbeat, header->liveness_timeout_ns, MonotonicNanos());
  }
  ::munmap(mapped, size);
  if (!header.ok()) return header.status();
  return gone;
}

}  // namespace

void RemoveDeadProducerSegments(const std::string& segment_dir) {
  const SegmentFolder folder(segment_dir);
  if (folder.fd() < 0) return;
  DIR* listing = ::opendir(segment_dir.c_str());
  if (listing == nullptr) return;
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name = entry->d_name;
    // A segment's own name has no dot; NAME.bell and the temporaries NAME.tmp-RANDOM go with it.
    if (name.starts_with(kProducerSegmentPrefix) && name.find('.') == std::string_view::npos) {
      names.emplace_back(name);
    }
  }
  ::closedir(listing);
  for (const std::string& name : names) {
    auto kept = [&name](const std::string& reason) {
      Log(LogLevel::kWarn, "stale_producer_segment_kept", {{"name", name}, {"reason", reason}});
    };
    const int fd =
        ::openat(folder.fd(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      kept(std::string("open: ") + std::strerror(errno));
      continue;
    }
    struct stat opened {};
    Result<bool> gone = false;
    if (::fstat(fd, &opened) != 0) {
      gone = Status::FromErrno("fstat", errno);
    } else if (!S_ISREG(opened.st_mode)) {
      gone = Status::InvalidArgument("not a regular file");
    } else {
      gone = WriterIsGone(fd, static_cast<uint64_t>(opened.st_size));
    }
    ::close(fd);
    if (!gone.ok()) {
      kept(gone.status().message());
      continue;
    }
    if (!*gone) continue;  // a live producer's
    const FileIdentity inspected{opened.st_dev, opened.st_ino};
    const Removal segment = RemoveUnless(folder.fd(), name, [&inspected](const struct stat& info) {
      return FileIdentity{info.st_dev, info.st_ino} == inspected
                 ? std::nullopt
                 : std::optional<std::string>("the name names another file than the one read");
    });
    if (segment.kind == Removal::kKept) {
      kept(segment.reason);
      continue;
    }
    Log(LogLevel::kInfo, "stale_producer_segment_removed", {{"name", name}});
    const Removal bell = RemoveDoorbell(folder.fd(), name, opened.st_uid);
    if (bell.kind == Removal::kKept) kept(name + ".bell: " + bell.reason);
  }
}

LocalProducerCounters LocalProducerMetrics(Metrics& metrics) {
  return {
      metrics.counter("sluice_local_chunks_total",
                      "Chunks taken from the segments of local producers."),
      metrics.counter("sluice_local_bytes_total",
                      "Payload bytes of the chunks taken from local producers."),
      metrics.counter("sluice_local_chunks_unrouted_total",
                      "Local chunks no CHUNK_STREAMS subscription of their topic took (dropped)."),
      metrics.counter("sluice_local_objects_malformed_total",
                      "Local producers refused or ended because their segment or an object of it "
                      "broke the format."),
      metrics.gauge("sluice_local_producers", "Local producers attached now."),
  };
}

Result<std::unique_ptr<LocalProducer>> LocalProducer::Start(
    uint64_t id, const std::string& segment_path, uid_t owner_uid, std::string topic,
    std::string segment_dir, LocalChunkRouter& router, LocalProducerCounters counters,
    OnFailure on_failure) {
  auto refuse = [&](const Status& status) {
    return Status(status.code(),
                  "cannot read the producer segment " + segment_path + ": " + status.message());
  };
  Result<std::string> name = NameIn(segment_dir, segment_path);
  if (!name.ok()) return refuse(name.status());
  const SegmentFolder folder(segment_dir);
  if (folder.fd() < 0) {
    return refuse(Status::FromErrno("open the segment folder " + segment_dir, folder.error()));
  }
  std::string detail;
  Result<int> fd = OpenOwnSegment(folder.fd(), *name, owner_uid, detail);
  if (!fd.ok()) {
    Log(LogLevel::kWarn, "producer_segment_refused",
        {{"producer", std::to_string(id)},
         {"segment", segment_path},
         {"uid", std::to_string(owner_uid)},
         {"reason", detail}});
    return refuse(fd.status());
  }
  // The producer may truncate its file under the mapping; guarded, that ends this producer rather
  // than the daemon by SIGBUS (docs/brokerd.md, "Local producers"). The doorbell too is the
  // name's in the folder, NAME.bell, and only a socket of the peer's there is connected: a link
  // would lead the daemon's connect to any socket it may reach.
  ReaderOptions options;
  options.guard_truncation = true;
  const DoorbellInFolder doorbell{folder.fd(), *name + ".bell", owner_uid, segment_path + ".bell"};
  // A file of the peer's own that is no CHUNKS segment is the producer's fault, counted as a
  // malformed object that ends a producer is (docs/brokerd.md, "Metrics"); a mapping or a lane
  // the daemon has not is none of its fault.
  auto refuse_malformed = [&](const Status& status) {
    counters.malformed.Add();
    return refuse(status);
  };
  auto reader = SegmentReader::Open(*fd, segment_path, doorbell, options);
  if (!reader.ok()) {
    if (reader.status().code() == StatusCode::kCorrupt) return refuse_malformed(reader.status());
    return refuse(reader.status());
  }
  const SegmentHeader& header = (*reader)->header();
  if (header.kind != ObjectKind::kChunks) {
    return refuse_malformed(
        Status::InvalidArgument("its object_kind is RECORDS; a producer's is CHUNKS"));
  }
  if (header.schema == nullptr || !header.schema->Equals(*ChunksSchema())) {
    return refuse_malformed(Status::InvalidArgument("its schema is not the CHUNKS schema"));
  }
  // The producer's thread parks on the doorbell while its producer is idle, for as long as that
  // lasts; without one it would sleep with a backoff of at most a millisecond, a wakeup every
  // millisecond for each idle producer (docs/brokerd.md, "Local producers"). The refusal reads
  // the same whatever was there; the log says what.
  if (!(*reader)->doorbell_status().ok()) {
    Log(LogLevel::kWarn, "producer_doorbell_refused",
        {{"producer", std::to_string(id)},
         {"segment", segment_path},
         {"reason", (*reader)->doorbell_status().message()}});
    return refuse(Status::InvalidArgument(
        "no doorbell socket of yours beside it, " + *name +
        ".bell; a local producer needs one, on which the daemon waits while it is idle"));
  }
  auto attachment =
      std::make_shared<Attachment>(Attachment{reader.MoveValue(), segment_path, *std::move(name),
                                              owner_uid, std::move(topic), std::move(segment_dir)});
  std::unique_ptr<LocalProducer> producer(
      new LocalProducer(id, std::move(attachment), router, counters, std::move(on_failure)));
  producer->thread_ = std::thread([p = producer.get()] { p->Run(); });
  return producer;
}

LocalProducer::LocalProducer(uint64_t id, std::shared_ptr<Attachment> attachment,
                             LocalChunkRouter& router, LocalProducerCounters counters,
                             OnFailure on_failure)
    : id_(id),
      attachment_(std::move(attachment)),
      router_(router),
      counters_(counters),
      on_failure_(std::move(on_failure)) {
  counters_.producers.Add(1);
}

LocalProducer::~LocalProducer() {
  Stop();
  counters_.producers.Add(-1);
}

const std::string& LocalProducer::topic() const { return attachment_->topic; }

void LocalProducer::Stop() {
  stop_.store(true, std::memory_order_release);
  attachment_->reader->Interrupt();
  if (thread_.joinable()) thread_.join();
}

void LocalProducer::Run() {
  SegmentReader& reader = *attachment_->reader;
  const std::string who = Describe(id_, attachment_->segment_path);
  auto fail = [&](const std::string& message) {
    Log(LogLevel::kError, "local_producer_failed",
        {{"producer", std::to_string(id_)}, {"error", message}});
    if (on_failure_) on_failure_(message);
  };
  // The producer's own fault: its segment or an object of it broke the format. Each such end is
  // counted once (docs/brokerd.md, "Metrics"), whichever of the checks below saw it first.
  auto malformed = [&](const std::string& message) {
    counters_.malformed.Add();
    Log(LogLevel::kWarn, "local_producer_malformed",
        {{"producer", std::to_string(id_)}, {"error", message}});
    if (on_failure_) on_failure_(message);
  };
  // Truncated, the segment reads as zeros from then on, whatever Next or RouteObject made of
  // them; the chunks routed before view zeros where their payload was, as if the producer had
  // written them (docs/brokerd.md, "Local producers").
  auto truncated = [&] {
    if (!reader.truncated()) return false;
    malformed(who + ": its file was truncated under the daemon's mapping; the producer ends");
    return true;
  };
  for (;;) {
    // Once asked to stop, only what is published already is taken.
    const bool stopping = stop_.load(std::memory_order_acquire);
    // An idle producer's thread parks on its doorbell until an object comes, waking only to look
    // at the writer's heartbeat (at most once a second); Stop interrupts the wait.
    auto object = reader.Next(stopping ? std::chrono::nanoseconds(0) : SegmentReader::kForever);
    if (truncated()) break;
    if (!object.ok()) {
      const StatusCode code = object.status().code();
      if (code == StatusCode::kTimedOut) {
        if (stopping) break;
        continue;
      }
      if (code == StatusCode::kEndOfStream || code == StatusCode::kWriterDead) {
        Log(LogLevel::kInfo, "local_producer_ended",
            {{"producer", std::to_string(id_)},
             {"segment", attachment_->segment_path},
             {"reason", object.status().message()}});
        // A writer that closed unlinked its file itself; a dead one left it behind.
        if (code == StatusCode::kWriterDead) RemoveDeadWritersSegment("writer_dead");
        break;
      }
      // kCorrupt: a lane or slot the writer broke. kEvicted is not the producer's fault alone:
      // a writer takes back the lane of a reader whose heartbeat is stale, a stalled daemon's too.
      const std::string message = who + ": " + object.status().ToString();
      if (code == StatusCode::kCorrupt) {
        malformed(message);
      } else {
        fail(message);
      }
      break;
    }
    Status routed = RouteObject(*object);
    if (truncated()) break;
    if (!routed.ok()) {
      (void)reader.Release(*object);
      malformed(who + ": " + routed.message() +
                "; the chunks before it were taken, the producer ends");
      break;
    }
  }
  ended_.store(true, std::memory_order_release);
}

void LocalProducer::StopAfterItsConnectionEnded() {
  Stop();
  RemoveDeadWritersSegment("connection_ended");
}

// A writer killed cannot unlink its file, which would hold the host's shared memory until reboot;
// the daemon, its reader, is the one that learns it died, by its heartbeat or, first, by the end
// of its connection (docs/brokerd.md, "Local producers"). The name is removed only while it still
// names the file mapped: one that replaced it is not the dead writer's. There is no unlink by
// inode; the owner of the file (the producer's uid, checked at Start) or root alone may put
// another file under its name in a sticky folder.
void LocalProducer::RemoveDeadWritersSegment(const char* cause) {
  if (segment_removed_) return;
  segment_removed_ = true;
  const std::string& path = attachment_->segment_path;
  auto kept = [&](const std::string& reason) {
    Log(LogLevel::kWarn, "dead_producer_segment_kept",
        {{"producer", std::to_string(id_)},
         {"segment", path},
         {"cause", cause},
         {"reason", reason}});
  };
  const std::string& name = attachment_->segment_name;
  const SegmentFolder folder(attachment_->segment_dir);
  if (folder.fd() < 0) {
    kept("open " + attachment_->segment_dir + ": " + std::strerror(folder.error()));
    return;
  }
  const FileIdentity& mapped = attachment_->reader->file();
  const Removal segment = RemoveUnless(folder.fd(), name, [&mapped](const struct stat& info) {
    return FileIdentity{info.st_dev, info.st_ino} == mapped
               ? std::nullopt
               : std::optional<std::string>("the path names another file than the segment read");
  });
  // Gone already: its writer closed it, and removed its doorbell too.
  if (segment.kind == Removal::kGone) return;
  if (segment.kind == Removal::kKept) {
    kept(segment.reason);
    return;
  }
  Log(LogLevel::kInfo, "dead_producer_segment_removed",
      {{"producer", std::to_string(id_)}, {"segment", path}, {"cause", cause}});
  // Only once the segment was the dead writer's: its doorbell shares its name.
  const Removal bell = RemoveDoorbell(folder.fd(), name, attachment_->owner_uid);
  if (bell.kind == Removal::kKept) {
    Log(LogLevel::kInfo, "dead_producer_doorbell_kept",
        {{"producer", std::to_string(id_)}, {"doorbell", path + ".bell"}, {"reason", bell.reason}});
  }
}

Status LocalProducer::RouteObject(const ObjectView& object) {
  SLUICE_ASSIGN_OR_RETURN(const ProducerObject chunks, ProducerObject::Check(object));
  // Every row's message shares this owner: the slot goes back when the last of them is gone.
  std::shared_ptr<const void> owner =
      std::make_shared<const HeldObject>(attachment_, *attachment_->reader, object, chunks.batch());
  for (int64_t row = 0; row < chunks.rows(); ++row) {
    ReadyMessage message;
    ConsumedRecord& record = message.record;
    record.topic = attachment_->topic;
    record.partition = -1;
    record.offset = -1;
    record.value = chunks.payload(row);
    message.owner = owner;
    message.chunk = std::make_unique<const ChunkId>(ChunkId{std::string(chunks.job(row)),
                                                            std::string(chunks.stream(row)),
                                                            chunks.seq(row), chunks.eos(row)});
    message.local_producer = id_;
    counters_.chunks.Add();
    counters_.bytes.Add(record.value_size());
    if (router_.Route(attachment_->topic, std::move(message)) == 0) counters_.unrouted.Add();
  }
  return Status::OK();
}

}  // namespace sluice::brokerd
