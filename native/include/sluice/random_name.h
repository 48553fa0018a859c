// Unpredictable parts of file names. Segments, doorbells and their temporary files live in
// folders every local user can write to (/dev/shm): a name another user can guess can be taken
// first, and a create that insists on its name then fails (docs/formats.md, "File layout").
#pragma once

#include <cstddef>
#include <string>

#include "sluice/export.h"
#include "sluice/status.h"

namespace sluice {

// `bytes` bytes from the kernel's random source (getrandom(2)), as 2 × `bytes` lowercase hex
// digits. Fails only when the kernel cannot give them.
SLUICE_EXPORT Result<std::string> RandomHex(size_t bytes);

// The suffix of a temporary name beside a file: ".tmp-" and 16 random hex digits.
SLUICE_EXPORT Result<std::string> TemporarySuffix();

}  // namespace sluice
