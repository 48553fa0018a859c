// The Fetch v11 request byte for byte, and responses built field by field: every field, every
// truncation, negative and oversized lengths and counts, each error naming its field.
#include <gtest/gtest.h>

#include "gtest_util.h"
#include "kafka/fetch_protocol.h"
#include "kafka_test_batches.h"

// The test batches and records are built with designated initializers that name only what a
// test is about; GCC 12 flags every member they leave at its default.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace sluice::brokerd::kafka {
namespace {

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

TEST(EncodeFetchRequest, TheRackIdGoesLast) {
  FetchRequest request;
  request.topic = "t";
  const std::string without = EncodeFetchRequest(request);
  request.rack_id = "rack-2";
  const std::string with = EncodeFetchRequest(request);
  ASSERT_EQ(with.size(), without.size() + 6);
  const auto size_of = [](const std::string& frame) {
    return (static_cast<uint8_t>(frame[2]) << 8) | static_cast<uint8_t>(frame[3]);
  };
  EXPECT_EQ(size_of(with), static_cast<int>(with.size()) - 4);
  EXPECT_EQ(with.substr(4, without.size() - 6), without.substr(4, without.size() - 6))
      << "the same up to the rack id";
  EXPECT_EQ(without.substr(without.size() - 2), Hex("0000"));
  EXPECT_EQ(with.substr(with.size() - 8), Hex("0006") + "rack-2");
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
  EXPECT_EQ(p0.preferred_read_replica, -1);
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
  EXPECT_EQ(response.partitions[2].preferred_read_replica, 1);
  EXPECT_EQ(response.partitions[2].records, "xyz");
  EXPECT_EQ(response.partitions[3].partition, 3);
  EXPECT_EQ(response.partitions[3].high_watermark, 400);
  EXPECT_TRUE(response.partitions[3].records.empty());
}

TEST(DecodeFetchResponse, EveryTruncationIsAnError) {
  const std::string frame = TwoTopicResponse();
  for (size_t size = 0; size < frame.size(); ++size) {
    Result<FetchResponse> decoded = DecodeFetchResponse(std::string_view(frame).substr(0, size));
    ASSERT_RAISES(InvalidArgument, decoded) << "prefix of " << size << " bytes";
  }
}

TEST(DecodeFetchResponse, TruncationNamesTheField) {
  const std::string frame = TwoTopicResponse();
  Result<FetchResponse> decoded = DecodeFetchResponse(std::string_view(frame).substr(0, 2));
  ASSERT_RAISES(InvalidArgument, decoded);
  EXPECT_TRUE(Mentions(decoded.status().message(), "correlation_id"));
  // Cut inside the frame's last field, the records length of beta's last partition.
  decoded = DecodeFetchResponse(std::string_view(frame).substr(0, frame.size() - 1));
  ASSERT_RAISES(InvalidArgument, decoded);
  EXPECT_TRUE(Mentions(decoded.status().message(), "records"));
  // Two partitions of at least 42 bytes each cannot follow in what is left.
  decoded = DecodeFetchResponse(std::string_view(frame).substr(0, frame.find("beta") + 4 + 4 + 40));
  ASSERT_RAISES(InvalidArgument, decoded);
  EXPECT_TRUE(Mentions(decoded.status().message(), "partitions count 2 does not fit"));
}

TEST(DecodeFetchResponse, TrailingBytesAreAnError) {
  Result<FetchResponse> decoded = DecodeFetchResponse(TwoTopicResponse() + "x");
  ASSERT_RAISES(InvalidArgument, decoded);
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
    ASSERT_RAISES(InvalidArgument, decoded) << field;
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
    EXPECT_RAISES(InvalidArgument, decoded) << mention;
    EXPECT_TRUE(Mentions(decoded.status().message(), mention));
  }
}

}  // namespace
}  // namespace sluice::brokerd::kafka
