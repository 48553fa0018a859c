// Frames of the control protocol to bytes and back (docs/formats.md, "Control protocol").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "protocol/messages.h"
#include "sluice/status.h"

namespace sluice::brokerd::protocol {

// One whole frame, length prefix included. Fails, naming the field, on a message the decoder
// would refuse, so nothing leaves that the peer cannot read.
Result<std::vector<uint8_t>> EncodeFrame(const Frame& frame);

// What every frame starts with, in every version.
struct FrameHeader {
  uint16_t version = 0;
  MessageType type = MessageType::kHeartbeat;
  uint64_t request_id = 0;
};

// The header of exactly one whole frame, length prefix included, checked as DecodeFrame checks
// it (frame_length, version, a type of that version), its body unread: the daemon answers a frame
// whose body it refuses, or whose type a reader may not send, with the frame's own request_id.
Result<FrameHeader> DecodeHeader(std::span<const uint8_t> bytes);

// Exactly one whole frame, length prefix included. Every check of the spec is applied; the
// first that fails gives an InvalidArgument whose message starts with the field's name:
// "partitions[1].start = 7: expected 1 EARLIEST, 2 LATEST or 3 OFFSET".
Result<Frame> DecodeFrame(std::span<const uint8_t> bytes);

// The ERROR code that answers a frame DecodeFrame refused: UNSUPPORTED_VERSION or UNKNOWN_TYPE
// when its header says so, BAD_FRAME otherwise.
ErrorCode RefusalCode(std::span<const uint8_t> bytes);

// The length a frame declares, read from its first four bytes.
uint32_t DeclaredFrameLength(std::span<const uint8_t, 4> prefix);

// Whether a declared frame_length is within the spec's bounds; the error names frame_length.
Status CheckFrameLength(uint32_t frame_length);

}  // namespace sluice::brokerd::protocol
