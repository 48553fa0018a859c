// Proves that Arrow C++ from the pyarrow wheel links and works: a record batch goes through an
// IPC message in a plain buffer and comes back equal.
#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

namespace {

std::shared_ptr<arrow::RecordBatch> MakeBatch() {
  arrow::Int64Builder offsets;
  arrow::BinaryBuilder values;
  for (int64_t i = 0; i < 1000; ++i) {
    EXPECT_TRUE(offsets.Append(i).ok());
    const std::string value = "value-" + std::to_string(i);
    EXPECT_TRUE(values.Append(value).ok());
  }
  auto schema = arrow::schema(
      {arrow::field("offset", arrow::int64(), false), arrow::field("value", arrow::binary())});
  return arrow::RecordBatch::Make(schema, 1000,
                                  {offsets.Finish().ValueOrDie(), values.Finish().ValueOrDie()});
}

TEST(ArrowIpc, RecordBatchRoundTripsThroughABuffer) {
  const auto batch = MakeBatch();

  auto sink = arrow::io::BufferOutputStream::Create().ValueOrDie();
  auto writer = arrow::ipc::MakeStreamWriter(sink, batch->schema()).ValueOrDie();
  ASSERT_TRUE(writer->WriteRecordBatch(*batch).ok());
  ASSERT_TRUE(writer->Close().ok());
  const auto buffer = sink->Finish().ValueOrDie();

  auto source = std::make_shared<arrow::io::BufferReader>(buffer);
  auto reader = arrow::ipc::RecordBatchStreamReader::Open(source).ValueOrDie();
  std::shared_ptr<arrow::RecordBatch> read;
  ASSERT_TRUE(reader->ReadNext(&read).ok());
  ASSERT_NE(read, nullptr);
  EXPECT_TRUE(read->Equals(*batch));
  EXPECT_EQ(std::static_pointer_cast<arrow::BinaryArray>(read->column(1))->GetString(999),
            "value-999");

  std::shared_ptr<arrow::RecordBatch> end;
  ASSERT_TRUE(reader->ReadNext(&end).ok());
  EXPECT_EQ(end, nullptr);
}

}  // namespace
