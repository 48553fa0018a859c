// The part of Kafka's wire protocol that sluice-brokerd's native fetch path speaks: Fetch
// requests and responses (API key 1, version 11, the newest without tagged fields; Kafka 4.x
// serves versions 4 to 17) and record batches of magic 2, the only format Kafka 4 writes.
//
// Why the daemon parses record batches itself: librdkafka's consumer allocates, queues and frees
// an op per record, which on these machines caps it at about 3.4 M records/s per core, below the
// Java consumer; walking a batch's varints in place costs a few nanoseconds a record
// (docs/brokerd.md, "Native fetch path").
//
// Everything is big-endian on the wire (record fields are zig-zag varints). Decoded values view
// the bytes they came from; the caller keeps those alive.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ordering/chunk_headers.h"
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
};

// The whole request as it goes on the socket: the int32 size, request header v1 (api key,
// version, correlation id, client id), then the Fetch v11 body. Sessionless (session id 0, epoch
// -1): every request names every partition, which costs nothing at tens of partitions and
// leaves no session state to lose on a reconnect. No rack id (empty string), current leader epoch
// -1, log start offset -1, no forgotten topics.
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

// One record of a batch, viewed where it lies: in the response, or in the decompressed records
// of a compressed batch (see RecordBatchReader::decompressed).
struct FetchedRecord {
  int64_t offset = 0;
  int64_t timestamp_ms = 0;
  std::optional<std::string_view> key;    // nullopt: a null key
  std::optional<std::string_view> value;  // nullopt: a null value (a tombstone)
  std::vector<KafkaHeader> headers;       // cleared, not shrunk, by each Next
};

// Walks the records of one partition's fetched record batches in offset order: from the first
// record at or after `from_offset` (a fetch may start inside a batch), skipping control batches
// and, per `aborted`, the batches of aborted transactions (read committed; pass no aborted
// transactions to read uncommitted). Compressed batches (gzip, snappy, lz4, zstd) are
// decompressed into a buffer of their own.
class RecordBatchReader {
 public:
  RecordBatchReader(std::string_view batches, std::span<const AbortedTransaction> aborted,
                    int64_t from_offset);

  // Fills `record` with the next record and returns true; false once no complete batch is left
  // (a batch cut short at the end is not an error: the next fetch starts there). A malformed
  // batch (bad magic, lengths beyond the batch, a record count that does not match, varints that
  // overrun, an unknown compression codec, a failed decompression) is kInvalidArgument naming the
  // batch's base offset; the walk stops there.
  Result<bool> Next(FetchedRecord& record);

  // Where the next fetch of this partition starts: one past the last offset of the last complete
  // batch walked so far (control and aborted batches included), or `from_offset` before any.
  int64_t next_offset() const { return next_offset_; }

  // The decompressed records the last record returned by Next views into, or null when it views
  // into `batches` itself. Holding it keeps those views valid.
  const std::shared_ptr<const std::string>& decompressed() const { return decompressed_; }

 private:
  // Moves to the next batch whose records are to be read; false at the end.
  Result<bool> NextBatch();
  // Ends the walk with `problem`, naming the batch being read.
  Status Stop(std::string_view problem);

  std::string_view rest_;  // the batches not yet entered
  std::span<const AbortedTransaction> aborted_;
  size_t next_aborted_ = 0;        // aborted_[next_aborted_..] not yet in play
  std::vector<int64_t> aborting_;  // producer ids whose open transaction was aborted
  int64_t from_offset_;
  int64_t next_offset_;
  // The batch being read.
  std::string_view records_;  // its records not yet read (decompressed when it was compressed)
  int32_t records_left_ = 0;
  int64_t base_offset_ = 0;
  int64_t batch_end_ = 0;  // one past its last offset: next_offset_ once its records are read
  int64_t base_timestamp_ = 0;
  bool log_append_time_ = false;
  int64_t max_timestamp_ = 0;
  std::shared_ptr<const std::string> decompressed_;
};

// One past the last offset of the last complete batch in `batches`, or `from_offset` when none
// is complete: where the next fetch starts, known before any record is read, so the next request
// can go out while this response is still being parsed.
int64_t NextFetchOffset(std::string_view batches, int64_t from_offset);

}  // namespace sluice::brokerd::kafka
