// One object of a local producer's segment, checked as the daemon takes it (docs/brokerd.md,
// "Local producers"): the CHUNKS record batch it must be, read zero-copy over the producer's
// slot, and the chunk fields LocalProducer routes. The bytes are the producer's to choose, so
// this is what the produce fuzzer runs them through (fuzz/README.md).
#pragma once

#include <arrow/array.h>
#include <arrow/record_batch.h>

#include <cstdint>
#include <memory>
#include <string_view>

#include "sluice/segment_image.h"
#include "sluice/status.h"

namespace sluice::brokerd {

class ProducerObject {
 public:
  // Decodes `object` as a CHUNKS batch (DecodeObject: the IPC message, no compressed body,
  // ValidateFull, the row count against the descriptor's) and checks what the format leaves to
  // the daemon: at least one row, no nulls, every job and stream a name. kCorrupt names the
  // object's id and slot and what is wrong.
  static Result<ProducerObject> Check(const ObjectView& object);

  int64_t rows() const { return batch_->num_rows(); }
  // The fields of `row`, viewing the object's bytes.
  std::string_view job(int64_t row) const { return jobs_->GetView(row); }
  std::string_view stream(int64_t row) const { return streams_->GetView(row); }
  uint64_t seq(int64_t row) const { return seqs_->Value(row); }
  bool eos(int64_t row) const { return eos_->Value(row); }
  std::string_view payload(int64_t row) const { return payloads_->GetView(row); }
  // What the views point into besides the slot: kept alive by whoever routes them.
  const std::shared_ptr<arrow::RecordBatch>& batch() const { return batch_; }

 private:
  explicit ProducerObject(std::shared_ptr<arrow::RecordBatch> batch);

  std::shared_ptr<arrow::RecordBatch> batch_;
  const arrow::StringArray* jobs_;
  const arrow::StringArray* streams_;
  const arrow::UInt64Array* seqs_;
  const arrow::BooleanArray* eos_;
  const arrow::BinaryArray* payloads_;
};

}  // namespace sluice::brokerd
