// The segment test vectors under testdata/segment/: images of segments in known states, good and
// broken, with a manifest of what a reader must make of each. Byte-identical on every run.
#pragma once

#include <string>

#include "sluice/status.h"

namespace sluice::vectors {

// Writes every vector and manifest.tsv into `directory` (which must exist).
Status WriteAll(const std::string& directory);

}  // namespace sluice::vectors
