// The Fetch API of Kafka's wire protocol as sluice-brokerd's native fetch path speaks it: the
// request it sends and the response it decodes (API key 1, version 11, the newest without tagged
// fields; Kafka 4.x serves versions 4 to 17).
//
// Why the daemon speaks Fetch itself rather than through librdkafka's consumer: see
// kafka/record_batch_reader.h and docs/brokerd.md, "Native fetch path". The fields are Kafka's
// wire primitives (kafka/wire_primitives.h); a partition's record batches are left as bytes for
// the record-batch walk.
//
// The encoded request is a string of its own. A decoded response views the frame it came from
// (topics, records); the caller keeps the frame alive while the response is in use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/status.h"

namespace sluice::brokerd::kafka {

inline constexpr int16_t kFetchApiKey = 1;
inline constexpr int16_t kFetchVersion = 11;

// Error codes of Kafka's protocol that the fetch path treats specially.
inline constexpr int16_t kNone = 0;
inline constexpr int16_t kOffsetOutOfRange = 1;

struct FetchPartition {
  int32_t partition = 0;
  int64_t fetch_offset = 0;
  int32_t max_bytes = 1 << 20;
};

struct FetchRequest {
  int32_t correlation_id = 0;
  std::string client_id = "sluice-brokerd";
  int32_t max_wait_ms = 500;
  int32_t min_bytes = 1;
  int32_t max_bytes = 50 << 20;
  bool read_committed = true;  // isolation_level 1; 0 reads uncommitted records too
  std::string topic;
  std::vector<FetchPartition> partitions;
  // The reader's rack (client.rack, KIP-392): a leader may then name a follower in that rack as
  // the partition's preferred read replica. Empty: none.
  std::string rack_id;
};

// The whole request as it goes on the socket: the int32 size, request header v1 (api key,
// version, correlation id, client id), then the Fetch v11 body. Sessionless (session id 0, epoch
// -1): every request names every partition, which costs nothing at tens of partitions and
// leaves no session state to lose on a reconnect. Current leader epoch -1, log start offset -1, no
// forgotten topics; the rack id last.
std::string EncodeFetchRequest(const FetchRequest& request);

struct AbortedTransaction {
  int64_t producer_id = 0;
  int64_t first_offset = 0;
};

struct FetchedPartition {
  int32_t partition = 0;
  int16_t error_code = kNone;
  int64_t high_watermark = -1;
  int64_t last_stable_offset = -1;
  int64_t log_start_offset = -1;
  // Sorted by first_offset by the decoder: the broker lists them in the order they ended.
  std::vector<AbortedTransaction> aborted;
  // The follower the leader would have this reader fetch the partition from (KIP-392), or -1;
  // a response that names one has no records for the partition.
  int32_t preferred_read_replica = -1;
  // The partition's record batches, a view into the response; the last batch may be cut short
  // (the broker stops at the byte limits), and a null records field is empty.
  std::string_view records;
};

struct FetchResponse {
  int32_t correlation_id = 0;
  int16_t error_code = kNone;  // the top-level error (session errors)
  int32_t throttle_time_ms = 0;
  std::vector<FetchedPartition> partitions;  // every partition of every topic, in response order
  std::vector<std::string_view> topics;      // the topic of each entry of `partitions`
};

// Decodes one response frame after its int32 size prefix: response header v0 (the correlation
// id) and the Fetch v11 body. Views point into `frame`. A frame that ends early, has a negative
// length where none may be, or has bytes left over is kInvalidArgument naming the field.
Result<FetchResponse> DecodeFetchResponse(std::string_view frame);

}  // namespace sluice::brokerd::kafka
