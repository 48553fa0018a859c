// The layout constants against docs/formats.md itself: the test parses the spec's tables, so
// the code and the page cannot drift apart.
#include "sluice/layout.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "gtest_util.h"

namespace sluice {
namespace {

namespace h = layout::header;
namespace ln = layout::lane;
namespace s = layout::slot;

// field name -> offset, from the table under `heading` in docs/formats.md.
std::map<std::string, uint64_t> SpecTable(const std::string& heading) {
  std::ifstream file(SLUICE_TESTDATA_DIR "/../../docs/formats.md");
  std::string line;
  bool inside = false;
  std::map<std::string, uint64_t> offsets;
  const std::regex row(R"(^\| (\d+) \| [^|]+ \| `(\w+)` \|)");
  while (std::getline(file, line)) {
    if (line.rfind("### ", 0) == 0) inside = line.rfind(heading, 0) == 0;
    std::smatch match;
    if (inside && std::regex_search(line, match, row)) {
      offsets[match[2]] = std::stoull(match[1]);
    }
  }
  return offsets;
}

TEST(Layout, HeaderOffsetsAreTheSpecs) {
  const std::map<std::string, uint64_t> code = {
      {"magic", h::kMagic},
      {"version", h::kVersion},
      {"flags", h::kFlags},
      {"slot_count", h::kSlotCount},
      {"lane_count", h::kLaneCount},
      {"slot_size", h::kSlotSize},
      {"segment_size", h::kSegmentSize},
      {"lane_table_offset", h::kLaneTableOffset},
      {"lane_size", h::kLaneSize},
      {"ring_capacity", h::kRingCapacity},
      {"schema_length", h::kSchemaLength},
      {"descriptor_table_offset", h::kDescriptorTableOffset},
      {"slot_data_offset", h::kSlotDataOffset},
      {"liveness_timeout_ns", h::kLivenessTimeoutNs},
      {"object_kind", h::kObjectKind},
      {"header_size", h::kHeaderSize},
      {"writer_pid", h::kWriterPid},
      {"writer_heartbeat_ns", h::kWriterHeartbeatNs},
      {"writer_state", h::kWriterState},
      {"objects_published", h::kObjectsPublished},
      {"writer_waiting", h::kWriterWaiting},
      {"schema", h::kSchema},
  };
  EXPECT_EQ(SpecTable("### Header"), code);
}

TEST(Layout, LaneOffsetsAreTheSpecs) {
  const std::map<std::string, uint64_t> code = {
      {"lane_word", ln::kLaneWord},
      {"reader_pid", ln::kReaderPid},
      {"write_pos", ln::kWritePos},
      {"read_pos", ln::kReadPos},
      {"reader_heartbeat_ns", ln::kReaderHeartbeatNs},
      {"reader_waiting", ln::kReaderWaiting},
      {"ring", ln::kRing},
  };
  EXPECT_EQ(SpecTable("### Lane table"), code);
}

TEST(Layout, DescriptorOffsetsAreTheSpecs) {
  const std::map<std::string, uint64_t> code = {
      {"state_word", s::kStateWord},
      {"flags", s::kFlags},
      {"length", s::kLength},
      {"object_id", s::kObjectId},
      {"record_count", s::kRecordCount},
      {"partition", s::kPartition},
      {"first_offset", s::kFirstOffset},
      {"last_offset", s::kLastOffset},
      {"checksum", s::kChecksum},
  };
  EXPECT_EQ(SpecTable("### Slot descriptor"), code);
}

TEST(Layout, DerivedSizesFollowTheFormulas) {
  EXPECT_EQ(layout::RingCapacity(1), 1u);
  EXPECT_EQ(layout::RingCapacity(5), 8u);
  EXPECT_EQ(layout::RingCapacity(65536), 65536u);
  EXPECT_EQ(layout::LaneSize(8), 256u);  // align64(192 + 64)
  EXPECT_EQ(layout::LaneSize(1), 256u);  // align64(200)

  auto planned = SegmentLayout::Plan(5, 3, 1024, 400);
  ASSERT_OK(planned);
  EXPECT_EQ(planned->header_size, 4096u);
  EXPECT_EQ(planned->lane_table_offset, 4096u);
  EXPECT_EQ(planned->descriptor_table_offset, 4096u + 3 * 256);
  EXPECT_EQ(planned->slot_data_offset, 8192u);  // 4864 + 5 * 64 rounded up to 4096
  EXPECT_EQ(planned->segment_size, 8192u + 5 * 1024);
  EXPECT_EQ(planned->SlotDataOffset(2), 8192u + 2 * 1024);

  // A schema longer than the first page makes the header two pages.
  EXPECT_EQ(SegmentLayout::Plan(1, 1, 256, 4096 - 256 + 1)->header_size, 8192u);
}

TEST(Layout, PlanRejectsOutOfRangeParameters) {
  EXPECT_RAISES(InvalidArgument, SegmentLayout::Plan(0, 1, 256, 100));
  EXPECT_RAISES(InvalidArgument, SegmentLayout::Plan(65537, 1, 256, 100));
  EXPECT_RAISES(InvalidArgument, SegmentLayout::Plan(1, 32, 256, 100));
  EXPECT_RAISES(InvalidArgument, SegmentLayout::Plan(1, 1, 320 + 1, 100));
  EXPECT_RAISES(InvalidArgument, SegmentLayout::Plan(1, 1, 192, 100));
  EXPECT_NE(SegmentLayout::Plan(1, 32, 256, 100).status().message().find("lane_count"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice
