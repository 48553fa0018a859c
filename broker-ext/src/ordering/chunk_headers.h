// The identity of a chunk record, read from its Kafka headers (docs/formats.md, "Chunk record").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "sluice/status.h"

namespace sluice::brokerd {

inline constexpr std::string_view kJobHeader = "sluice.job";
inline constexpr std::string_view kStreamHeader = "sluice.stream";
inline constexpr std::string_view kSeqHeader = "sluice.seq";
inline constexpr std::string_view kEosHeader = "sluice.eos";

// One Kafka record header as the consumer hands it over; a null value has `has_value` false
// (sluice::RecordHeader, the encoders' view, has no null values).
struct KafkaHeader {
  std::string_view key;
  std::string_view value;
  bool has_value = true;
};

struct ChunkId {
  std::string job;
  std::string stream;
  uint64_t seq = 0;
  bool eos = false;

  bool operator==(const ChunkId&) const = default;
};

// Parses the four chunk headers. A missing or repeated header, a `sluice.job` or
// `sluice.stream` that is not 1 to 128 bytes of [A-Za-z0-9._-], a `sluice.seq` that is not a
// decimal u64 without sign or leading zeros, or a `sluice.eos` other than `true` is malformed:
// the error names the header and quotes its value, so the dead-letter record explains itself.
Result<ChunkId> ParseChunkHeaders(std::span<const KafkaHeader> headers);

// Parses `sluice.seq`'s decimal text; exposed for the tests of its edge cases.
Result<uint64_t> ParseSeq(std::string_view text);

}  // namespace sluice::brokerd
