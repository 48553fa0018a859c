#include "sluice/schemas.h"

#include <arrow/type.h>

namespace sluice {

std::shared_ptr<arrow::Schema> RecordsSchema() {
  // Header keys and values are not nullable, and the list's element is "item": the same choices
  // as the Java twin (client/ ObjectKind), so both sides write identical schema messages.
  static const auto schema = arrow::schema({
      arrow::field("partition", arrow::int32(), false),
      arrow::field("offset", arrow::int64(), false),
      arrow::field("timestamp", arrow::timestamp(arrow::TimeUnit::MILLI, "UTC"), false),
      arrow::field("key", arrow::binary(), true),
      arrow::field("value", arrow::binary(), true),
      arrow::field(
          "headers",
          arrow::list(arrow::field("item",
                                   arrow::struct_({arrow::field("key", arrow::utf8(), false),
                                                   arrow::field("value", arrow::binary(), false)}),
                                   false)),
          false),
  });
  return schema;
}

std::shared_ptr<arrow::Schema> ChunksSchema() {
  static const auto schema = arrow::schema({
      arrow::field("job", arrow::utf8(), false),
      arrow::field("stream", arrow::utf8(), false),
      arrow::field("seq", arrow::uint64(), false),
      arrow::field("eos", arrow::boolean(), false),
      arrow::field("payload", arrow::binary(), false),
  });
  return schema;
}

std::shared_ptr<arrow::Schema> SchemaFor(ObjectKind kind) {
  return kind == ObjectKind::kRecords ? RecordsSchema() : ChunksSchema();
}

}  // namespace sluice
