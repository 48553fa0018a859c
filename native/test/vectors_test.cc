// Every committed test vector gives the outcome manifest.tsv states, through the inspection path
// and, for header faults, through a reader's Open.
#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/api.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "content_rule.h"
#include "sluice/schemas.h"
#include "sluice/segment_image.h"
#include "sluice/segment_reader.h"
#include "test_util.h"

namespace sluice {
namespace {

struct Entry {
  std::string file, result, objects, records, checksum, field;
};

std::vector<Entry> Manifest() {
  std::ifstream file(SLUICE_TESTDATA_DIR "/manifest.tsv");
  std::vector<Entry> entries;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Entry e;
    std::getline(fields, e.file, '\t');
    std::getline(fields, e.result, '\t');
    std::getline(fields, e.objects, '\t');
    std::getline(fields, e.records, '\t');
    std::getline(fields, e.checksum, '\t');
    std::getline(fields, e.field, '\t');
    entries.push_back(e);
  }
  return entries;
}

TEST(Vectors, ManifestCoversGoodAndBadImages) {
  const auto entries = Manifest();
  EXPECT_GE(entries.size(), 12u);
  size_t good = 0;
  for (const auto& e : entries) good += e.result == "ok";
  EXPECT_EQ(good, 2u);
}

TEST(Vectors, EveryEntryGivesItsExpectedOutcome) {
  for (const auto& e : Manifest()) {
    SCOPED_TRACE(e.file);
    uint64_t size = 0;
    const auto image = testing::ReadImage(SLUICE_TESTDATA_DIR "/" + e.file, &size);
    auto inspection = Inspect(reinterpret_cast<const uint8_t*>(image.data()), size);
    if (e.result == "ok") {
      ASSERT_OK(inspection);
      uint64_t records = 0;
      uint64_t checksum = 0;
      content::Verifier verifier(inspection->header.kind);
      for (const auto& batch : inspection->batches) {
        records += static_cast<uint64_t>(batch->num_rows());
        checksum += content::TotalsOf(*batch, inspection->header.kind).checksum;
        EXPECT_OK(verifier.Add(*batch));
      }
      EXPECT_EQ(std::to_string(inspection->objects.size()), e.objects);
      EXPECT_EQ(std::to_string(records), e.records);
      EXPECT_EQ(content::FormatChecksum(checksum), e.checksum);
      EXPECT_EQ(verifier.checksum(), checksum);
    } else {
      ASSERT_RAISES(Corrupt, inspection);
      EXPECT_EQ(inspection.status().message().rfind(e.field + " = ", 0), 0u)
          << inspection.status().message();
    }
  }
}

TEST(Vectors, AReaderRefusesEveryBrokenHeader) {
  for (const auto& e : Manifest()) {
    if (e.result != "error") continue;
    SCOPED_TRACE(e.file);
    testing::ScopedName name("vector");
    std::filesystem::copy_file(SLUICE_TESTDATA_DIR "/" + e.file, name.path());
    auto reader = SegmentReader::Open(name.name());
    // Slot faults only show when an object is taken; header faults stop Open itself.
    if (!reader.ok()) {
      EXPECT_EQ(reader.status().message().rfind(e.field + " = ", 0), 0u)
          << reader.status().message();
    } else {
      EXPECT_TRUE(e.field == "length" || e.field == "checksum" || e.field == "state_word" ||
                  e.field == "message" || e.field == "record_count")
          << e.field;
    }
  }
}

TEST(Vectors, TheObjectFilesAreStockArrowMessages) {
  for (const auto& [file, schema] : {std::pair{"records-object.arrow", RecordsSchema()},
                                     {"chunks-object.arrow", ChunksSchema()}}) {
    SCOPED_TRACE(file);
    uint64_t size = 0;
    const auto bytes = testing::ReadImage(std::string(SLUICE_TESTDATA_DIR "/") + file, &size);
    arrow::io::BufferReader reader(std::make_shared<arrow::Buffer>(
        reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int64_t>(size)));
    ASSERT_OK_AND_ASSIGN(auto message, arrow::ipc::ReadMessage(&reader));
    ASSERT_NE(message, nullptr);
    arrow::ipc::DictionaryMemo memo;
    auto batch = arrow::ipc::ReadRecordBatch(*message, schema, &memo,
                                             arrow::ipc::IpcReadOptions::Defaults());
    ASSERT_OK(batch);
    EXPECT_GT((*batch)->num_rows(), 0);
  }
}

}  // namespace
}  // namespace sluice
