// The four codecs as Kafka's clients compress with them (gzip, snappy raw and xerial-framed, lz4,
// zstd with and without its content size): decompressed alone, and in batches the reader walks,
// where a truncated or garbage payload is an error naming the batch.
#include <gtest/gtest.h>

#include "gtest_util.h"
#include "kafka/decompression.h"
#include "kafka/record_batch_reader.h"
#include "kafka_test_batches.h"

// The test batches and records are built with designated initializers that name only what a
// test is about; GCC 12 flags every member they leave at its default.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace sluice::brokerd::kafka {
namespace {

// ---- Compression ----

struct Codec {
  std::string name;
  int16_t attribute;
  std::function<std::string(const std::string&)> compress;
};

class CompressedBatches : public ::testing::TestWithParam<Codec> {};

TEST_P(CompressedBatches, RoundTrip) {
  const Codec& codec = GetParam();
  TestBatch first{.base_offset = 1000, .attributes = codec.attribute, .compress = codec.compress};
  first.records = VariedRecords(60);
  TestBatch second = first;
  second.base_offset = 1060;
  second.records.resize(10);
  const std::string bytes =
      EncodeBatch(first) + EncodeBatch(second) + EncodeBatch(Consecutive(1070, 1));
  ASSERT_LT(bytes.size(), size_t{1} << 20);  // compressed

  RecordBatchReader reader(bytes, {}, 0);
  FetchedRecord record;
  std::shared_ptr<const std::string> first_buffer;
  std::string_view first_value;
  for (int i = 0; i < 70; ++i) {
    Result<bool> more = reader.Next(record);
    ASSERT_OK(more);
    ASSERT_TRUE(*more);
    const TestRecord& expected = i < 60 ? first.records[i] : second.records[i - 60];
    EXPECT_EQ(record.offset, 1000 + i);
    EXPECT_EQ(record.timestamp_ms, 1000 + expected.timestamp_delta);
    EXPECT_EQ(record.key, expected.key);
    ASSERT_TRUE(record.value);
    EXPECT_EQ(*record.value, *expected.value) << i;
    EXPECT_EQ(record.headers.size(), expected.headers.size());
    // Views lie in the batch's own decompressed buffer.
    ASSERT_NE(reader.decompressed(), nullptr);
    EXPECT_GE(record.value->data(), reader.decompressed()->data());
    EXPECT_LE(record.value->data() + record.value->size(),
              reader.decompressed()->data() + reader.decompressed()->size());
    if (i == 0) {
      first_buffer = reader.decompressed();
      first_value = *record.value;
    }
  }
  EXPECT_NE(reader.decompressed(), first_buffer);   // a fresh buffer per batch
  EXPECT_EQ(first_value, *first.records[0].value);  // still valid: held by first_buffer
  ASSERT_TRUE(*reader.Next(record));
  EXPECT_EQ(record.offset, 1070);
  EXPECT_EQ(reader.decompressed(), nullptr);
  EXPECT_FALSE(*reader.Next(record));
  EXPECT_EQ(reader.next_offset(), 1071);
}

TEST_P(CompressedBatches, TruncatedPayloadIsAnError) {
  const Codec& codec = GetParam();
  TestBatch batch{.base_offset = 55, .attributes = codec.attribute};
  batch.records = VariedRecords(10);
  std::string compressed =
      codec.compress(EncodeBatch(TestBatch{.records = batch.records}).substr(61));
  compressed.resize(compressed.size() / 2);
  batch.raw_records = compressed;
  const Walk walk = ReadAll(EncodeBatch(batch));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "offset 55"));
  EXPECT_TRUE(walk.records.empty());
  EXPECT_EQ(walk.next_offset, 0);
}

TEST_P(CompressedBatches, GarbagePayloadIsAnError) {
  TestBatch batch{.base_offset = 56, .attributes = GetParam().attribute};
  batch.records = {Value(0, "a")};
  batch.raw_records = "this is not compressed, whatever the attributes say";
  const Walk walk = ReadAll(EncodeBatch(batch));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "offset 56"));
}

// Decompress alone: the bytes the codec was given come back, whatever the framing.
TEST_P(CompressedBatches, DecompressGivesBackTheBytes) {
  const Codec& codec = GetParam();
  const std::string plain = EncodeBatch(TestBatch{.records = VariedRecords(30)});
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const std::string> decompressed,
                       Decompress(codec.attribute, codec.compress(plain)));
  ASSERT_NE(decompressed, nullptr);
  EXPECT_EQ(*decompressed, plain);
}

INSTANTIATE_TEST_SUITE_P(
    Codecs, CompressedBatches,
    ::testing::Values(Codec{"Gzip", kGzip, GzipCompress},
                      Codec{"SnappyRaw", kSnappy,
                            [](const std::string& in) { return SnappyBlock(in); }},
                      Codec{"SnappyXerial", kSnappy, XerialSnappy}, Codec{"Lz4", kLz4, Lz4Frame},
                      Codec{"Zstd", kZstd, Zstd},
                      Codec{"ZstdWithoutContentSize", kZstd, ZstdWithoutContentSize}),
    [](const ::testing::TestParamInfo<Codec>& codec) { return codec.param.name; });

TEST(Decompress, UnknownCodecIsAnErrorNamingIt) {
  Result<std::shared_ptr<const std::string>> decompressed = Decompress(6, "abc");
  ASSERT_RAISES(InvalidArgument, decompressed);
  EXPECT_TRUE(Mentions(decompressed.status().message(), "unknown compression codec 6"));
}

TEST(RecordBatchReader, UnknownCodecIsAnError) {
  TestBatch batch{.base_offset = 9, .attributes = 5};
  batch.records = {Value(0, "a")};
  const Walk walk = ReadAll(EncodeBatch(batch));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "codec 5"));
}

}  // namespace
}  // namespace sluice::brokerd::kafka
