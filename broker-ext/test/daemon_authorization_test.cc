// Topic grants in the real daemon (docs/brokerd.md, "Security model"): a topic its peer may read
// is served, any other refused with NOT_AUTHORIZED naming the topic and the peer, and the
// connection goes on. Grants are made for the uid and gid this test runs with, which are the
// peer's the daemon sees.
#include <unistd.h>

#include "daemon_connection.h"
#include "sluice/segment_reader.h"

namespace sluice::brokerd {
namespace {

namespace p = protocol;

class DaemonAuthorizationTest : public DaemonConnectionTest {
 protected:
  // A topic of one partition holding `records` records.
  void TopicWith(const std::string& topic, int records) {
    CreateTopic(topic, 1);
    for (int i = 0; i < records; ++i) Produce(topic, 0, "value-" + std::to_string(i));
  }

  static p::Subscribe Request(const std::string& topic) {
    p::Subscribe request;
    request.slot_count = 8;
    request.slot_size = 64 * 1024;
    request.topic = topic;
    request.partitions.push_back({0, p::StartPosition::kEarliest, 0});
    return request;
  }

  // Reads the subscription's segment until `count` records came.
  void Read(const p::Subscribed& subscribed, int count) {
    auto reader = SegmentReader::Open((dir_ / subscribed.segment_name).string());
    ASSERT_OK(reader);
    for (int seen = 0; seen < count;) {
      auto object = (*reader)->Next(std::chrono::seconds(10));
      ASSERT_OK(object) << Log();
      seen += static_cast<int>(object->record_count);
      ASSERT_OK((*reader)->Release(*object));
    }
  }
};

TEST_F(DaemonAuthorizationTest, AGrantedTopicIsServedAnotherRefusedAndTheConnectionGoesOn) {
  TopicWith("orders", 5);
  TopicWith("logs.app", 5);
  TopicWith("payments", 5);
  const std::string uid = std::to_string(::geteuid());
  const std::string gid = std::to_string(::getegid());
  StartDaemon({"-X", "sluice.allowed.topics=uid=" + uid + ":orders;gid=" + gid + ":logs.*"});
  auto connection = Connect();

  connection->Send(1, Request("payments"));
  auto answer = connection->Receive();
  ASSERT_TRUE(answer.has_value()) << Log();
  EXPECT_EQ(answer->request_id, 1u) << "the refusal answers its request";
  auto* error = std::get_if<p::ErrorMessage>(&answer->message);
  ASSERT_NE(error, nullptr) << p::NameOf(p::TypeOf(answer->message));
  EXPECT_EQ(error->code, p::ErrorCode::kNotAuthorized);
  EXPECT_EQ(error->subscription_id, 0u);
  EXPECT_EQ(error->message, "topic payments: uid " + uid + " (gid " + gid +
                                ") may not read it through this daemon (sluice.allowed.topics)");
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(!name.starts_with("sluice-brokerd.") || name.ends_with(".lock"))
        << "no segment was made for the refused topic: " << name;
  }

  // The same connection subscribes to what it may read: by its uid, and by its gid's prefix.
  for (const std::string topic : {"orders", "logs.app"}) {
    connection->Send(2, Request(topic));
    answer = connection->Receive();
    ASSERT_TRUE(answer.has_value()) << Log();
    auto* subscribed = std::get_if<p::Subscribed>(&answer->message);
    ASSERT_NE(subscribed, nullptr) << topic << ": " << p::NameOf(p::TypeOf(answer->message));
    Read(*subscribed, 5);
  }
  EXPECT_NE(Log().find("code=NOT_AUTHORIZED"), std::string::npos) << Log();
}

// Without any grant the daemon's own uid reads every topic, as before topic grants.
TEST_F(DaemonAuthorizationTest, WithoutGrantsTheDaemonsOwnUidReadsAnyTopic) {
  TopicWith("payments", 5);
  StartDaemon();
  auto connection = Connect();
  connection->Send(1, Request("payments"));
  auto answer = connection->Receive();
  ASSERT_TRUE(answer.has_value()) << Log();
  auto* subscribed = std::get_if<p::Subscribed>(&answer->message);
  ASSERT_NE(subscribed, nullptr) << p::NameOf(p::TypeOf(answer->message)) << "\n" << Log();
  Read(*subscribed, 5);
}

}  // namespace
}  // namespace sluice::brokerd
