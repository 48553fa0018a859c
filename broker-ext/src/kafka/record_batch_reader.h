// The record batches of a fetched partition, walked record by record: batches of magic 2, the
// only format Kafka 4 writes, with control batches skipped, the batches of aborted transactions
// dropped under read committed, and compressed batches decompressed (kafka/decompression.h).
//
// Why the daemon parses record batches itself: librdkafka's consumer allocates, queues and frees
// an op per record, which on these machines caps it at about 3.4 M records/s per core, below the
// Java consumer; walking a batch's varints in place costs a few nanoseconds a record
// (docs/brokerd.md, "Native fetch path").
//
// Everything is big-endian on the wire (record fields are zig-zag varints,
// kafka/wire_primitives.h). Records view the batches they came from, which the caller keeps alive,
// or the decompressed buffer of their batch, which RecordBatchReader::decompressed() shares.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kafka/fetch_protocol.h"
#include "ordering/chunk_headers.h"
#include "sluice/status.h"

namespace sluice::brokerd::kafka {

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
