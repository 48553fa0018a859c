// The in-place encoders write messages that stock Arrow reads, zero-copy, with the same body
// bytes Arrow's own IPC writer produces.
#include "sluice/batch_builder.h"

#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/api.h>
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "content_rule.h"
#include "gtest_util.h"
#include "sluice/schemas.h"

namespace sluice {
namespace {

// Slot memory, 8-byte aligned as IPC bodies need.
struct Slot {
  explicit Slot(size_t size) : words(size / 8) {}
  uint8_t* data() { return reinterpret_cast<uint8_t*>(words.data()); }
  size_t size() const { return words.size() * 8; }
  std::vector<uint64_t> words;
};

// Reads the message in slot[0, length) with stock Arrow, over a Buffer wrapping the memory, and
// validates it in full.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> ReadWithArrow(
    const uint8_t* data, size_t length, const std::shared_ptr<arrow::Schema>& schema) {
  arrow::io::BufferReader reader(
      std::make_shared<arrow::Buffer>(data, static_cast<int64_t>(length)));
  ARROW_ASSIGN_OR_RAISE(auto message, arrow::ipc::ReadMessage(&reader));
  if (message == nullptr) return arrow::Status::Invalid("no message in the slot");
  arrow::ipc::DictionaryMemo memo;
  ARROW_ASSIGN_OR_RAISE(
      auto batch,
      arrow::ipc::ReadRecordBatch(*message, schema, &memo, arrow::ipc::IpcReadOptions::Defaults()));
  ARROW_RETURN_NOT_OK(batch->ValidateFull());
  return batch;
}

// The body Arrow's own writer produces for `batch`.
arrow::Result<std::shared_ptr<arrow::Buffer>> ArrowBody(const arrow::RecordBatch& batch) {
  arrow::ipc::IpcPayload payload;
  ARROW_RETURN_NOT_OK(
      arrow::ipc::GetRecordBatchPayload(batch, arrow::ipc::IpcWriteOptions::Defaults(), &payload));
  ARROW_ASSIGN_OR_RAISE(auto out, arrow::io::BufferOutputStream::Create());
  int32_t metadata_length = 0;
  ARROW_RETURN_NOT_OK(arrow::ipc::WriteIpcPayload(payload, arrow::ipc::IpcWriteOptions::Defaults(),
                                                  out.get(), &metadata_length));
  ARROW_ASSIGN_OR_RAISE(auto whole, out->Finish());
  return arrow::SliceBuffer(whole, metadata_length);
}

bool Within(const void* pointer, const uint8_t* begin, size_t size) {
  const auto* p = static_cast<const uint8_t*>(pointer);
  return p >= begin && p < begin + size;
}

TEST(RecordsBatchBuilder, StockArrowReadsItZeroCopy) {
  RecordsBatchBuilder builder;
  std::deque<content::OwnedRecord> store;
  for (uint64_t i = 0; i < 20; ++i) builder.Add(content::AppendRecord(store, i, 50));
  const size_t expected = builder.EncodedSize();
  Slot slot(64 * 1024);
  auto encoded = builder.Finish(slot.data(), slot.size());
  ASSERT_OK(encoded);
  EXPECT_EQ(encoded->length, expected);
  EXPECT_EQ(encoded->record_count, 20u);
  EXPECT_EQ(encoded->partition, -1);  // i % 4 spans partitions
  EXPECT_EQ(encoded->first_offset, 0);
  EXPECT_EQ(encoded->last_offset, 19);
  EXPECT_EQ(builder.num_rows(), 0u);

  ASSERT_OK_AND_ASSIGN(auto batch, ReadWithArrow(slot.data(), encoded->length, RecordsSchema()));
  ASSERT_EQ(batch->num_rows(), 20);
  EXPECT_TRUE(batch->schema()->Equals(*RecordsSchema()));
  content::Verifier verifier(ObjectKind::kRecords);
  EXPECT_OK(verifier.Add(*batch));
  EXPECT_EQ(verifier.rows(), 20u);
  // Zero-copy: the values Arrow hands out are the slot's bytes.
  const auto& values = static_cast<const arrow::BinaryArray&>(*batch->column(4));
  EXPECT_TRUE(Within(values.value_data()->data(), slot.data(), encoded->length));

  // The body is byte for byte what Arrow's writer makes of the same batch.
  ASSERT_OK_AND_ASSIGN(const auto body, ArrowBody(*batch));
  ASSERT_LE(static_cast<size_t>(body->size()), encoded->length);
  const size_t body_start = encoded->length - static_cast<size_t>(body->size());
  EXPECT_EQ(std::memcmp(slot.data() + body_start, body->data(), body->size()), 0);
}

TEST(RecordsBatchBuilder, OnePartitionIsReportedAndNullsSurvive) {
  RecordsBatchBuilder builder;
  const RecordHeader header{"trace", "abc"};
  builder.Add({3, 100, 5, std::nullopt, std::nullopt, {&header, 1}});
  builder.Add({3, 101, 6, "key", "", {}});
  Slot slot(4096);
  auto encoded = builder.Finish(slot.data(), slot.size());
  ASSERT_OK(encoded);
  EXPECT_EQ(encoded->partition, 3);
  EXPECT_EQ(encoded->first_offset, 100);
  EXPECT_EQ(encoded->last_offset, 101);
  ASSERT_OK_AND_ASSIGN(auto batch, ReadWithArrow(slot.data(), encoded->length, RecordsSchema()));
  EXPECT_TRUE(batch->column(3)->IsNull(0));
  EXPECT_TRUE(batch->column(4)->IsNull(0));
  EXPECT_EQ(static_cast<const arrow::BinaryArray&>(*batch->column(3)).GetView(1), "key");
  EXPECT_FALSE(batch->column(4)->IsNull(1));
  const auto& headers = static_cast<const arrow::ListArray&>(*batch->column(5));
  EXPECT_EQ(headers.value_length(0), 1);
  EXPECT_EQ(headers.value_length(1), 0);
}

TEST(ChunksBatchBuilder, StockArrowReadsItWithArrowsOwnBody) {
  ChunksBatchBuilder builder;
  std::deque<content::OwnedChunk> store;
  for (uint64_t i = 0; i < 11; ++i) builder.Add(content::AppendChunk(store, i, 11, 100));
  Slot slot(8192);
  const size_t expected = builder.EncodedSize();
  auto encoded = builder.Finish(slot.data(), slot.size());
  ASSERT_OK(encoded);
  EXPECT_EQ(encoded->length, expected);
  EXPECT_EQ(encoded->partition, -1);
  ASSERT_OK_AND_ASSIGN(auto batch, ReadWithArrow(slot.data(), encoded->length, ChunksSchema()));
  content::Verifier verifier(ObjectKind::kChunks);
  EXPECT_OK(verifier.Add(*batch));
  EXPECT_OK(verifier.Finish());
  ASSERT_OK_AND_ASSIGN(const auto body, ArrowBody(*batch));
  const size_t body_start = encoded->length - static_cast<size_t>(body->size());
  EXPECT_EQ(std::memcmp(slot.data() + body_start, body->data(), body->size()), 0);
}

// Payloads of 4 KiB and more take CopyBytes' loop, at every alignment the odd sizes give them;
// streamed or cached, the message is the same, and its body is Arrow's.
TEST(ChunksBatchBuilder, StreamingStoresWriteTheSameMessage) {
  std::deque<content::OwnedChunk> store;
  std::vector<Slot> slots;
  std::vector<size_t> lengths;
  for (PayloadStores stores : {PayloadStores::kCached, PayloadStores::kStreaming}) {
    ChunksBatchBuilder builder;
    for (uint64_t i = 0; i < 7; ++i) {
      builder.Add(content::AppendChunk(store, i, 7, 4096 + 1001 * i));
    }
    Slot& slot = slots.emplace_back(64 << 10);
    auto encoded = builder.Finish(slot.data(), slot.size(), stores);
    ASSERT_OK(encoded);
    lengths.push_back(encoded->length);
  }
  ASSERT_EQ(lengths[0], lengths[1]);
  EXPECT_EQ(std::memcmp(slots[0].data(), slots[1].data(), lengths[0]), 0);
  ASSERT_OK_AND_ASSIGN(auto batch, ReadWithArrow(slots[1].data(), lengths[1], ChunksSchema()));
  ASSERT_OK_AND_ASSIGN(const auto body, ArrowBody(*batch));
  EXPECT_EQ(std::memcmp(slots[1].data() + lengths[1] - static_cast<size_t>(body->size()),
                        body->data(), body->size()),
            0);
}

TEST(ChunksBatchBuilder, TooLargeForTheSlotFailsCleanly) {
  ChunksBatchBuilder builder;
  const std::string payload(5000, 'x');
  builder.Add({"job", "s", 0, false, payload});
  EXPECT_GT(builder.EncodedSize(), 4096u);
  Slot slot(4096);
  auto encoded = builder.Finish(slot.data(), slot.size());
  EXPECT_RAISES(TooLarge, encoded);
  EXPECT_NE(encoded.status().message().find("4096"), std::string::npos);
}

TEST(ChunksBatchBuilder, EncodedSizeWithPredictsTheNextSize) {
  ChunksBatchBuilder builder;
  const Chunk chunk{"job", "s", 0, true, "payload"};
  const size_t with = builder.EncodedSizeWith(chunk);
  builder.Add(chunk);
  EXPECT_EQ(builder.EncodedSize(), with);
}

TEST(ChunksBatchBuilder, AnEmptyObjectIsRefused) {
  ChunksBatchBuilder builder;
  Slot slot(4096);
  EXPECT_RAISES(InvalidState, builder.Finish(slot.data(), slot.size()));
}

}  // namespace
}  // namespace sluice
