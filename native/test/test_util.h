// Helpers the segment tests share: unique segment names, publishing and reading content-rule
// objects, and reading a file into an aligned image; with gtest_util.h's assertions on a Status
// and its wait for a condition.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest_util.h"
#include "sluice/segment_reader.h"
#include "sluice/segment_writer.h"

namespace sluice::content {
class Verifier;
}  // namespace sluice::content

namespace sluice::testing {

// A segment name no other test (or earlier run) uses; the destructor removes leftovers.
class ScopedName {
 public:
  explicit ScopedName(const std::string& label);
  ~ScopedName();
  const std::string& name() const { return name_; }
  std::string path() const { return "/dev/shm/" + name_; }

 private:
  std::string name_;
};

WriterOptions SmallWriter(const std::string& name, ObjectKind kind = ObjectKind::kRecords);

// Publishes one RECORDS object holding content-rule records [first, first + count).
Status PublishRecords(SegmentWriter& writer, uint64_t first, uint64_t count,
                      std::chrono::nanoseconds timeout = std::chrono::seconds(5));

// Takes one object and checks it holds content-rule records from `verifier`'s position on.
Status TakeAndVerify(SegmentReader& reader, content::Verifier& verifier, bool release = true);

// A 32-bit field of a segment file, read apart from any mapping (for a test to watch shared
// state).
uint32_t ReadSegmentField32(const std::string& path, uint64_t offset);

// The whole file, in 8-byte aligned memory (the alignment Inspect needs); size in *size.
std::vector<uint64_t> ReadImage(const std::string& path, uint64_t* size);

}  // namespace sluice::testing
