// Proves that Arrow C++ from the pyarrow wheel links and works: a record batch goes through an
// IPC message in a plain buffer and comes back equal.
#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "gtest_util.h"

namespace {

arrow::Result<std::shared_ptr<arrow::RecordBatch>> MakeBatch() {
  arrow::Int64Builder offsets;
  arrow::BinaryBuilder values;
  for (int64_t i = 0; i < 1000; ++i) {
    ARROW_RETURN_NOT_OK(offsets.Append(i));
    const std::string value = "value-" + std::to_string(i);
    ARROW_RETURN_NOT_OK(values.Append(value));
  }
  auto schema = arrow::schema(
      {arrow::field("offset", arrow::int64(), false), arrow::field("value", arrow::binary())});
  ARROW_ASSIGN_OR_RAISE(auto offset_array, offsets.Finish());
  ARROW_ASSIGN_OR_RAISE(auto value_array, values.Finish());
  return arrow::RecordBatch::Make(schema, 1000, {offset_array, value_array});
}

TEST(ArrowIpc, RecordBatchRoundTripsThroughABuffer) {
  ASSERT_OK_AND_ASSIGN(const auto batch, MakeBatch());

  ASSERT_OK_AND_ASSIGN(auto sink, arrow::io::BufferOutputStream::Create());
  ASSERT_OK_AND_ASSIGN(auto writer, arrow::ipc::MakeStreamWriter(sink, batch->schema()));
  ASSERT_OK(writer->WriteRecordBatch(*batch));
  ASSERT_OK(writer->Close());
  ASSERT_OK_AND_ASSIGN(const auto buffer, sink->Finish());

  auto source = std::make_shared<arrow::io::BufferReader>(buffer);
  ASSERT_OK_AND_ASSIGN(auto reader, arrow::ipc::RecordBatchStreamReader::Open(source));
  std::shared_ptr<arrow::RecordBatch> read;
  ASSERT_OK(reader->ReadNext(&read));
  ASSERT_NE(read, nullptr);
  EXPECT_TRUE(read->Equals(*batch));
  EXPECT_EQ(std::static_pointer_cast<arrow::BinaryArray>(read->column(1))->GetString(999),
            "value-999");

  std::shared_ptr<arrow::RecordBatch> end;
  ASSERT_OK(reader->ReadNext(&end));
  EXPECT_EQ(end, nullptr);
}

}  // namespace
