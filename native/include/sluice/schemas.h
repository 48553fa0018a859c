// The Arrow schemas of the objects a segment holds (docs/formats.md "Object schemas").
#pragma once

#include <arrow/type_fwd.h>

#include <memory>

#include "sluice/export.h"
#include "sluice/layout.h"

namespace sluice {

SLUICE_EXPORT std::shared_ptr<arrow::Schema> RecordsSchema();
SLUICE_EXPORT std::shared_ptr<arrow::Schema> ChunksSchema();
SLUICE_EXPORT std::shared_ptr<arrow::Schema> SchemaFor(ObjectKind kind);

}  // namespace sluice
