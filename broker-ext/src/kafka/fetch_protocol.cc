#include "kafka/fetch_protocol.h"

#include <algorithm>

#include "kafka/wire_primitives.h"

namespace sluice::brokerd::kafka {

std::string EncodeFetchRequest(const FetchRequest& request) {
  std::string out;
  out.reserve(64 + request.client_id.size() + request.topic.size() + request.rack_id.size() +
              28 * request.partitions.size());
  Append<int32_t>(out, 0);  // the size, known at the end
  Append(out, kFetchApiKey);
  Append(out, kFetchVersion);
  Append(out, request.correlation_id);
  AppendString(out, request.client_id);
  Append<int32_t>(out, -1);  // replica id: a consumer
  Append(out, request.max_wait_ms);
  Append(out, request.min_bytes);
  Append(out, request.max_bytes);
  Append<int8_t>(out, request.read_committed ? 1 : 0);
  Append<int32_t>(out, 0);   // session id
  Append<int32_t>(out, -1);  // session epoch
  Append<int32_t>(out, 1);   // topics
  AppendString(out, request.topic);
  Append(out, static_cast<int32_t>(request.partitions.size()));
  for (const FetchPartition& partition : request.partitions) {
    Append(out, partition.partition);
    Append<int32_t>(out, -1);  // current leader epoch
    Append(out, partition.fetch_offset);
    Append<int64_t>(out, -1);  // log start offset
    Append(out, partition.max_bytes);
  }
  Append<int32_t>(out, 0);  // forgotten topics
  AppendString(out, request.rack_id);
  Store(out.data(), static_cast<int32_t>(out.size() - 4));
  return out;
}

Result<FetchResponse> DecodeFetchResponse(std::string_view frame) {
  // The fewest bytes an entry of each array takes: a topic's name length and partition count;
  // a partition's fixed fields with null aborted transactions and records; an aborted
  // transaction's two int64s.
  constexpr size_t kMinTopic = 2 + 4;
  constexpr size_t kMinPartition = 4 + 2 + 8 + 8 + 8 + 4 + 4 + 4;
  constexpr size_t kMinAborted = 8 + 8;

  WireReader in(frame, "fetch response");
  FetchResponse response;
  SLUICE_RETURN_NOT_OK(in.Read("correlation_id", response.correlation_id));
  SLUICE_RETURN_NOT_OK(in.Read("throttle_time_ms", response.throttle_time_ms));
  SLUICE_RETURN_NOT_OK(in.Read("error_code", response.error_code));
  SLUICE_RETURN_NOT_OK(in.Skip("session_id", 4));
  int32_t topic_count = 0;
  SLUICE_RETURN_NOT_OK(in.Count("responses", kMinTopic, false, topic_count));
  for (int32_t t = 0; t < topic_count; ++t) {
    std::string_view topic;
    SLUICE_RETURN_NOT_OK(in.String("topic", topic));
    int32_t partition_count = 0;
    SLUICE_RETURN_NOT_OK(in.Count("partitions", kMinPartition, false, partition_count));
    for (int32_t p = 0; p < partition_count; ++p) {
      FetchedPartition& partition = response.partitions.emplace_back();
      response.topics.push_back(topic);
      SLUICE_RETURN_NOT_OK(in.Read("partition_index", partition.partition));
      SLUICE_RETURN_NOT_OK(in.Read("partition error_code", partition.error_code));
      SLUICE_RETURN_NOT_OK(in.Read("high_watermark", partition.high_watermark));
      SLUICE_RETURN_NOT_OK(in.Read("last_stable_offset", partition.last_stable_offset));
      SLUICE_RETURN_NOT_OK(in.Read("log_start_offset", partition.log_start_offset));
      int32_t aborted_count = 0;
      SLUICE_RETURN_NOT_OK(in.Count("aborted_transactions", kMinAborted, true, aborted_count));
      partition.aborted.resize(static_cast<size_t>(aborted_count));
      for (AbortedTransaction& aborted : partition.aborted) {
        SLUICE_RETURN_NOT_OK(in.Read("producer_id", aborted.producer_id));
        SLUICE_RETURN_NOT_OK(in.Read("first_offset", aborted.first_offset));
      }
      // The broker lists aborted transactions in the order they ended (its transaction index's
      // order), which is not the order they began when two overlap.
      std::stable_sort(partition.aborted.begin(), partition.aborted.end(),
                       [](const AbortedTransaction& a, const AbortedTransaction& b) {
                         return a.first_offset < b.first_offset;
                       });
      SLUICE_RETURN_NOT_OK(in.Read("preferred_read_replica", partition.preferred_read_replica));
      SLUICE_RETURN_NOT_OK(in.NullableBytes("records", partition.records));
    }
  }
  if (in.remaining() != 0) {
    return Status::InvalidArgument("fetch response: " + std::to_string(in.remaining()) +
                                   " bytes after the last field");
  }
  return response;
}

}  // namespace sluice::brokerd::kafka
