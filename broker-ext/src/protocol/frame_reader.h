// Cuts the byte stream of a control connection into frames, whatever sizes its reads come in.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "sluice/status.h"

namespace sluice::brokerd::protocol {

class FrameReader {
 public:
  // Takes the next bytes of the stream. A frame whose declared length is out of bounds fails
  // here, before its body is waited for or buffered; after a failure the stream has lost its
  // framing and every later call returns the same error.
  Status Append(std::span<const uint8_t> bytes);

  // One read(2) from a stream socket or pipe, appended. kEndOfStream at an end between frames; an
  // error naming frame_length at an end inside one. A non-blocking descriptor with nothing to
  // read returns OK.
  Status ReadFrom(int fd);

  // The next whole frame, length prefix included, ready for DecodeFrame; empty until one is.
  std::optional<std::vector<uint8_t>> NextFrame();

 private:
  Status Fail(Status status);

  std::deque<std::vector<uint8_t>> frames_;
  std::vector<uint8_t> partial_;  // the start of the frame still being received
  Status failure_;
};

}  // namespace sluice::brokerd::protocol
