// Record batches built byte by byte, walked by RecordBatchReader: every field of a record, starts
// inside a batch, control batches, aborted transactions (read committed), batches cut short,
// malformed batches, and every prefix and byte flip of a valid fetch read without a crash.
#include <gtest/gtest.h>

#include "gtest_util.h"
#include "kafka/record_batch_reader.h"
#include "kafka_test_batches.h"

// The test batches and records are built with designated initializers that name only what a
// test is about; GCC 12 flags every member they leave at its default.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace sluice::brokerd::kafka {
namespace {

// ---- Records ----

TEST(RecordBatchReader, KeysValuesAndHeaders) {
  TestBatch batch{.base_offset = 100};
  batch.records = {
      {.offset_delta = 0, .key = "k0", .value = "v0"},
      {.offset_delta = 1, .key = std::nullopt, .value = "no key"},
      {.offset_delta = 2, .key = "tombstone", .value = std::nullopt},
      {.offset_delta = 3, .key = "", .value = std::string("\0\xff", 2)},
      {.offset_delta = 4,
       .key = "h",
       .value = "with headers",
       .headers = {{"sluice.job", "job-1"}, {"null", std::nullopt}, {"empty", ""}}},
      {.offset_delta = 5, .key = "after", .value = "headers"},
  };
  const Walk walk = ReadAll(EncodeBatch(batch));
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{100, 101, 102, 103, 104, 105}));
  ASSERT_EQ(walk.records.size(), 6u);
  EXPECT_EQ(walk.records[0].key, "k0");
  EXPECT_EQ(walk.records[0].value, "v0");
  EXPECT_EQ(walk.records[1].key, std::nullopt);
  EXPECT_EQ(walk.records[1].value, "no key");
  EXPECT_EQ(walk.records[2].key, "tombstone");
  EXPECT_EQ(walk.records[2].value, std::nullopt);
  EXPECT_EQ(walk.records[3].key, "");  // empty, not null
  EXPECT_EQ(walk.records[3].value, std::string("\0\xff", 2));
  EXPECT_EQ(walk.records[4].headers,
            (std::vector<TestHeader>{TestHeader{"sluice.job", "job-1"},
                                     TestHeader{"null", std::nullopt}, TestHeader{"empty", ""}}));
  EXPECT_TRUE(walk.records[5].headers.empty());
  EXPECT_EQ(walk.next_offset, 106);
}

TEST(RecordBatchReader, NullHeaderValueHasNoValue) {
  TestBatch batch;
  batch.records = {{.value = "v", .headers = {{"a", std::nullopt}, {"b", ""}}}};
  const std::string bytes = EncodeBatch(batch);
  RecordBatchReader reader(bytes, {}, 0);
  FetchedRecord record;
  ASSERT_TRUE(*reader.Next(record));
  ASSERT_EQ(record.headers.size(), 2u);
  EXPECT_FALSE(record.headers[0].has_value);
  EXPECT_TRUE(record.headers[0].value.empty());
  EXPECT_TRUE(record.headers[1].has_value);
  EXPECT_TRUE(record.headers[1].value.empty());
}

TEST(RecordBatchReader, HeadersAreClearedNotShrunk) {
  TestBatch batch;
  batch.records = {
      {.offset_delta = 0, .value = "a", .headers = {{"1", "x"}, {"2", "y"}, {"3", "z"}}},
      {.offset_delta = 1, .value = "b"}};
  const std::string bytes = EncodeBatch(batch);
  RecordBatchReader reader(bytes, {}, 0);
  FetchedRecord record;
  ASSERT_TRUE(*reader.Next(record));
  const size_t capacity = record.headers.capacity();
  ASSERT_GE(capacity, 3u);
  ASSERT_TRUE(*reader.Next(record));
  EXPECT_TRUE(record.headers.empty());
  EXPECT_EQ(record.headers.capacity(), capacity);
}

TEST(RecordBatchReader, ViewsPointIntoTheBatches) {
  const std::string bytes = EncodeBatch(Consecutive(0, 2));
  RecordBatchReader reader(bytes, {}, 0);
  FetchedRecord record;
  ASSERT_TRUE(*reader.Next(record));
  EXPECT_EQ(reader.decompressed(), nullptr);
  ASSERT_TRUE(record.value);
  EXPECT_GE(record.value->data(), bytes.data());
  EXPECT_LT(record.value->data(), bytes.data() + bytes.size());
}

TEST(RecordBatchReader, CreateTimeAddsTheDelta) {
  TestBatch batch{.base_timestamp = 1'700'000'000'000, .max_timestamp = 1'700'000'000'500};
  batch.records = {{.offset_delta = 0, .timestamp_delta = 0, .value = "a"},
                   {.offset_delta = 1, .timestamp_delta = 500, .value = "b"},
                   {.offset_delta = 2, .timestamp_delta = -3, .value = "c"}};
  const Walk walk = ReadAll(EncodeBatch(batch));
  ASSERT_OK(walk.status);
  ASSERT_EQ(walk.records.size(), 3u);
  EXPECT_EQ(walk.records[0].timestamp_ms, 1'700'000'000'000);
  EXPECT_EQ(walk.records[1].timestamp_ms, 1'700'000'000'500);
  EXPECT_EQ(walk.records[2].timestamp_ms, 1'699'999'999'997);
}

TEST(RecordBatchReader, LogAppendTimeIsTheBatchMaxTimestamp) {
  TestBatch batch{.attributes = kLogAppendTime, .base_timestamp = 10, .max_timestamp = 77};
  batch.records = {{.offset_delta = 0, .timestamp_delta = 1, .value = "a"},
                   {.offset_delta = 1, .timestamp_delta = 5, .value = "b"}};
  const Walk walk = ReadAll(EncodeBatch(batch));
  ASSERT_OK(walk.status);
  ASSERT_EQ(walk.records.size(), 2u);
  EXPECT_EQ(walk.records[0].timestamp_ms, 77);
  EXPECT_EQ(walk.records[1].timestamp_ms, 77);
}

TEST(RecordBatchReader, FromOffsetInsideABatch) {
  const std::string bytes = EncodeBatch(Consecutive(10, 5)) + EncodeBatch(Consecutive(15, 2));
  const Walk walk = ReadAll(bytes, {}, 12);
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{12, 13, 14, 15, 16}));
  EXPECT_EQ(walk.values().front(), "v12");
  EXPECT_EQ(walk.next_offset, 17);
}

TEST(RecordBatchReader, FromOffsetPastEveryBatchKeepsIt) {
  const std::string bytes = EncodeBatch(Consecutive(10, 5));
  const Walk walk = ReadAll(bytes, {}, 40);
  ASSERT_OK(walk.status);
  EXPECT_TRUE(walk.records.empty());
  EXPECT_EQ(walk.next_offset, 40);
}

TEST(RecordBatchReader, OffsetGapsAndLastOffsetDelta) {
  // Compaction leaves gaps and keeps the batch's last offset delta.
  TestBatch batch{.base_offset = 10, .last_offset_delta = 7};
  batch.records = {Value(0, "a"), Value(2, "b"), Value(5, "c")};
  const Walk walk = ReadAll(EncodeBatch(batch));
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{10, 12, 15}));
  EXPECT_EQ(walk.next_offset, 18);
}

TEST(RecordBatchReader, EmptyBatchAdvancesTheNextOffset) {
  TestBatch empty{.base_offset = 3, .last_offset_delta = 4};
  const std::string bytes =
      EncodeBatch(Consecutive(0, 3)) + EncodeBatch(empty) + EncodeBatch(Consecutive(8, 1));
  const Walk walk = ReadAll(bytes);
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{0, 1, 2, 8}));
  EXPECT_EQ(walk.next_offset, 9);
}

TEST(RecordBatchReader, NextOffsetMovesWithEachBatch) {
  const std::string bytes = EncodeBatch(Consecutive(0, 2)) + EncodeBatch(Consecutive(2, 2));
  RecordBatchReader reader(bytes, {}, 0);
  FetchedRecord record;
  EXPECT_EQ(reader.next_offset(), 0);
  ASSERT_TRUE(*reader.Next(record));
  EXPECT_EQ(reader.next_offset(), 0);  // the batch is not read to its end yet
  ASSERT_TRUE(*reader.Next(record));
  EXPECT_EQ(reader.next_offset(), 2);
  ASSERT_TRUE(*reader.Next(record));
  ASSERT_TRUE(*reader.Next(record));
  EXPECT_EQ(reader.next_offset(), 4);
  EXPECT_FALSE(*reader.Next(record));
}

TEST(RecordBatchReader, BatchCutShortEndsTheWalk) {
  const std::string first = EncodeBatch(Consecutive(0, 3));
  const std::string second = EncodeBatch(Consecutive(3, 3));
  // Cut inside the records, inside the header, and before the length is complete.
  for (const size_t kept : {second.size() - 1, size_t{30}, size_t{12}, size_t{11}, size_t{0}}) {
    const Walk walk = ReadAll(first + second.substr(0, kept));
    ASSERT_OK(walk.status) << kept;
    EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{0, 1, 2})) << kept;
    EXPECT_EQ(walk.next_offset, 3) << kept;
    EXPECT_EQ(NextFetchOffset(first + second.substr(0, kept), 0), 3) << kept;
  }
}

TEST(RecordBatchReader, ControlBatchIsSkipped) {
  const std::string bytes = EncodeBatch(Consecutive(0, 2, kTransactional, 5)) +
                            Marker(2, 5, /*abort=*/false) + EncodeBatch(Consecutive(3, 1));
  const Walk walk = ReadAll(bytes);
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(walk.next_offset, 4);
}

TEST(RecordBatchReader, ControlBatchAtTheEndStillAdvances) {
  const std::string bytes = EncodeBatch(Consecutive(0, 2, kTransactional, 5)) + Marker(2, 5, false);
  const Walk walk = ReadAll(bytes);
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(walk.next_offset, 3);
}

// Producer 7's transaction is aborted, producer 8's, interleaved with it, commits.
std::string InterleavedTransactions() {
  return EncodeBatch(Consecutive(0, 2, kTransactional, 7)) +
         EncodeBatch(Consecutive(2, 2, kTransactional, 8)) +
         EncodeBatch(Consecutive(4, 1, kTransactional, 7)) + Marker(5, 7, /*abort=*/true) +
         Marker(6, 8, /*abort=*/false) + EncodeBatch(Consecutive(7, 1));
}

TEST(RecordBatchReader, AbortedTransactionIsSkippedCommittedOneKept) {
  const std::vector<AbortedTransaction> aborted = {{.producer_id = 7, .first_offset = 0}};
  const Walk walk = ReadAll(InterleavedTransactions(), aborted);
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{2, 3, 7}));
  EXPECT_EQ(walk.next_offset, 8);
}

TEST(RecordBatchReader, ReadUncommittedKeepsEveryDataBatch) {
  const Walk walk = ReadAll(InterleavedTransactions());
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{0, 1, 2, 3, 4, 7}));
}

TEST(RecordBatchReader, SameProducerAbortsTwiceThenCommits) {
  const std::string bytes = EncodeBatch(Consecutive(0, 2, kTransactional, 7)) + Marker(2, 7, true) +
                            EncodeBatch(Consecutive(3, 2, kTransactional, 7)) + Marker(5, 7, true) +
                            EncodeBatch(Consecutive(6, 1, kTransactional, 7)) + Marker(7, 7, false);
  const std::vector<AbortedTransaction> aborted = {{.producer_id = 7, .first_offset = 0},
                                                   {.producer_id = 7, .first_offset = 3}};
  const Walk walk = ReadAll(bytes, aborted);
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{6}));
  EXPECT_EQ(walk.next_offset, 8);
}

// The fetch starts after the aborted transaction's data, before its marker: the marker must
// retire it, or it would hide the same producer's next, committed, transaction.
TEST(RecordBatchReader, AbortedTransactionBegunBeforeTheFetchEndsAtItsMarker) {
  const std::string bytes = Marker(10, 7, true) +
                            EncodeBatch(Consecutive(11, 2, kTransactional, 7)) +
                            Marker(13, 7, false);
  const std::vector<AbortedTransaction> aborted = {{.producer_id = 7, .first_offset = 5}};
  const Walk walk = ReadAll(bytes, aborted, 10);
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{11, 12}));
  EXPECT_EQ(walk.next_offset, 14);
}

TEST(RecordBatchReader, IdempotentBatchOfAnAbortingProducerIdIsKept) {
  // Only transactional batches can be aborted.
  const std::string bytes =
      EncodeBatch(Consecutive(0, 1, kTransactional, 7)) + EncodeBatch(Consecutive(1, 1, 0, 7));
  const std::vector<AbortedTransaction> aborted = {{.producer_id = 7, .first_offset = 0}};
  const Walk walk = ReadAll(bytes, aborted);
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{1}));
}

// ---- Malformed batches ----

TEST(RecordBatchReader, BadMagicIsAnError) {
  TestBatch bad = Consecutive(2, 1);
  bad.magic = 1;
  const Walk walk = ReadAll(EncodeBatch(Consecutive(0, 2)) + EncodeBatch(bad));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "offset 2"));
  EXPECT_TRUE(Mentions(walk.status.message(), "magic 1"));
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{0, 1}));  // the batches before it were read
  EXPECT_EQ(walk.next_offset, 2);
  EXPECT_EQ(NextFetchOffset(EncodeBatch(Consecutive(0, 2)) + EncodeBatch(bad), 0), 2);
}

TEST(RecordBatchReader, BatchLengthShorterThanItsHeaderIsAnError) {
  std::string bytes = EncodeBatch(Consecutive(0, 1));
  for (const int32_t length : {-1, 0, 48}) {
    std::string broken = bytes;
    std::string field;
    PutBig(field, length);
    broken.replace(8, 4, field);
    const Walk walk = ReadAll(broken);
    EXPECT_RAISES(InvalidArgument, walk.status) << length;
    EXPECT_TRUE(Mentions(walk.status.message(), "batch length")) << length;
  }
}

std::string OneRawRecordBatch(const std::string& records, int32_t record_count = 1) {
  return EncodeBatch({.base_offset = 40,
                      .records = {Value(0, "")},
                      .record_count = record_count,
                      .raw_records = records});
}

TEST(RecordBatchReader, RecordLengthOverrunningTheBatchIsAnError) {
  std::string record = EncodeRecord(Value(0, "value"));
  record[0] = static_cast<char>(record[0] + 2);  // one more byte than there is
  const Walk walk = ReadAll(OneRawRecordBatch(record));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "offset 40"));
  EXPECT_TRUE(Mentions(walk.status.message(), "length"));
}

TEST(RecordBatchReader, NegativeRecordLengthIsAnError) {
  std::string record;
  PutZigZag(record, -3);
  const Walk walk = ReadAll(OneRawRecordBatch(record));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "length"));
}

TEST(RecordBatchReader, ValueLengthOverrunningTheRecordIsAnError) {
  // The value claims 50 bytes; the record ends after 5, though the batch goes on.
  std::string body(1, '\0');
  PutZigZag(body, 0);
  PutZigZag(body, 0);
  PutZigZag(body, -1);
  PutZigZag(body, 50);
  body += "value";
  std::string record;
  PutZigZag(record, static_cast<int64_t>(body.size()));
  record += body + std::string(60, 'x');
  const Walk walk = ReadAll(OneRawRecordBatch(record));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "value"));
}

TEST(RecordBatchReader, KeyLengthBelowMinusOneIsAnError) {
  std::string body(1, '\0');
  PutZigZag(body, 0);
  PutZigZag(body, 0);
  PutZigZag(body, -2);
  PutZigZag(body, -1);
  PutZigZag(body, 0);
  std::string record;
  PutZigZag(record, static_cast<int64_t>(body.size()));
  const Walk walk = ReadAll(OneRawRecordBatch(record + body));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "key"));
}

TEST(RecordBatchReader, VarintRunningPastTheRecordIsAnError) {
  // The offset delta's last byte still has its continuation bit set.
  std::string body(1, '\0');
  PutZigZag(body, 0);
  body.push_back(static_cast<char>(0x81));
  std::string record;
  PutZigZag(record, static_cast<int64_t>(body.size()));
  const Walk walk = ReadAll(OneRawRecordBatch(record + body + std::string(10, '\0')));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "offset delta"));
}

TEST(RecordBatchReader, VarintLongerThanFiveBytesIsAnError) {
  // A key length of six bytes, all continuation but the last.
  std::string body(1, '\0');
  PutZigZag(body, 0);
  PutZigZag(body, 0);
  body += std::string("\x80\x80\x80\x80\x80\x00", 6);
  PutZigZag(body, -1);
  PutZigZag(body, 0);
  std::string record;
  PutZigZag(record, static_cast<int64_t>(body.size()));
  const Walk walk = ReadAll(OneRawRecordBatch(record + body));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "key"));
}

TEST(RecordBatchReader, RecordLengthVarintAtTheEndIsAnError) {
  const Walk walk = ReadAll(OneRawRecordBatch(std::string(1, '\x80')));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "length"));
}

TEST(RecordBatchReader, BytesAfterTheRecordsFieldsAreAnError) {
  std::string record = EncodeRecord(Value(0, "value"));
  record[0] = static_cast<char>(record[0] + 2);  // one byte longer than its fields
  record.push_back('x');
  const Walk walk = ReadAll(OneRawRecordBatch(record));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "after its headers"));
}

TEST(RecordBatchReader, RecordCountThatDoesNotMatchIsAnError) {
  const std::string two = EncodeRecord(Value(0, "a")) + EncodeRecord(Value(1, "b"));
  const Walk too_many = ReadAll(OneRawRecordBatch(two, 3));
  EXPECT_RAISES(InvalidArgument, too_many.status);
  EXPECT_TRUE(Mentions(too_many.status.message(), "1 records early"));
  const Walk too_few = ReadAll(OneRawRecordBatch(two, 1));
  EXPECT_RAISES(InvalidArgument, too_few.status);
  EXPECT_TRUE(Mentions(too_few.status.message(), "after its last record"));
  const Walk negative = ReadAll(OneRawRecordBatch(two, -1));
  EXPECT_RAISES(InvalidArgument, negative.status);
  EXPECT_TRUE(Mentions(negative.status.message(), "record count"));
}

TEST(RecordBatchReader, NullHeaderKeyIsAnError) {
  std::string body(1, '\0');
  PutZigZag(body, 0);
  PutZigZag(body, 0);
  PutZigZag(body, -1);
  PutZigZag(body, -1);
  PutZigZag(body, 1);
  PutZigZag(body, -1);
  PutZigZag(body, -1);
  std::string record;
  PutZigZag(record, static_cast<int64_t>(body.size()));
  const Walk walk = ReadAll(OneRawRecordBatch(record + body));
  EXPECT_RAISES(InvalidArgument, walk.status);
  EXPECT_TRUE(Mentions(walk.status.message(), "header"));
}

TEST(RecordBatchReader, ErrorEndsTheWalk) {
  TestBatch bad = Consecutive(1, 1);
  bad.magic = 0;
  const std::string bytes = EncodeBatch(bad) + EncodeBatch(Consecutive(2, 1));
  RecordBatchReader reader(bytes, {}, 0);
  FetchedRecord record;
  const Result<bool> bad_magic = reader.Next(record);
  EXPECT_RAISES(InvalidArgument, bad_magic);
  EXPECT_TRUE(Mentions(bad_magic.status().message(), "magic 0"));
  Result<bool> after = reader.Next(record);
  ASSERT_OK(after);
  EXPECT_FALSE(*after);
}

// ---- NextFetchOffset ----

TEST(NextFetchOffset, LastCompleteBatch) {
  TestBatch gappy{.base_offset = 5, .last_offset_delta = 9};
  gappy.records = {Value(0, "a")};
  const std::string bytes = EncodeBatch(Consecutive(0, 5)) + EncodeBatch(gappy);
  EXPECT_EQ(NextFetchOffset(bytes, 0), 15);
  EXPECT_EQ(NextFetchOffset(bytes, 20), 20);
  EXPECT_EQ(NextFetchOffset(bytes + EncodeBatch(Consecutive(15, 3)).substr(0, 40), 0), 15);
  EXPECT_EQ(NextFetchOffset("", 7), 7);
  EXPECT_EQ(NextFetchOffset(std::string(11, '\0'), 7), 7);
  EXPECT_EQ(NextFetchOffset(std::string(100, '\0'), 7), 7);  // batch length 0: not a batch
}

TEST(NextFetchOffset, AgreesWithTheReaderOverSkippedBatches) {
  const std::vector<AbortedTransaction> aborted = {{.producer_id = 7, .first_offset = 0}};
  const std::string bytes = InterleavedTransactions();
  const Walk walk = ReadAll(bytes, aborted);
  ASSERT_OK(walk.status);
  EXPECT_EQ(NextFetchOffset(bytes, 0), walk.next_offset);
  EXPECT_EQ(NextFetchOffset(bytes, 0), 8);
}

// ---- No input crashes the reader ----

std::string MixedBatches() {
  TestBatch headers{.base_offset = 8};
  headers.records = {
      {.offset_delta = 0, .key = "k", .value = "v", .headers = {{"a", "b"}, {"n", std::nullopt}}},
      {.offset_delta = 1, .key = std::nullopt, .value = std::nullopt}};
  TestBatch gzip{.base_offset = 10, .attributes = kGzip, .compress = GzipCompress};
  gzip.records = VariedRecords(4);
  gzip.records.back().value = "small";
  TestBatch zstd = gzip;
  zstd.base_offset = 14;
  zstd.attributes = kZstd;
  zstd.compress = Zstd;
  TestBatch snappy = gzip;
  snappy.base_offset = 18;
  snappy.attributes = kSnappy;
  snappy.compress = XerialSnappy;
  TestBatch lz4 = Consecutive(22, 2, kLz4);
  lz4.compress = Lz4Frame;
  return InterleavedTransactions() + EncodeBatch(headers) + EncodeBatch(gzip) + EncodeBatch(zstd) +
         EncodeBatch(snappy) + EncodeBatch(lz4);
}

TEST(RecordBatchReader, MixedBatchesReadCompletely) {
  const std::vector<AbortedTransaction> aborted = {{.producer_id = 7, .first_offset = 0}};
  const Walk walk = ReadAll(MixedBatches(), aborted);
  ASSERT_OK(walk.status);
  EXPECT_EQ(walk.offsets(), (std::vector<int64_t>{2, 3, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                                                  19, 20, 21, 22, 23}));
  EXPECT_EQ(walk.next_offset, 24);
}

// Every prefix is whole batches then one cut short: each reads without error, up to the batch
// cut short.
TEST(RecordBatchReader, EveryPrefixReadsToTheBatchCutShort) {
  const std::string bytes = MixedBatches();
  const std::vector<AbortedTransaction> aborted = {{.producer_id = 7, .first_offset = 0}};
  for (size_t size = 0; size <= bytes.size(); ++size) {
    const std::string prefix = bytes.substr(0, size);  // its own buffer: overreads show in ASan
    const Walk walk = ReadAll(prefix, aborted);
    ASSERT_OK(walk.status) << size;
    EXPECT_EQ(walk.next_offset, NextFetchOffset(prefix, 0)) << size;
  }
}

TEST(RecordBatchReader, ByteFlipsReadWithoutCrashing) {
  const std::string bytes = MixedBatches();
  const std::vector<AbortedTransaction> aborted = {{.producer_id = 7, .first_offset = 0}};
  size_t errors = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (const int flip : {0x01, 0x80, 0xFF}) {
      std::string broken = bytes;
      broken[at] = static_cast<char>(broken[at] ^ flip);
      const Walk walk = ReadAll(broken, aborted);
      if (walk.status.ok()) {
        // A walk that ends well has passed every complete batch.
        EXPECT_EQ(walk.next_offset, NextFetchOffset(broken, 0)) << at << " ^ " << flip;
      } else {
        ++errors;
      }
    }
  }
  EXPECT_GT(errors, 0u);
}

}  // namespace
}  // namespace sluice::brokerd::kafka
