#include "ingest/producer_object.h"

#include <string>
#include <utility>

#include "protocol/wire.h"
#include "sluice/limits.h"
#include "sluice/schemas.h"

namespace sluice::brokerd {
namespace {

Status Malformed(const ObjectView& object, const std::string& what) {
  return Status::Corrupt("object " + std::to_string(object.object_id) + " (slot " +
                         std::to_string(object.slot) + ") " + what);
}

}  // namespace

ProducerObject::ProducerObject(std::shared_ptr<arrow::RecordBatch> batch)
    : batch_(std::move(batch)),
      jobs_(static_cast<const arrow::StringArray*>(batch_->column(0).get())),
      streams_(static_cast<const arrow::StringArray*>(batch_->column(1).get())),
      seqs_(static_cast<const arrow::UInt64Array*>(batch_->column(2).get())),
      eos_(static_cast<const arrow::BooleanArray*>(batch_->column(3).get())),
      payloads_(static_cast<const arrow::BinaryArray*>(batch_->column(4).get())) {}

Result<ProducerObject> ProducerObject::Check(const ObjectView& object) {
  auto batch = DecodeObject(object, ChunksSchema());
  if (!batch.ok()) return Malformed(object, "is not a CHUNKS batch: " + batch.status().message());
  const arrow::RecordBatch& rows = **batch;
  if (rows.num_rows() == 0) return Malformed(object, "holds no chunk");
  for (int column = 0; column < rows.num_columns(); ++column) {
    // The CHUNKS schema's fields are all non-nullable (docs/formats.md, "Object schemas").
    if (rows.column(column)->null_count() != 0) {
      return Malformed(object, "has nulls in " + rows.schema()->field(column)->name());
    }
  }
  ProducerObject checked(*std::move(batch));
  // Checked before any row is routed, so that a malformed object routes none: job and stream
  // travel on into readers' file names, logs and metric labels (docs/formats.md, "Chunk record").
  for (int64_t row = 0; row < checked.rows(); ++row) {
    for (const bool job : {true, false}) {
      const std::string field = (job ? "job[" : "stream[") + std::to_string(row) + "]";
      const Status name = protocol::CheckName(field, job ? checked.job(row) : checked.stream(row),
                                              1, limits::kMaxNameLength);
      if (!name.ok()) return Malformed(object, "has a name that is none: " + name.message());
    }
  }
  return checked;
}

}  // namespace sluice::brokerd
