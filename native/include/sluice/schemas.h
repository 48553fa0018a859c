// The Arrow schemas of the objects a segment holds (docs/formats.md "Object schemas").
#pragma once

#include <arrow/type_fwd.h>

#include <memory>

#include "sluice/layout.h"

namespace sluice {

std::shared_ptr<arrow::Schema> RecordsSchema();
std::shared_ptr<arrow::Schema> ChunksSchema();
std::shared_ptr<arrow::Schema> SchemaFor(ObjectKind kind);

}  // namespace sluice
