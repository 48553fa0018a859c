#include "protocol/frame_reader.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string>

#include "protocol/codec.h"
#include "protocol/wire.h"

namespace sluice::brokerd::protocol {

Status FrameReader::Fail(Status status) {
  failure_ = status;
  partial_.clear();
  return status;
}

Status FrameReader::Append(std::span<const uint8_t> bytes) {
  SLUICE_RETURN_NOT_OK(failure_);
  while (!bytes.empty()) {
    // Take the length prefix first, then exactly the rest of that frame, so a frame never holds
    // bytes of the next and an oversized length is refused before its body is kept.
    size_t wanted = 4 - std::min<size_t>(partial_.size(), 4);
    if (partial_.size() >= 4) {
      const uint32_t length = DeclaredFrameLength(std::span<const uint8_t>(partial_).first<4>());
      wanted = 4 + size_t{length} - partial_.size();
    }
    const size_t taken = std::min(wanted, bytes.size());
    partial_.insert(partial_.end(), bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(taken));
    bytes = bytes.subspan(taken);
    if (partial_.size() == 4) {
      const uint32_t length = DeclaredFrameLength(std::span<const uint8_t>(partial_).first<4>());
      if (Status status = CheckFrameLength(length); !status.ok()) return Fail(status);
      partial_.reserve(4 + size_t{length});
    } else if (partial_.size() > 4 && taken == wanted) {
      frames_.push_back(std::move(partial_));
      partial_.clear();
    }
  }
  return Status::OK();
}

Status FrameReader::ReadFrom(int fd) {
  SLUICE_RETURN_NOT_OK(failure_);
  std::array<uint8_t, 64 * 1024> buffer;
  ssize_t count;
  do {
    count = ::read(fd, buffer.data(), buffer.size());
  } while (count < 0 && errno == EINTR);
  if (count < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::OK();
    return Status::FromErrno("read from the control socket", errno);
  }
  if (count == 0) {
    if (partial_.empty()) return Status::EndOfStream("the peer closed the control connection");
    const std::string received = std::to_string(partial_.size()) + " bytes of a frame";
    return Fail(partial_.size() < 4
                    ? FieldError("frame_length", "missing", "the stream ended after " + received)
                    : FieldError("frame_length",
                                 DeclaredFrameLength(std::span<const uint8_t>(partial_).first<4>()),
                                 "the stream ended after " + received));
  }
  return Append(std::span<const uint8_t>(buffer.data(), static_cast<size_t>(count)));
}

std::optional<std::vector<uint8_t>> FrameReader::NextFrame() {
  if (frames_.empty()) return std::nullopt;
  std::vector<uint8_t> frame = std::move(frames_.front());
  frames_.pop_front();
  return frame;
}

}  // namespace sluice::brokerd::protocol
