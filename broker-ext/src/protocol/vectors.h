// The control protocol's test vectors under testdata/protocol/: frames good and broken, and a
// manifest of what a decoder must make of each, read by the C++ and the Java tests alike.
// Byte-identical on every run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocol/messages.h"
#include "sluice/status.h"

namespace sluice::brokerd::protocol::vectors {

using Fields = std::vector<std::pair<std::string, std::string>>;

// A frame as the manifest spells it: version, type, request_id, then every field of the message in
// the spec's order; integers in decimal, enumerations by name, byte arrays in lowercase hex, lists
// comma-separated (a partition entry as partition:START:offset).
Fields Describe(const Frame& frame);

struct Vector {
  std::string file;
  std::vector<uint8_t> bytes;
  std::optional<Frame> frame;  // a good frame: what the bytes decode to
  std::string error_field;     // a broken frame: the field the decoder must name
};

Result<std::vector<Vector>> All();

// Writes every vector and manifest.txt into `directory`, which must exist.
Status WriteAll(const std::string& directory);

}  // namespace sluice::brokerd::protocol::vectors
