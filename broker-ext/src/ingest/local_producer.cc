#include "ingest/local_producer.h"

#include <arrow/array.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "daemon/log.h"
#include "protocol/wire.h"
#include "sluice/schemas.h"
#include "sluice/segment_image.h"

namespace sluice::brokerd {

// Shared by the producer and every chunk it routed: the reader stays attached, and the topic the
// chunks' records view stays alive, until the last chunk is gone.
struct LocalProducer::Attachment {
  std::unique_ptr<SegmentReader> reader;
  std::string segment_path;
  uid_t owner_uid;
  std::string topic;
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

Status Malformed(const ObjectView& object, const std::string& what) {
  return Status::Corrupt("object " + std::to_string(object.object_id) + " (slot " +
                         std::to_string(object.slot) + ") " + what);
}

// The reason a dead writer's segment at `path` stays, or nothing once it is removed. A writer
// killed cannot unlink its file, which would hold the host's shared memory until reboot; the
// daemon, its reader, is the one that learns it died (docs/brokerd.md, "Local producers"). The
// path is removed only while it still names the file mapped: one that replaced it is not the
// dead writer's. There is no unlink by inode; between the lstat and the unlink only the file's
// owner (the producer's uid, checked at Start) or root may put another file under its name in
// /dev/shm, which is sticky.
std::optional<std::string> RemoveIfStillMapped(const std::string& path,
                                               const FileIdentity& mapped) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return "the path names no file any more";
    return std::string("lstat: ") + std::strerror(errno);
  }
  if (FileIdentity{info.st_dev, info.st_ino} != mapped) {
    return "the path names another file than the segment read";
  }
  if (unlink(path.c_str()) != 0) return std::string("unlink: ") + std::strerror(errno);
  return std::nullopt;
}

// The reason a dead writer's doorbell socket at `path` (its segment's path + ".bell") stays, or
// nothing once it is removed. A writer killed leaves it too. Its name is the segment's random one,
// so a socket there owned by the writer's uid is the dead writer's; anything else is left alone.
std::optional<std::string> RemoveDeadWritersDoorbell(const std::string& path, uid_t owner_uid) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return "the path names no file";
    return std::string("lstat: ") + std::strerror(errno);
  }
  if (!S_ISSOCK(info.st_mode) || info.st_uid != owner_uid) {
    return "the path names something else than a socket of the producer's user";
  }
  if (unlink(path.c_str()) != 0) return std::string("unlink: ") + std::strerror(errno);
  return std::nullopt;
}

}  // namespace

LocalProducerCounters LocalProducerMetrics(Metrics& metrics) {
  return {
      metrics.counter("sluice_local_chunks_total",
                      "Chunks taken from the segments of local producers."),
      metrics.counter("sluice_local_bytes_total",
                      "Payload bytes of the chunks taken from local producers."),
      metrics.counter("sluice_local_chunks_unrouted_total",
                      "Local chunks no CHUNK_STREAMS subscription of their topic took (dropped)."),
      metrics.counter("sluice_local_objects_malformed_total",
                      "Objects of local producers that were not valid CHUNKS batches."),
      metrics.gauge("sluice_local_producers", "Local producers attached now."),
  };
}

Result<std::unique_ptr<LocalProducer>> LocalProducer::Start(
    uint64_t id, const std::string& segment_path, uid_t owner_uid, std::string topic,
    LocalChunkRouter& router, LocalProducerCounters counters, OnFailure on_failure) {
  auto refuse = [&](const Status& status) {
    return Status(status.code(),
                  "cannot read the producer segment " + segment_path + ": " + status.message());
  };
  if (segment_path.empty() || segment_path.front() != '/') {
    return refuse(Status::InvalidArgument("the path must be absolute"));
  }
  ReaderOptions options;
  options.owner_uid = owner_uid;
  auto reader = SegmentReader::Open(segment_path, options);
  if (!reader.ok()) return refuse(reader.status());
  const SegmentHeader& header = (*reader)->header();
  if (header.kind != ObjectKind::kChunks) {
    return refuse(Status::InvalidArgument("its object_kind is RECORDS; a producer's is CHUNKS"));
  }
  if (header.schema == nullptr || !header.schema->Equals(*ChunksSchema())) {
    return refuse(Status::InvalidArgument("its schema is not the CHUNKS schema"));
  }
  auto attachment = std::make_shared<Attachment>(
      Attachment{reader.MoveValue(), segment_path, owner_uid, std::move(topic)});
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
  if (thread_.joinable()) thread_.join();
}

void LocalProducer::Run() {
  SegmentReader& reader = *attachment_->reader;
  const std::string who = Describe(id_, attachment_->segment_path);
  for (;;) {
    // Once asked to stop, only what is published already is taken.
    const bool stopping = stop_.load(std::memory_order_acquire);
    auto object = reader.Next(stopping ? std::chrono::nanoseconds(0) : kPollWait);
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
        if (code == StatusCode::kWriterDead) RemoveDeadWritersSegment();
        break;
      }
      const std::string message = who + ": " + object.status().ToString();
      Log(LogLevel::kError, "local_producer_failed",
          {{"producer", std::to_string(id_)}, {"error", message}});
      if (on_failure_) on_failure_(message);
      break;
    }
    Status routed = RouteObject(*object);
    if (!routed.ok()) {
      counters_.malformed.Add();
      (void)reader.Release(*object);
      const std::string message =
          who + ": " + routed.message() + "; the chunks before it were taken, the producer ends";
      Log(LogLevel::kWarn, "local_producer_malformed",
          {{"producer", std::to_string(id_)}, {"error", message}});
      if (on_failure_) on_failure_(message);
      break;
    }
  }
  ended_.store(true, std::memory_order_release);
}

void LocalProducer::RemoveDeadWritersSegment() {
  const std::string& path = attachment_->segment_path;
  const auto kept = RemoveIfStillMapped(path, attachment_->reader->file());
  if (kept) {
    Log(LogLevel::kWarn, "dead_producer_segment_kept",
        {{"producer", std::to_string(id_)}, {"segment", path}, {"reason", *kept}});
    return;
  }
  Log(LogLevel::kInfo, "dead_producer_segment_removed",
      {{"producer", std::to_string(id_)}, {"segment", path}});
  // Only once the segment was the dead writer's: its doorbell shares its name.
  const std::string bell = path + ".bell";
  if (const auto bell_kept = RemoveDeadWritersDoorbell(bell, attachment_->owner_uid)) {
    Log(LogLevel::kInfo, "dead_producer_doorbell_kept",
        {{"producer", std::to_string(id_)}, {"doorbell", bell}, {"reason", *bell_kept}});
  }
}

Status LocalProducer::RouteObject(const ObjectView& object) {
  auto batch = DecodeObject(object, ChunksSchema());
  if (!batch.ok()) return Malformed(object, "is not a CHUNKS batch: " + batch.status().message());
  const arrow::RecordBatch& rows = **batch;
  if (rows.num_rows() == 0) return Malformed(object, "holds no chunk");
  for (int column = 0; column < rows.num_columns(); ++column) {
    // The CHUNKS schema's fields are all non-nullable (docs/formats.md, "Object schemas").
    if (rows.column(column)->null_count() != 0) {
      return Malformed(object, "has nulls in " + rows.schema()->field(column)->name());
    }
  }
  const auto& jobs = static_cast<const arrow::StringArray&>(*rows.column(0));
  const auto& streams = static_cast<const arrow::StringArray&>(*rows.column(1));
  const auto& seqs = static_cast<const arrow::UInt64Array&>(*rows.column(2));
  const auto& eos = static_cast<const arrow::BooleanArray&>(*rows.column(3));
  const auto& payloads = static_cast<const arrow::BinaryArray&>(*rows.column(4));
  // Checked before any row is routed, so that a malformed object routes none: job and stream
  // travel on into readers' file names, logs and metric labels (docs/formats.md, "Chunk record").
  for (int64_t row = 0; row < rows.num_rows(); ++row) {
    for (const auto* names : {&jobs, &streams}) {
      const std::string field = (names == &jobs ? "job[" : "stream[") + std::to_string(row) + "]";
      const Status name =
          protocol::CheckName(field, names->GetView(row), 1, protocol::kMaxNameLength);
      if (!name.ok()) return Malformed(object, "has a name that is none: " + name.message());
    }
  }

  // Every row's message shares this owner: the slot goes back when the last of them is gone.
  std::shared_ptr<const void> owner =
      std::make_shared<const HeldObject>(attachment_, *attachment_->reader, object, *batch);
  for (int64_t row = 0; row < rows.num_rows(); ++row) {
    ReadyMessage message;
    ConsumedRecord& record = message.record;
    record.topic = attachment_->topic;
    record.partition = -1;
    record.offset = -1;
    record.value = payloads.GetView(row);
    message.owner = owner;
    message.chunk = std::make_unique<const ChunkId>(ChunkId{std::string(jobs.GetView(row)),
                                                            std::string(streams.GetView(row)),
                                                            seqs.Value(row), eos.Value(row)});
    message.local_producer = id_;
    counters_.chunks.Add();
    counters_.bytes.Add(record.value_size());
    if (router_.Route(attachment_->topic, std::move(message)) == 0) counters_.unrouted.Add();
  }
  return Status::OK();
}

}  // namespace sluice::brokerd
