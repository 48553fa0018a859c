// The fuzzed code path of a local producer's objects (docs/brokerd.md, "Local producers"):
// arbitrary bytes taken as what a producer put in a slot of its segment and in that slot's
// descriptor, checked as the daemon checks each object before it routes its chunks.
#pragma once

#include <cstdint>
#include <span>

#include "sluice/status.h"

namespace sluice::brokerd::fuzz {

// The input's first 4 bytes, little-endian, are the descriptor's record_count (zero-padded when
// shorter); the rest is the object's bytes, copied into a 64-byte aligned slot.
inline constexpr size_t kRecordCountBytes = 4;

// Runs the object through ProducerObject::Check and returns whether it was accepted. A refusal
// must be kCorrupt (what ends the producer, counted as malformed). An accepted object must have
// as many rows as record_count says, at least one; every job and stream a name (1 to 128 bytes
// of [A-Za-z0-9._-]); every field's bytes inside the slot, which is all the routed chunks keep
// of it; and its chunks, encoded again by the project's ChunksBatchBuilder, must be accepted and
// read back field for field. Never crashes, whatever the bytes; a broken expectation is an
// error naming it.
Result<bool> CheckProducerObject(std::span<const uint8_t> bytes);

}  // namespace sluice::brokerd::fuzz
