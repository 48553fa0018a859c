// The C API over the C++ one: handles wrap the C++ objects, statuses become codes plus this
// thread's last-error text.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

#include "sluice/segment_reader.h"
#include "sluice/segment_writer.h"
#include "sluice/sluice.h"

struct sluice_writer_s {
  std::unique_ptr<sluice::SegmentWriter> writer;
};

struct sluice_reader_s {
  std::unique_ptr<sluice::SegmentReader> reader;
};

namespace {

// Report casts a StatusCode into its sluice_err_t: every code is pinned to its twin, so that a
// renumbered or inserted one on either side fails the build instead of misreporting.
constexpr bool Twins(sluice::StatusCode code, sluice_err_t err) {
  return static_cast<int>(code) == static_cast<int>(err);
}
static_assert(Twins(sluice::StatusCode::kOk, SLUICE_OK));
static_assert(Twins(sluice::StatusCode::kInvalidArgument, SLUICE_ERR_INVALID_ARGUMENT));
static_assert(Twins(sluice::StatusCode::kIoError, SLUICE_ERR_IO));
static_assert(Twins(sluice::StatusCode::kCorrupt, SLUICE_ERR_CORRUPT));
static_assert(Twins(sluice::StatusCode::kTimedOut, SLUICE_ERR_TIMED_OUT));
static_assert(Twins(sluice::StatusCode::kEndOfStream, SLUICE_ERR_END_OF_STREAM));
static_assert(Twins(sluice::StatusCode::kWriterDead, SLUICE_ERR_WRITER_DEAD));
static_assert(Twins(sluice::StatusCode::kEvicted, SLUICE_ERR_EVICTED));
static_assert(Twins(sluice::StatusCode::kNoFreeLane, SLUICE_ERR_NO_FREE_LANE));
static_assert(Twins(sluice::StatusCode::kTooLarge, SLUICE_ERR_TOO_LARGE));
static_assert(Twins(sluice::StatusCode::kInvalidState, SLUICE_ERR_INVALID_STATE));
static_assert(Twins(sluice::StatusCode::kAlreadyExists, SLUICE_ERR_ALREADY_EXISTS));
static_assert(Twins(sluice::StatusCode::kNoSpace, SLUICE_ERR_NO_SPACE));

thread_local std::string last_error;

sluice_err_t Report(const sluice::Status& status) {
  last_error = status.message();
  return static_cast<sluice_err_t>(status.code());
}

sluice_err_t InvalidArgument(const char* what) {
  return Report(sluice::Status::InvalidArgument(what));
}

// The smallest config a caller can pass: struct_size and name, the one field without a default.
constexpr size_t kWriterConfigMinSize =
    offsetof(sluice_writer_config_t, name) + sizeof(const char*);

// The caller's config as this libsluice knows it (sluice.h, "A config grows"; native/README.md,
// "A config that grows"): its first struct_size bytes over the defaults, so that the fields an
// older caller does not know keep theirs.
sluice::Result<sluice_writer_config_t> KnownConfig(const sluice_writer_config_t& config) {
  if (config.struct_size < kWriterConfigMinSize) {
    return sluice::Status::InvalidArgument(
        "config->struct_size = " + std::to_string(config.struct_size) + " is below the " +
        std::to_string(kWriterConfigMinSize) +
        " bytes of struct_size and name: fill the config with sluice_writer_config_init");
  }
  if (config.struct_size > sizeof(sluice_writer_config_t)) {
    return sluice::Status::InvalidArgument(
        "config->struct_size = " + std::to_string(config.struct_size) + " is larger than the " +
        std::to_string(sizeof(sluice_writer_config_t)) + " bytes of libsluice " + sluice_version() +
        "'s sluice_writer_config_t: the caller was built against a newer sluice.h; run it with a "
        "libsluice at least as new");
  }
  sluice_writer_config_t known;
  sluice_writer_config_init_sized(&known, sizeof(known));
  std::memcpy(&known, &config, config.struct_size);
  return known;
}

// sluice_writer_create once the config is known to be whole.
sluice_err_t CreateWriter(const sluice_writer_config_t& config, sluice_writer_t** writer) {
  if (config.name == nullptr) return InvalidArgument("config->name must not be NULL");
  sluice::WriterOptions options;
  options.name = config.name;
  options.kind = static_cast<sluice::ObjectKind>(config.kind);
  options.slot_count = config.slot_count;
  options.slot_size = config.slot_size;
  options.lane_count = config.lane_count;
  options.liveness_timeout = std::chrono::milliseconds(config.liveness_timeout_ms);
  options.checksums = config.checksums != 0;
  if (config.access_group != -1) {
    if (config.access_group < 0 || config.access_group >= static_cast<int64_t>(UINT32_MAX)) {
      return Report(sluice::Status::InvalidArgument("access_group must be -1 or a gid, not " +
                                                    std::to_string(config.access_group)));
    }
    options.access_group = static_cast<gid_t>(config.access_group);
  }
  auto created = sluice::SegmentWriter::Create(options);
  if (!created.ok()) return Report(created.status());
  *writer = new sluice_writer_s{created.MoveValue()};
  return SLUICE_OK;
}

std::chrono::nanoseconds Timeout(int timeout_ms) {
  if (timeout_ms < 0) return std::chrono::nanoseconds::max();
  return std::chrono::milliseconds(timeout_ms);
}

}  // namespace

extern "C" {

const char* sluice_err_str(sluice_err_t err) {
  switch (err) {
    case SLUICE_OK:
      return "success";
    case SLUICE_ERR_INVALID_ARGUMENT:
      return "invalid argument";
    case SLUICE_ERR_IO:
      return "I/O error";
    case SLUICE_ERR_CORRUPT:
      return "corrupt segment";
    case SLUICE_ERR_TIMED_OUT:
      return "timed out";
    case SLUICE_ERR_END_OF_STREAM:
      return "end of stream: the writer closed the segment";
    case SLUICE_ERR_WRITER_DEAD:
      return "the writer is dead";
    case SLUICE_ERR_EVICTED:
      return "the reader was evicted from its lane";
    case SLUICE_ERR_NO_FREE_LANE:
      return "no free lane";
    case SLUICE_ERR_TOO_LARGE:
      return "object larger than a slot";
    case SLUICE_ERR_INVALID_STATE:
      return "invalid state";
    case SLUICE_ERR_ALREADY_EXISTS:
      return "a file already has the segment's name";
    case SLUICE_ERR_NO_SPACE:
      return "no room for the segment in its folder";
  }
  return "unknown error";
}

const char* sluice_last_error(void) { return last_error.c_str(); }

void sluice_writer_config_init_sized(sluice_writer_config_t* config, size_t struct_size) {
  const sluice::WriterOptions options;
  sluice_writer_config_t defaults;
  defaults.struct_size = struct_size;
  defaults.name = nullptr;
  defaults.kind = SLUICE_KIND_RECORDS;
  defaults.slot_count = options.slot_count;
  defaults.slot_size = options.slot_size;
  defaults.lane_count = options.lane_count;
  defaults.liveness_timeout_ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(options.liveness_timeout).count());
  defaults.checksums = options.checksums ? 1 : 0;
  defaults.access_group = -1;
  // An older caller's struct ends before the fields it does not know: nothing is written there.
  std::memcpy(config, &defaults, std::min(struct_size, sizeof(defaults)));
}

sluice_err_t sluice_writer_create(const sluice_writer_config_t* config, sluice_writer_t** writer) {
  if (config == nullptr || writer == nullptr) {
    return InvalidArgument("config and writer must not be NULL");
  }
  auto known = KnownConfig(*config);
  if (!known.ok()) return Report(known.status());
  return CreateWriter(*known, writer);
}

sluice_err_t sluice_writer_wait_readers(sluice_writer_t* writer, uint32_t count, int timeout_ms) {
  if (writer == nullptr) return InvalidArgument("writer must not be NULL");
  return Report(writer->writer->WaitForReaders(count, Timeout(timeout_ms)));
}

sluice_err_t sluice_writer_acquire(sluice_writer_t* writer, int timeout_ms, void** buffer,
                                   size_t* capacity) {
  if (writer == nullptr || buffer == nullptr || capacity == nullptr) {
    return InvalidArgument("writer, buffer and capacity must not be NULL");
  }
  auto slot = writer->writer->Acquire(Timeout(timeout_ms));
  if (!slot.ok()) return Report(slot.status());
  *buffer = slot->data;
  *capacity = slot->capacity;
  return SLUICE_OK;
}

sluice_err_t sluice_writer_publish(sluice_writer_t* writer, size_t length, uint32_t record_count,
                                   int32_t partition, int64_t first_offset, int64_t last_offset,
                                   uint64_t* object_id) {
  if (writer == nullptr) return InvalidArgument("writer must not be NULL");
  auto published =
      writer->writer->Publish({length, record_count, partition, first_offset, last_offset});
  if (!published.ok()) return Report(published.status());
  if (object_id != nullptr) *object_id = *published;
  return SLUICE_OK;
}

sluice_err_t sluice_writer_close(sluice_writer_t* writer, int drain_timeout_ms) {
  if (writer == nullptr) return InvalidArgument("writer must not be NULL");
  return Report(writer->writer->Close(Timeout(drain_timeout_ms)));
}

void sluice_writer_destroy(sluice_writer_t* writer) { delete writer; }

sluice_err_t sluice_reader_open(const char* name, int open_timeout_ms, sluice_reader_t** reader) {
  if (name == nullptr || reader == nullptr) {
    return InvalidArgument("name and reader must not be NULL");
  }
  sluice::ReaderOptions options;
  options.open_timeout = open_timeout_ms < 0 ? sluice::SegmentReader::kForever
                                             : std::chrono::milliseconds(open_timeout_ms);
  auto opened = sluice::SegmentReader::Open(name, options);
  if (!opened.ok()) return Report(opened.status());
  *reader = new sluice_reader_s{opened.MoveValue()};
  return SLUICE_OK;
}

sluice_err_t sluice_reader_next(sluice_reader_t* reader, int timeout_ms, sluice_object_t* object) {
  if (reader == nullptr || object == nullptr) {
    return InvalidArgument("reader and object must not be NULL");
  }
  auto next = reader->reader->Next(Timeout(timeout_ms));
  if (!next.ok()) return Report(next.status());
  *object = {next->data,         next->length,    next->object_id,
             next->record_count, next->partition, next->first_offset,
             next->last_offset,  next->slot,      next->generation};
  return SLUICE_OK;
}

sluice_err_t sluice_reader_release(sluice_reader_t* reader, const sluice_object_t* object) {
  if (reader == nullptr || object == nullptr) {
    return InvalidArgument("reader and object must not be NULL");
  }
  sluice::ObjectView view;
  view.slot = object->slot;
  view.generation = object->generation;
  return Report(reader->reader->Release(view));
}

void sluice_reader_detach(sluice_reader_t* reader) {
  if (reader != nullptr) reader->reader->Detach();
}

void sluice_reader_destroy(sluice_reader_t* reader) { delete reader; }

}  // extern "C"
