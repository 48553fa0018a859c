#include "test_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <fstream>

#include "content_rule.h"
#include "sluice/segment_image.h"

namespace sluice::testing {

ScopedName::ScopedName(const std::string& label) {
  static std::atomic<int> counter{0};
  name_ = "sluice-test-" + label + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

ScopedName::~ScopedName() {
  unlink(path().c_str());
  unlink((path() + ".bell").c_str());
}

WriterOptions SmallWriter(const std::string& name, ObjectKind kind) {
  WriterOptions options;
  options.name = name;
  options.kind = kind;
  options.slot_count = 4;
  options.slot_size = 16384;
  options.lane_count = 3;
  options.liveness_timeout = std::chrono::seconds(30);
  return options;
}

Status PublishRecords(SegmentWriter& writer, uint64_t first, uint64_t count,
                      std::chrono::nanoseconds timeout) {
  RecordsBatchBuilder builder;
  std::deque<content::OwnedRecord> store;
  for (uint64_t i = first; i < first + count; ++i) {
    builder.Add(content::AppendRecord(store, i, 32));
  }
  SLUICE_ASSIGN_OR_RETURN(auto slot, writer.Acquire(timeout));
  SLUICE_ASSIGN_OR_RETURN(auto encoded, builder.Finish(slot.data, slot.capacity, slot.stores));
  return writer.Publish(encoded).status();
}

Status TakeAndVerify(SegmentReader& reader, content::Verifier& verifier, bool release) {
  SLUICE_ASSIGN_OR_RETURN(auto object, reader.Next(std::chrono::seconds(5)));
  SLUICE_ASSIGN_OR_RETURN(auto batch, DecodeObject(object, reader.header().schema));
  SLUICE_RETURN_NOT_OK(verifier.Add(*batch));
  return release ? reader.Release(object) : Status::OK();
}

uint32_t ReadSegmentField32(const std::string& path, uint64_t offset) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return 0;
  uint32_t value = 0;
  (void)!pread(fd, &value, sizeof(value), static_cast<off_t>(offset));
  close(fd);
  return value;
}

std::vector<uint64_t> ReadImage(const std::string& path, uint64_t* size) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  *size = static_cast<uint64_t>(file.tellg());
  std::vector<uint64_t> image((*size + 7) / 8);
  file.seekg(0);
  file.read(reinterpret_cast<char*>(image.data()), static_cast<std::streamsize>(*size));
  return image;
}

}  // namespace sluice::testing
