// The fuzzed code path of the control protocol (docs/formats.md, "Control protocol"): arbitrary
// bytes taken as what a control connection received, cut into frames and decoded.
#pragma once

#include <cstdint>
#include <span>

#include "sluice/status.h"

namespace sluice::brokerd::fuzz {

// Cuts `bytes` into frames twice, appended at once and in pieces of 1 to 7 bytes, which must give
// the same frames and the same failure; decodes every frame, and encodes every frame that decodes
// again, which must give its bytes back. Never crashes, whatever the bytes; a broken expectation
// is an error naming it.
Status CheckControlStream(std::span<const uint8_t> bytes);

}  // namespace sluice::brokerd::fuzz
