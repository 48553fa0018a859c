#include "protocol_fuzz_entry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "protocol/codec.h"
#include "protocol/frame_reader.h"

namespace sluice::brokerd::fuzz {
namespace {

namespace p = protocol;

struct CutFrames {
  std::vector<std::vector<uint8_t>> frames;
  Status status;
};

// The frames a FrameReader cuts from `bytes` appended in pieces of 1, 2, ... `largest_piece`
// bytes, cycling (0: all at once), up to its first failure.
CutFrames Cut(std::span<const uint8_t> bytes, size_t largest_piece) {
  p::FrameReader reader;
  CutFrames cut;
  size_t piece = 1;
  while (!bytes.empty() && cut.status.ok()) {
    const size_t taken = largest_piece == 0 ? bytes.size() : std::min(piece, bytes.size());
    cut.status = reader.Append(bytes.first(taken));
    bytes = bytes.subspan(taken);
    piece = piece % std::max<size_t>(largest_piece, 1) + 1;
    while (auto frame = reader.NextFrame()) cut.frames.push_back(std::move(*frame));
  }
  return cut;
}

// A frame that decodes has the header DecodeHeader reads and encodes to its own bytes: the
// encoding is canonical, so what the daemon decodes is what the reader meant.
Status CheckFrame(std::span<const uint8_t> frame) {
  auto header = p::DecodeHeader(frame);
  auto decoded = p::DecodeFrame(frame);
  if (!decoded.ok()) {
    (void)p::RefusalCode(frame);
    return Status::OK();
  }
  if (!header.ok()) {
    return Status::InvalidState("DecodeFrame took a frame whose header DecodeHeader refuses: " +
                                header.status().ToString());
  }
  if (header->version != decoded->version || header->type != p::TypeOf(decoded->message) ||
      header->request_id != decoded->request_id) {
    return Status::InvalidState("DecodeHeader and DecodeFrame read different headers");
  }
  auto encoded = p::EncodeFrame(*decoded);
  if (!encoded.ok()) {
    return Status::InvalidState("a decoded frame does not encode again: " +
                                encoded.status().ToString());
  }
  if (!std::equal(encoded->begin(), encoded->end(), frame.begin(), frame.end())) {
    const auto differ = std::mismatch(encoded->begin(), encoded->end(), frame.begin(), frame.end());
    return Status::InvalidState("a decoded frame of " + std::to_string(frame.size()) +
                                " bytes encodes to " + std::to_string(encoded->size()) +
                                " bytes, first differing at byte " +
                                std::to_string(differ.first - encoded->begin()));
  }
  return Status::OK();
}

}  // namespace

Status CheckControlStream(std::span<const uint8_t> bytes) {
  const CutFrames whole = Cut(bytes, 0);
  const CutFrames pieces = Cut(bytes, 7);
  if (whole.frames != pieces.frames || whole.status.ToString() != pieces.status.ToString()) {
    return Status::InvalidState("the frames cut from the bytes depend on the reads they came in: " +
                                std::to_string(whole.frames.size()) + " frames, " +
                                whole.status.ToString() + " at once; " +
                                std::to_string(pieces.frames.size()) + " frames, " +
                                pieces.status.ToString() + " in pieces");
  }
  for (const auto& frame : whole.frames) SLUICE_RETURN_NOT_OK(CheckFrame(frame));
  return Status::OK();
}

}  // namespace sluice::brokerd::fuzz
