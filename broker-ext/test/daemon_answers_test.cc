// What the daemon answers a reader's frame that it refuses (docs/formats.md, "ERROR"): the
// request id of any frame whose header could be read, UNEXPECTED_MESSAGE for a message only the
// daemon sends whatever its body, BAD_FRAME for a field outside the format's bounds and
// BAD_REQUEST for a request within them that the daemon's own limits refuse.
#include <gtest/gtest.h>

#include "daemon_connection.h"

namespace sluice::brokerd {
namespace {

namespace p = protocol;
using namespace std::chrono_literals;

class DaemonAnswersTest : public DaemonConnectionTest {
 protected:
  void SetUp() override {
    DaemonConnectionTest::SetUp();
    CreateTopic("t", 1);
    StartDaemon();
  }

  static p::Subscribe Request() {
    p::Subscribe request;
    request.slot_count = 8;
    request.slot_size = 64 * 1024;
    request.topic = "t";
    request.partitions = {{0, p::StartPosition::kEarliest, 0}};
    return request;
  }

  static void Put(std::vector<uint8_t>& bytes, size_t at, uint64_t value, size_t size) {
    for (size_t i = 0; i < size; ++i) bytes[at + i] = static_cast<uint8_t>(value >> (8 * i));
  }

  // The ERROR the daemon answers `bytes` with.
  p::ErrorMessage AnswerTo(DaemonConnection& connection, const std::vector<uint8_t>& bytes,
                           uint64_t request_id) {
    connection.SendBytes(bytes);
    std::optional<p::Frame> answer = connection.Receive();
    EXPECT_TRUE(answer.has_value()) << Log();
    if (!answer.has_value()) return {};
    EXPECT_EQ(answer->request_id, request_id);
    auto* error = std::get_if<p::ErrorMessage>(&answer->message);
    EXPECT_NE(error, nullptr) << p::NameOf(p::TypeOf(answer->message));
    return error != nullptr ? *error : p::ErrorMessage{};
  }
};

constexpr size_t kBody = p::kFrameHeaderSize;

TEST_F(DaemonAnswersTest, AMalformedSubscribeIsAnsweredWithItsOwnRequestId) {
  auto connection = Connect();
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> bytes, p::EncodeFrame({41, Request()}));
  Put(bytes, kBody + 24, 9, 2);  // mode
  const p::ErrorMessage error = AnswerTo(*connection, bytes, 41);
  EXPECT_EQ(error.code, p::ErrorCode::kBadFrame);
  EXPECT_EQ(error.message.rfind("mode = 9", 0), 0u) << error.message;
  EXPECT_TRUE(connection->ClosedByDaemon());
}

TEST_F(DaemonAnswersTest, AFrameWhoseHeaderCannotBeReadIsAnsweredWithRequestIdZero) {
  auto connection = Connect();
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> bytes, p::EncodeFrame({42, Request()}));
  Put(bytes, 6, 99, 2);  // type
  const p::ErrorMessage error = AnswerTo(*connection, bytes, 0);
  EXPECT_EQ(error.code, p::ErrorCode::kUnknownType);
  EXPECT_TRUE(connection->ClosedByDaemon());
}

// A client has no business sending these, well-formed or not: the type says it all.
TEST_F(DaemonAnswersTest, ADaemonOnlyMessageIsUnexpectedWhateverItsBody) {
  const std::vector<p::Frame> frames = {
      {43, p::Subscribed{1, ObjectKind::kRecords, 0, {0}, "seg", {1}, "/dev/shm"}},
      {44, p::ErrorMessage{0, p::ErrorCode::kInternal, 1, 3, "from a reader"}},
      {45, p::StreamGap{1, 2, 2, 1000, "job-1", "cyan"}},
      {46, p::Producing{1}},
  };
  for (const p::Frame& frame : frames) {
    SCOPED_TRACE(p::NameOf(p::TypeOf(frame.message)));
    for (const bool broken_body : {false, true}) {
      auto connection = Connect();
      ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> bytes, p::EncodeFrame(frame));
      if (broken_body) {
        bytes.resize(kBody + 3);
        Put(bytes, 0, bytes.size() - 4, 4);
      }
      const p::ErrorMessage error = AnswerTo(*connection, bytes, frame.request_id);
      EXPECT_EQ(error.code, p::ErrorCode::kUnexpectedMessage) << error.message;
      EXPECT_TRUE(connection->ClosedByDaemon());
    }
  }
}

// slot_count's bounds are the format's: outside them the frame is malformed.
TEST_F(DaemonAnswersTest, ASlotCountOutsideTheFormatsBoundsIsABadFrame) {
  auto connection = Connect();
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> bytes, p::EncodeFrame({46, Request()}));
  Put(bytes, kBody, 65537, 4);  // slot_count
  const p::ErrorMessage error = AnswerTo(*connection, bytes, 46);
  EXPECT_EQ(error.code, p::ErrorCode::kBadFrame);
  EXPECT_EQ(error.message.rfind("slot_count = 65537", 0), 0u) << error.message;
  EXPECT_TRUE(connection->ClosedByDaemon());
}

// Within the format's bounds, a segment larger than the daemon serves is a request it refuses,
// and the connection goes on.
TEST_F(DaemonAnswersTest, ASegmentBeyondTheDaemonsLimitIsABadRequest) {
  auto connection = Connect();
  p::Subscribe request = Request();
  request.slot_count = 65536;
  request.slot_size = 1 << 20;  // 64 GiB in all
  ASSERT_OK_AND_ASSIGN(const std::vector<uint8_t> bytes, p::EncodeFrame({47, request}));
  const p::ErrorMessage error = AnswerTo(*connection, bytes, 47);
  EXPECT_EQ(error.code, p::ErrorCode::kBadRequest) << error.message;
  connection->Send(48, Request());
  std::optional<p::Frame> answer = connection->Receive();
  ASSERT_TRUE(answer.has_value()) << Log();
  EXPECT_TRUE(std::holds_alternative<p::Subscribed>(answer->message));
}

}  // namespace
}  // namespace sluice::brokerd
