// A tiny segment (docs/formats.md, "Segment") forced through thousands of wrap-arounds of its ring:
// every object, one content-rule row carrying its sequence number, arrives once, in order and
// intact, while a reader that holds every slot before it releases any makes the writer wait on a
// full ring each round. The Java twin is client's SegmentWraparoundIT.
#include <gtest/gtest.h>

#include <deque>
#include <thread>
#include <vector>

#include "content_rule.h"
#include "sluice/segment_reader.h"
#include "sluice/segment_writer.h"
#include "test_util.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using testing::ScopedName;

constexpr uint64_t kObjects = 5000;
constexpr size_t kValueSize = 8;

// Publishes object i holding content-rule row i alone.
Status PublishRow(SegmentWriter& writer, ObjectKind kind, uint64_t i) {
  SLUICE_ASSIGN_OR_RETURN(auto slot, writer.Acquire(10s));
  if (kind == ObjectKind::kRecords) {
    std::deque<content::OwnedRecord> store;
    RecordsBatchBuilder builder;
    builder.Add(content::AppendRecord(store, i, kValueSize));
    SLUICE_ASSIGN_OR_RETURN(auto encoded, builder.Finish(slot.data, slot.capacity, slot.stores));
    return writer.Publish(encoded).status();
  }
  std::deque<content::OwnedChunk> store;
  ChunksBatchBuilder builder;
  builder.Add(content::AppendChunk(store, i, kObjects, kValueSize));
  SLUICE_ASSIGN_OR_RETURN(auto encoded, builder.Finish(slot.data, slot.capacity, slot.stores));
  return writer.Publish(encoded).status();
}

class SegmentWraparoundTest : public ::testing::TestWithParam<ObjectKind> {};

TEST_P(SegmentWraparoundTest, EveryObjectArrivesOnceInOrderThroughAFullRing) {
  ScopedName name("wraparound");
  WriterOptions options = testing::SmallWriter(name.name(), GetParam());
  options.slot_count = 3;
  options.slot_size = 1024;  // one row of either kind: about 640 and 860 bytes
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));

  Status written;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kObjects && written.ok(); ++i) {
      written = PublishRow(*writer, GetParam(), i);
    }
    if (written.ok()) written = writer->Close(10s);
  });

  // The reader takes objects until it holds every slot, then releases them all: each round the
  // writer finds the ring full and waits for the releases.
  content::Verifier verifier(GetParam());
  std::vector<ObjectView> held;
  uint64_t full_rings = 0;
  Status status;
  while (status.ok()) {
    auto object = reader->Next(10s);
    if (object.ok()) {
      auto batch = DecodeObject(*object, reader->header().schema);
      status = batch.ok() ? verifier.Add(**batch) : batch.status();
      held.push_back(*object);
      if (held.size() < options.slot_count) continue;
      ++full_rings;
    } else {
      status = object.status();
    }
    for (const ObjectView& view : held) ASSERT_OK(reader->Release(view));
    held.clear();
  }
  producer.join();

  ASSERT_RAISES(EndOfStream, status);
  ASSERT_OK(written);
  EXPECT_OK(verifier.Finish());
  EXPECT_EQ(verifier.rows(), kObjects) << "a row lost or duplicated";
  EXPECT_EQ(full_rings, kObjects / options.slot_count);
}

INSTANTIATE_TEST_SUITE_P(BothKinds, SegmentWraparoundTest,
                         ::testing::Values(ObjectKind::kRecords, ObjectKind::kChunks),
                         [](const ::testing::TestParamInfo<ObjectKind>& kind) {
                           return kind.param == ObjectKind::kRecords ? "Records" : "Chunks";
                         });

}  // namespace
}  // namespace sluice
