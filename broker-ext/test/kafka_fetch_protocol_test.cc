#include <gtest/gtest.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <functional>
#include <stdexcept>

// The test batches and records are built with designated initializers that name only what a
// test is about; GCC 12 flags every member they leave at its default.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "gtest_util.h"
#include "kafka/fetch_protocol.h"

namespace sluice::brokerd::kafka {
namespace {

// Whether an error message says `text`; shows the message when not.
::testing::AssertionResult Mentions(std::string_view message, std::string_view text) {
  if (message.find(text) != std::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << '"' << message << "\" does not mention \"" << text << '"';
}

// ---- A test-only encoder: builds what a broker sends, field by field. ----

template <typename T>
void PutBig(std::string& out, T value) {
  auto v = static_cast<std::make_unsigned_t<T>>(value);
  for (int shift = 8 * (static_cast<int>(sizeof v) - 1); shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> shift) & 0xFF));
  }
}

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutZigZag(std::string& out, int64_t v) {
  PutVarint(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

void PutNullable(std::string& out, const std::optional<std::string>& bytes) {
  if (!bytes) {
    PutZigZag(out, -1);
    return;
  }
  PutZigZag(out, static_cast<int64_t>(bytes->size()));
  out += *bytes;
}

// Hex digits, spaces ignored: expected bytes written out by hand.
std::string Hex(std::string_view digits) {
  std::string out;
  int pending = -1;
  for (const char c : digits) {
    if (c == ' ' || c == '\n') continue;
    const int nibble = c <= '9' ? c - '0' : c - 'a' + 10;
    if (pending < 0) {
      pending = nibble;
    } else {
      out.push_back(static_cast<char>(pending << 4 | nibble));
      pending = -1;
    }
  }
  return out;
}

struct TestHeader {
  std::string key;
  std::optional<std::string> value;
  bool operator==(const TestHeader&) const = default;
};

struct TestRecord {
  int32_t offset_delta = 0;
  int64_t timestamp_delta = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<TestHeader> headers;
};

std::string EncodeRecord(const TestRecord& record) {
  std::string body(1, '\0');  // attributes
  PutZigZag(body, record.timestamp_delta);
  PutZigZag(body, record.offset_delta);
  PutNullable(body, record.key);
  PutNullable(body, record.value);
  PutZigZag(body, static_cast<int64_t>(record.headers.size()));
  for (const TestHeader& header : record.headers) {
    PutNullable(body, header.key);
    PutNullable(body, header.value);
  }
  std::string out;
  PutZigZag(out, static_cast<int64_t>(body.size()));
  return out + body;
}

constexpr int16_t kGzip = 1;
constexpr int16_t kSnappy = 2;
constexpr int16_t kLz4 = 3;
constexpr int16_t kZstd = 4;
constexpr int16_t kLogAppendTime = 0x08;
constexpr int16_t kTransactional = 0x10;
constexpr int16_t kControl = 0x20;

struct TestBatch {
  int64_t base_offset = 0;
  int16_t attributes = 0;
  int64_t base_timestamp = 1'000;
  int64_t max_timestamp = 9'000;
  int64_t producer_id = -1;
  int8_t magic = 2;
  std::vector<TestRecord> records;
  std::optional<int32_t> last_offset_delta;  // default: the last record's offset delta
  std::optional<int32_t> record_count;       // default: the number of records
  std::optional<std::string> raw_records;    // replaces the encoded records
  std::function<std::string(const std::string&)> compress;  // applied to the records' bytes
};

std::string EncodeBatch(const TestBatch& batch) {
  std::string records;
  if (batch.raw_records) {
    records = *batch.raw_records;
  } else {
    for (const TestRecord& record : batch.records) records += EncodeRecord(record);
  }
  if (batch.compress) records = batch.compress(records);
  std::string tail;  // from attributes on: what the CRC covers
  PutBig(tail, batch.attributes);
  PutBig(tail, batch.last_offset_delta.value_or(
                   batch.records.empty() ? 0 : batch.records.back().offset_delta));
  PutBig(tail, batch.base_timestamp);
  PutBig(tail, batch.max_timestamp);
  PutBig(tail, batch.producer_id);
  PutBig<int16_t>(tail, 0);  // producer epoch
  PutBig<int32_t>(tail, 0);  // base sequence
  PutBig(tail, batch.record_count.value_or(static_cast<int32_t>(batch.records.size())));
  tail += records;
  std::string out;
  PutBig(out, batch.base_offset);
  PutBig(out, static_cast<int32_t>(4 + 1 + 4 + tail.size()));
  PutBig<int32_t>(out, 0);  // partition leader epoch
  PutBig(out, batch.magic);
  PutBig<uint32_t>(out, 0);  // CRC: not checked, as librdkafka's default does not
  return out + tail;
}

TestRecord Value(int32_t offset_delta, std::string value) {
  return {.offset_delta = offset_delta, .key = std::nullopt, .value = std::move(value)};
}

// A batch of `count` records with consecutive offsets and values "v<offset>".
TestBatch Consecutive(int64_t base_offset, int count, int16_t attributes = 0,
                      int64_t producer_id = -1) {
  TestBatch batch{.base_offset = base_offset, .attributes = attributes, .producer_id = producer_id};
  for (int i = 0; i < count; ++i)
    batch.records.push_back(Value(i, "v" + std::to_string(base_offset + i)));
  return batch;
}

// A control batch of one transaction marker: key int16 version, int16 type (0 ABORT, 1 COMMIT);
// value int16 version, int32 coordinator epoch.
std::string Marker(int64_t offset, int64_t producer_id, bool abort) {
  std::string key, value;
  PutBig<int16_t>(key, 0);
  PutBig<int16_t>(key, abort ? 0 : 1);
  PutBig<int16_t>(value, 0);
  PutBig<int32_t>(value, 3);
  return EncodeBatch({.base_offset = offset,
                      .attributes = kTransactional | kControl,
                      .producer_id = producer_id,
                      .records = {{.key = key, .value = value}}});
}

// ---- Reading everything back, copied out of the views. ----

struct ReadRecord {
  int64_t offset = 0;
  int64_t timestamp_ms = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<TestHeader> headers;
};

struct Walk {
  std::vector<ReadRecord> records;
  Status status;
  int64_t next_offset = 0;

  std::vector<int64_t> offsets() const {
    std::vector<int64_t> out;
    for (const ReadRecord& record : records) out.push_back(record.offset);
    return out;
  }
  std::vector<std::optional<std::string>> values() const {
    std::vector<std::optional<std::string>> out;
    for (const ReadRecord& record : records) out.push_back(record.value);
    return out;
  }
};

Walk ReadAll(std::string_view batches, std::span<const AbortedTransaction> aborted = {},
             int64_t from_offset = 0) {
  RecordBatchReader reader(batches, aborted, from_offset);
  Walk walk;
  FetchedRecord record;
  for (;;) {
    Result<bool> more = reader.Next(record);
    if (!more.ok()) {
      walk.status = more.status();
      break;
    }
    if (!*more) break;
    ReadRecord& copy = walk.records.emplace_back();
    copy.offset = record.offset;
    copy.timestamp_ms = record.timestamp_ms;
    if (record.key) copy.key = std::string(*record.key);
    if (record.value) copy.value = std::string(*record.value);
    for (const KafkaHeader& header : record.headers) {
      copy.headers.push_back(
          {std::string(header.key), header.has_value
                                        ? std::optional<std::string>(std::string(header.value))
                                        : std::nullopt});
    }
  }
  walk.next_offset = reader.next_offset();
  return walk;
}

// ---- Compressors, as Kafka's clients use them. ----

std::string GzipCompress(const std::string& in) {
  z_stream stream{};
  // 15 + 16: a gzip header and trailer, as Kafka's Java producer writes.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("deflateInit2");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(in.size())) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  stream.avail_in = static_cast<uInt>(in.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate");
  return out;
}

std::string SnappyBlock(std::string_view in) {
  size_t size = snappy_max_compressed_length(in.size());
  std::string out(size, '\0');
  if (snappy_compress(in.data(), in.size(), out.data(), &size) != SNAPPY_OK) {
    throw std::runtime_error("snappy_compress");
  }
  out.resize(size);
  return out;
}

// Java's framing: magic, version, compatible version, then length-prefixed blocks; two blocks
// here, so the reader has to join them.
std::string XerialSnappy(const std::string& in) {
  std::string out("\x82SNAPPY\0", 8);
  PutBig<int32_t>(out, 1);
  PutBig<int32_t>(out, 1);
  const size_t half = in.size() / 2;
  for (std::string_view part :
       {std::string_view(in).substr(0, half), std::string_view(in).substr(half)}) {
    const std::string block = SnappyBlock(part);
    PutBig(out, static_cast<int32_t>(block.size()));
    out += block;
  }
  return out;
}

std::string Lz4Frame(const std::string& in) {
  std::string out(LZ4F_compressFrameBound(in.size(), nullptr), '\0');
  const size_t size = LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), nullptr);
  if (LZ4F_isError(size)) throw std::runtime_error("LZ4F_compressFrame");
  out.resize(size);
  return out;
}

std::string Zstd(const std::string& in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  const size_t size = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  if (ZSTD_isError(size)) throw std::runtime_error("ZSTD_compress");
  out.resize(size);
  return out;
}

// Streaming compressors leave the content size out of the frame header.
std::string ZstdWithoutContentSize(const std::string& in) {
  ZSTD_CCtx* context = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 0);
  std::string out(ZSTD_compressBound(in.size()), '\0');
  const size_t size = ZSTD_compress2(context, out.data(), out.size(), in.data(), in.size());
  ZSTD_freeCCtx(context);
  if (ZSTD_isError(size)) throw std::runtime_error("ZSTD_compress2");
  if (ZSTD_getFrameContentSize(out.data(), size) != ZSTD_CONTENTSIZE_UNKNOWN) {
    throw std::runtime_error("content size still in the frame");
  }
  out.resize(size);
  return out;
}

// ---- Fetch requests ----

TEST(EncodeFetchRequest, TwoPartitionsByteForByte) {
  FetchRequest request;
  request.correlation_id = 7;
  request.client_id = "c1";
  request.max_wait_ms = 500;
  request.min_bytes = 1;
  request.max_bytes = 1 << 20;
  request.read_committed = true;
  request.topic = "t";
  request.partitions = {{.partition = 0, .fetch_offset = 5, .max_bytes = 0x10000},
                        {.partition = 3, .fetch_offset = 0x0102030405, .max_bytes = 0x200}};
  const std::string expected =
      Hex("0000006e"                    // size of what follows: 110 bytes
          "0001 000b 00000007"          // api key 1, version 11, correlation id
          "0002 6331"                   // client id "c1"
          "ffffffff"                    // replica id -1
          "000001f4 00000001 00100000"  // max wait, min bytes, max bytes
          "01"                          // read committed
          "00000000 ffffffff"           // session id 0, epoch -1
          "00000001 0001 74"            // one topic, "t"
          "00000002"                    // two partitions
          "00000000 ffffffff 0000000000000005 ffffffffffffffff 00010000"
          "00000003 ffffffff 0000000102030405 ffffffffffffffff 00000200"
          "00000000"  // no forgotten topics
          "0000");    // rack id ""
  EXPECT_EQ(EncodeFetchRequest(request), expected);
}

TEST(EncodeFetchRequest, ReadUncommittedAndNoPartitions) {
  FetchRequest request;
  request.read_committed = false;
  request.topic = "topic";
  const std::string frame = EncodeFetchRequest(request);
  // size, header (4 + 4 + 2 + 14), body to the isolation level (16)
  const size_t isolation_at = 4 + 8 + 2 + request.client_id.size() + 16;
  ASSERT_GT(frame.size(), isolation_at);
  EXPECT_EQ(frame[isolation_at], 0);
  EXPECT_EQ(frame.size(), isolation_at + 1 + 8 + 4 + 2 + 5 + 4 + 4 + 2);
  EXPECT_EQ(frame.substr(frame.size() - 10), Hex("00000000 00000000 0000"));
}

// ---- Fetch responses ----

class ResponseWriter {
 public:
  ResponseWriter& I16(int16_t v) { return Put(v); }
  ResponseWriter& I32(int32_t v) { return Put(v); }
  ResponseWriter& I64(int64_t v) { return Put(v); }
  ResponseWriter& Str(std::string_view s) {
    Put(static_cast<int16_t>(s.size()));
    out_ += s;
    return *this;
  }
  ResponseWriter& Bytes(std::string_view s) {
    Put(static_cast<int32_t>(s.size()));
    out_ += s;
    return *this;
  }
  std::string str() const { return out_; }

 private:
  template <typename T>
  ResponseWriter& Put(T v) {
    PutBig(out_, v);
    return *this;
  }
  std::string out_;
};

// Partition fields up to its aborted transactions.
void PartitionHead(ResponseWriter& w, int32_t index, int16_t error, int64_t high_watermark) {
  w.I32(index).I16(error).I64(high_watermark).I64(high_watermark - 10).I64(0);
}

std::string TwoTopicResponse() {
  ResponseWriter w;
  w.I32(42).I32(5).I16(0).I32(0);  // correlation id, throttle, error, session id
  w.I32(2);                        // topics
  w.Str("alpha").I32(2);
  PartitionHead(w, 0, kNone, 100);
  // Out of first_offset order, as a broker lists overlapping transactions.
  w.I32(2).I64(9).I64(50).I64(4).I64(20);
  w.I32(-1).Bytes("RECORDS0");
  PartitionHead(w, 1, kOffsetOutOfRange, 200);
  w.I32(-1);          // null aborted transactions
  w.I32(-1).I32(-1);  // preferred read replica, null records
  w.Str("beta").I32(2);
  PartitionHead(w, 2, kNone, 300);
  w.I32(0).I32(1).Bytes("xyz");
  PartitionHead(w, 3, kNone, 400);
  w.I32(0).I32(-1).Bytes("");
  return w.str();
}

TEST(DecodeFetchResponse, TwoTopicsWithAbortedTransactionsAndNullRecords) {
  const std::string frame = TwoTopicResponse();
  Result<FetchResponse> decoded = DecodeFetchResponse(frame);
  ASSERT_OK(decoded);
  const FetchResponse& response = *decoded;
  EXPECT_EQ(response.correlation_id, 42);
  EXPECT_EQ(response.throttle_time_ms, 5);
  EXPECT_EQ(response.error_code, kNone);
  EXPECT_EQ(response.topics, (std::vector<std::string_view>{"alpha", "alpha", "beta", "beta"}));
  ASSERT_EQ(response.partitions.size(), 4u);

  const FetchedPartition& p0 = response.partitions[0];
  EXPECT_EQ(p0.partition, 0);
  EXPECT_EQ(p0.error_code, kNone);
  EXPECT_EQ(p0.high_watermark, 100);
  EXPECT_EQ(p0.last_stable_offset, 90);
  EXPECT_EQ(p0.log_start_offset, 0);
  ASSERT_EQ(p0.aborted.size(), 2u);
  EXPECT_EQ(p0.aborted[0].producer_id, 4);  // sorted by first offset
  EXPECT_EQ(p0.aborted[0].first_offset, 20);
  EXPECT_EQ(p0.aborted[1].producer_id, 9);
  EXPECT_EQ(p0.aborted[1].first_offset, 50);
  EXPECT_EQ(p0.records, "RECORDS0");
  EXPECT_GE(p0.records.data(), frame.data());  // a view, not a copy
  EXPECT_LT(p0.records.data(), frame.data() + frame.size());

  const FetchedPartition& p1 = response.partitions[1];
  EXPECT_EQ(p1.partition, 1);
  EXPECT_EQ(p1.error_code, kOffsetOutOfRange);
  EXPECT_EQ(p1.high_watermark, 200);
  EXPECT_TRUE(p1.aborted.empty());
  EXPECT_TRUE(p1.records.empty());

  EXPECT_EQ(response.partitions[2].partition, 2);
  EXPECT_EQ(response.partitions[2].records, "xyz");
  EXPECT_EQ(response.partitions[3].partition, 3);
  EXPECT_EQ(response.partitions[3].high_watermark, 400);
  EXPECT_TRUE(response.partitions[3].records.empty());
}

TEST(DecodeFetchResponse, EveryTruncationIsAnError) {
  const std::string frame = TwoTopicResponse();
  for (size_t size = 0; size < frame.size(); ++size) {
    Result<FetchResponse> decoded = DecodeFetchResponse(std::string_view(frame).substr(0, size));
    ASSERT_FALSE(decoded.ok()) << "prefix of " << size << " bytes";
    EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(DecodeFetchResponse, TruncationNamesTheField) {
  const std::string frame = TwoTopicResponse();
  Result<FetchResponse> decoded = DecodeFetchResponse(std::string_view(frame).substr(0, 2));
  ASSERT_FALSE(decoded.ok());
  EXPECT_TRUE(Mentions(decoded.status().message(), "correlation_id"));
  // Cut inside the frame's last field, the records length of beta's last partition.
  decoded = DecodeFetchResponse(std::string_view(frame).substr(0, frame.size() - 1));
  ASSERT_FALSE(decoded.ok());
  EXPECT_TRUE(Mentions(decoded.status().message(), "records"));
  // Two partitions of at least 42 bytes each cannot follow in what is left.
  decoded = DecodeFetchResponse(std::string_view(frame).substr(0, frame.find("beta") + 4 + 4 + 40));
  ASSERT_FALSE(decoded.ok());
  EXPECT_TRUE(Mentions(decoded.status().message(), "partitions count 2 does not fit"));
}

TEST(DecodeFetchResponse, TrailingBytesAreAnError) {
  Result<FetchResponse> decoded = DecodeFetchResponse(TwoTopicResponse() + "x");
  ASSERT_FALSE(decoded.ok());
  EXPECT_TRUE(Mentions(decoded.status().message(), "1 bytes after the last field"));
}

// One topic of one partition, with the given raw counts and lengths.
struct SmallResponse {
  int32_t topic_count = 1;
  int16_t topic_length = 1;
  int32_t partition_count = 1;
  int32_t aborted_count = -1;
  int32_t records_length = -1;

  std::string Encode() const {
    ResponseWriter w;
    w.I32(1).I32(0).I16(0).I32(0).I32(topic_count).I16(topic_length);
    std::string frame = w.str() + (topic_length > 0 ? std::string(topic_length, 't') : "");
    ResponseWriter p;
    p.I32(partition_count);
    PartitionHead(p, 0, kNone, 10);
    p.I32(aborted_count);
    for (int32_t i = 0; i < aborted_count; ++i) p.I64(1).I64(i);
    p.I32(-1).I32(records_length);
    // A huge length goes out without its bytes: the decoder must stop at the length.
    const bool small = records_length > 0 && records_length < 1000;
    return frame + p.str() + (small ? std::string(records_length, 'r') : "");
  }
};

TEST(DecodeFetchResponse, SmallResponseIsValid) {
  const std::string frame = SmallResponse{.aborted_count = 2, .records_length = 3}.Encode();
  Result<FetchResponse> decoded = DecodeFetchResponse(frame);
  ASSERT_OK(decoded);
  ASSERT_EQ(decoded->partitions.size(), 1u);
  EXPECT_EQ(decoded->partitions[0].aborted.size(), 2u);
  EXPECT_EQ(decoded->partitions[0].records, "rrr");
}

TEST(DecodeFetchResponse, NegativeLengthsAreErrorsNamingTheField) {
  const std::vector<std::pair<SmallResponse, std::string>> cases = {
      {{.topic_count = -1}, "responses"},      {{.topic_length = -1}, "topic"},
      {{.partition_count = -1}, "partitions"}, {{.aborted_count = -2}, "aborted_transactions"},
      {{.records_length = -2}, "records"},
  };
  for (const auto& [response, field] : cases) {
    Result<FetchResponse> decoded = DecodeFetchResponse(response.Encode());
    ASSERT_FALSE(decoded.ok()) << field;
    EXPECT_TRUE(Mentions(decoded.status().message(), field));
    EXPECT_TRUE(Mentions(decoded.status().message(), "negative"));
  }
}

TEST(DecodeFetchResponse, CountsBeyondTheFrameAreErrors) {
  const std::vector<std::pair<SmallResponse, std::string>> cases = {
      {SmallResponse{.topic_count = 1 << 30}, "count 1073741824 does not fit"},
      {SmallResponse{.partition_count = 1000}, "count 1000 does not fit"},
      {SmallResponse{.records_length = 1 << 30}, "records needs 1073741824 bytes"}};
  for (const auto& [response, mention] : cases) {
    Result<FetchResponse> decoded = DecodeFetchResponse(response.Encode());
    EXPECT_FALSE(decoded.ok()) << mention;
    EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(Mentions(decoded.status().message(), mention));
  }
}

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

// ---- Compression ----

struct Codec {
  std::string name;
  int16_t attribute;
  std::function<std::string(const std::string&)> compress;
};

class CompressedBatches : public ::testing::TestWithParam<Codec> {};

std::vector<TestRecord> VariedRecords(int count) {
  std::vector<TestRecord> records;
  for (int i = 0; i < count; ++i) {
    TestRecord& record = records.emplace_back();
    record.offset_delta = i;
    record.timestamp_delta = i * 3;
    if (i % 5 != 0) record.key = "key-" + std::to_string(i);
    record.value = std::string(static_cast<size_t>(20 + i % 13), static_cast<char>('a' + i % 26));
    if (i % 4 == 0) record.headers = {{"sluice.seq", std::to_string(i)}, {"n", std::nullopt}};
  }
  // Compresses far beyond the first output buffer: the output has to grow.
  records.back().value = std::string(1 << 20, 'z');
  return records;
}

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
  EXPECT_FALSE(walk.status.ok());
  EXPECT_TRUE(Mentions(walk.status.message(), "offset 55"));
  EXPECT_TRUE(walk.records.empty());
  EXPECT_EQ(walk.next_offset, 0);
}

TEST_P(CompressedBatches, GarbagePayloadIsAnError) {
  TestBatch batch{.base_offset = 56, .attributes = GetParam().attribute};
  batch.records = {Value(0, "a")};
  batch.raw_records = "this is not compressed, whatever the attributes say";
  const Walk walk = ReadAll(EncodeBatch(batch));
  EXPECT_FALSE(walk.status.ok());
  EXPECT_TRUE(Mentions(walk.status.message(), "offset 56"));
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

TEST(RecordBatchReader, UnknownCodecIsAnError) {
  TestBatch batch{.base_offset = 9, .attributes = 5};
  batch.records = {Value(0, "a")};
  const Walk walk = ReadAll(EncodeBatch(batch));
  EXPECT_FALSE(walk.status.ok());
  EXPECT_TRUE(Mentions(walk.status.message(), "codec 5"));
}

// ---- Malformed batches ----

TEST(RecordBatchReader, BadMagicIsAnError) {
  TestBatch bad = Consecutive(2, 1);
  bad.magic = 1;
  const Walk walk = ReadAll(EncodeBatch(Consecutive(0, 2)) + EncodeBatch(bad));
  EXPECT_FALSE(walk.status.ok());
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
    EXPECT_FALSE(walk.status.ok()) << length;
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
  EXPECT_FALSE(walk.status.ok());
  EXPECT_TRUE(Mentions(walk.status.message(), "offset 40"));
  EXPECT_TRUE(Mentions(walk.status.message(), "length"));
}

TEST(RecordBatchReader, NegativeRecordLengthIsAnError) {
  std::string record;
  PutZigZag(record, -3);
  const Walk walk = ReadAll(OneRawRecordBatch(record));
  EXPECT_FALSE(walk.status.ok());
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
  EXPECT_FALSE(walk.status.ok());
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
  EXPECT_FALSE(walk.status.ok());
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
  EXPECT_FALSE(walk.status.ok());
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
  EXPECT_FALSE(walk.status.ok());
  EXPECT_TRUE(Mentions(walk.status.message(), "key"));
}

TEST(RecordBatchReader, RecordLengthVarintAtTheEndIsAnError) {
  const Walk walk = ReadAll(OneRawRecordBatch(std::string(1, '\x80')));
  EXPECT_FALSE(walk.status.ok());
  EXPECT_TRUE(Mentions(walk.status.message(), "length"));
}

TEST(RecordBatchReader, BytesAfterTheRecordsFieldsAreAnError) {
  std::string record = EncodeRecord(Value(0, "value"));
  record[0] = static_cast<char>(record[0] + 2);  // one byte longer than its fields
  record.push_back('x');
  const Walk walk = ReadAll(OneRawRecordBatch(record));
  EXPECT_FALSE(walk.status.ok());
  EXPECT_TRUE(Mentions(walk.status.message(), "after its headers"));
}

TEST(RecordBatchReader, RecordCountThatDoesNotMatchIsAnError) {
  const std::string two = EncodeRecord(Value(0, "a")) + EncodeRecord(Value(1, "b"));
  const Walk too_many = ReadAll(OneRawRecordBatch(two, 3));
  EXPECT_FALSE(too_many.status.ok());
  EXPECT_TRUE(Mentions(too_many.status.message(), "1 records early"));
  const Walk too_few = ReadAll(OneRawRecordBatch(two, 1));
  EXPECT_FALSE(too_few.status.ok());
  EXPECT_TRUE(Mentions(too_few.status.message(), "after its last record"));
  const Walk negative = ReadAll(OneRawRecordBatch(two, -1));
  EXPECT_FALSE(negative.status.ok());
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
  EXPECT_FALSE(walk.status.ok());
  EXPECT_TRUE(Mentions(walk.status.message(), "header"));
}

TEST(RecordBatchReader, ErrorEndsTheWalk) {
  TestBatch bad = Consecutive(1, 1);
  bad.magic = 0;
  const std::string bytes = EncodeBatch(bad) + EncodeBatch(Consecutive(2, 1));
  RecordBatchReader reader(bytes, {}, 0);
  FetchedRecord record;
  const Result<bool> bad_magic = reader.Next(record);
  EXPECT_FALSE(bad_magic.ok());
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
