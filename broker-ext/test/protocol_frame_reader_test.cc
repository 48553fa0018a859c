#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "gtest_util.h"
#include "protocol/codec.h"
#include "protocol/frame_reader.h"

namespace sluice::brokerd::protocol {
namespace {

using Bytes = std::vector<uint8_t>;

std::vector<Bytes> SomeFrames() {
  std::vector<Bytes> frames;
  for (const Frame& frame : {Frame{1, Release{7, 41}}, Frame{0, Heartbeat{5, 10}},
                             Frame{2, ErrorMessage{0, ErrorCode::kInternal, 1, 1, "x"}},
                             Frame{3, Close{kAllSubscriptions}}}) {
    frames.push_back(*EncodeFrame(frame));
  }
  return frames;
}

Bytes Concatenated(const std::vector<Bytes>& frames) {
  Bytes stream;
  for (const Bytes& frame : frames) stream.insert(stream.end(), frame.begin(), frame.end());
  return stream;
}

std::vector<Bytes> Drain(FrameReader& reader) {
  std::vector<Bytes> frames;
  while (auto frame = reader.NextFrame()) frames.push_back(*frame);
  return frames;
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

TEST(FrameReader, OneByteAtATimeGivesTheSameFrames) {
  const std::vector<Bytes> frames = SomeFrames();
  FrameReader reader;
  std::vector<Bytes> read;
  for (const uint8_t byte : Concatenated(frames)) {
    ASSERT_OK(reader.Append({&byte, 1}));
    for (Bytes& frame : Drain(reader)) read.push_back(std::move(frame));
  }
  EXPECT_EQ(read, frames);
}

TEST(FrameReader, ManyFramesInOneAppendComeOutOneByOne) {
  const std::vector<Bytes> frames = SomeFrames();
  FrameReader reader;
  ASSERT_OK(reader.Append(Concatenated(frames)));
  EXPECT_EQ(Drain(reader), frames);
  EXPECT_FALSE(reader.NextFrame().has_value());
}

TEST(FrameReader, NothingComesOutOfAnIncompleteFrame) {
  const Bytes frame = SomeFrames().front();
  FrameReader reader;
  ASSERT_OK(reader.Append(std::span(frame).first(frame.size() - 1)));
  EXPECT_FALSE(reader.NextFrame().has_value());
  ASSERT_OK(reader.Append(std::span(frame).last(1)));
  EXPECT_EQ(reader.NextFrame(), frame);
}

TEST(FrameReader, AnOversizedLengthFailsAtItsPrefixAndForEver) {
  FrameReader reader;
  const Bytes prefix = {0x01, 0x00, 0x10, 0x00};  // 1 MiB + 1
  const Status status = reader.Append(prefix);
  ASSERT_RAISES(InvalidArgument, status);
  EXPECT_TRUE(StartsWith(status.message(), "frame_length = 1048577: ")) << status.message();
  const Bytes more = SomeFrames().front();
  EXPECT_EQ(reader.Append(more).message(), status.message());
  EXPECT_FALSE(reader.NextFrame().has_value());
}

TEST(FrameReader, AnUndersizedLengthFails) {
  FrameReader reader;
  const Bytes prefix = {11, 0, 0, 0};
  EXPECT_TRUE(StartsWith(reader.Append(prefix).message(), "frame_length = 11: "));
}

class FrameReaderOnASocket : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  void Send(std::span<const uint8_t> bytes) {
    ASSERT_EQ(::write(fds_[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  void CloseWriter() {
    ::close(fds_[1]);
    fds_[1] = -1;
  }
  int reader_fd() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
};

TEST_F(FrameReaderOnASocket, FramesSplitAcrossWritesAreReassembled) {
  const std::vector<Bytes> frames = SomeFrames();
  const Bytes stream = Concatenated(frames);
  FrameReader reader;
  std::vector<Bytes> read;
  // Pieces of 5 bytes: every frame boundary falls somewhere inside a piece.
  for (size_t at = 0; at < stream.size(); at += 5) {
    Send(std::span(stream).subspan(at, std::min<size_t>(5, stream.size() - at)));
    ASSERT_OK(reader.ReadFrom(reader_fd()));
    for (Bytes& frame : Drain(reader)) read.push_back(std::move(frame));
  }
  EXPECT_EQ(read, frames);
  CloseWriter();
  EXPECT_RAISES(EndOfStream, reader.ReadFrom(reader_fd()));
}

TEST_F(FrameReaderOnASocket, AnEndInsideAFrameNamesTheFrameLength) {
  const Bytes frame = SomeFrames().front();
  Send(std::span(frame).first(10));
  CloseWriter();
  FrameReader reader;
  ASSERT_OK(reader.ReadFrom(reader_fd()));
  const Status status = reader.ReadFrom(reader_fd());
  EXPECT_RAISES(InvalidArgument, status);
  EXPECT_TRUE(StartsWith(status.message(), "frame_length = 28: the stream ended after 10 bytes"))
      << status.message();
}

TEST_F(FrameReaderOnASocket, AnEndInsideTheLengthPrefixIsAnErrorToo) {
  const Bytes frame = SomeFrames().front();
  Send(std::span(frame).first(2));
  CloseWriter();
  FrameReader reader;
  ASSERT_OK(reader.ReadFrom(reader_fd()));
  EXPECT_TRUE(StartsWith(reader.ReadFrom(reader_fd()).message(), "frame_length = missing: "));
}

TEST_F(FrameReaderOnASocket, ANonBlockingSocketWithNothingToReadIsNotAnError) {
  ASSERT_EQ(::fcntl(reader_fd(), F_SETFL, O_NONBLOCK), 0);
  FrameReader reader;
  EXPECT_OK(reader.ReadFrom(reader_fd()));
  EXPECT_FALSE(reader.NextFrame().has_value());
}

}  // namespace
}  // namespace sluice::brokerd::protocol
