// Topic grants (daemon/topic_acl.h): literal names, prefixes and `*`, by uid or by gid, and the
// refusal that names the topic and the peer.
#include "daemon/topic_acl.h"

#include <gtest/gtest.h>

#include "gtest_util.h"

namespace sluice::brokerd {
namespace {

std::vector<TopicGrant> Rules(std::string_view text) {
  auto rules = TopicAcl::ParseRules("sluice.allowed.topics", text);
  EXPECT_OK(rules);
  return rules.ok() ? rules.MoveValue() : std::vector<TopicGrant>{};
}

TEST(TopicAcl, ALiteralNameMatchesThatTopicOnly) {
  const TopicAcl acl(Rules("uid=1001:orders"));
  EXPECT_EQ(acl.Refusal(1001, 1, "orders"), std::nullopt);
  EXPECT_NE(acl.Refusal(1001, 1, "orders2"), std::nullopt);
  EXPECT_NE(acl.Refusal(1001, 1, "order"), std::nullopt);
  EXPECT_NE(acl.Refusal(1001, 1, "Orders"), std::nullopt) << "topic names are case-sensitive";
}

TEST(TopicAcl, APrefixMatchesEveryTopicStartingWithIt) {
  const TopicAcl acl(Rules("uid=1001:metrics.*"));
  EXPECT_EQ(acl.Refusal(1001, 1, "metrics.cpu"), std::nullopt);
  EXPECT_EQ(acl.Refusal(1001, 1, "metrics."), std::nullopt);
  EXPECT_NE(acl.Refusal(1001, 1, "metrics"), std::nullopt);
  EXPECT_NE(acl.Refusal(1001, 1, "xmetrics.cpu"), std::nullopt);
}

TEST(TopicAcl, AStarAloneMatchesEveryTopic) {
  const TopicAcl acl(Rules("gid=3000:*"));
  EXPECT_EQ(acl.Refusal(1, 3000, "orders"), std::nullopt);
  EXPECT_EQ(acl.Refusal(2, 3000, "a"), std::nullopt);
}

TEST(TopicAcl, AGrantIsForItsUidOrItsGidOnly) {
  const TopicAcl acl(Rules("uid=1001:orders;gid=1001:payments"));
  EXPECT_EQ(acl.Refusal(1001, 5, "orders"), std::nullopt);
  EXPECT_NE(acl.Refusal(1001, 5, "payments"), std::nullopt) << "gid 1001's, not uid 1001's";
  EXPECT_EQ(acl.Refusal(7, 1001, "payments"), std::nullopt);
  EXPECT_NE(acl.Refusal(7, 1001, "orders"), std::nullopt) << "uid 1001's, not gid 1001's";
  EXPECT_TRUE(acl.Names(1001, 5));
  EXPECT_TRUE(acl.Names(7, 1001));
  EXPECT_FALSE(acl.Names(7, 5));
}

TEST(TopicAcl, GrantsAddUpOverRulesAndPatterns) {
  const TopicAcl acl(Rules(" uid=1001 : orders , logs.* ; uid=1001:payments"));
  ASSERT_EQ(acl.grants().size(), 3u);
  for (const std::string topic : {"orders", "logs.app", "payments"}) {
    EXPECT_EQ(acl.Refusal(1001, 1, topic), std::nullopt) << topic;
  }
  EXPECT_NE(acl.Refusal(1001, 1, "logs"), std::nullopt);
}

TEST(TopicAcl, NoGrantsRefuseEveryone) {
  const TopicAcl acl;
  EXPECT_FALSE(acl.Names(0, 0));
  EXPECT_NE(acl.Refusal(0, 0, "orders"), std::nullopt);
}

TEST(TopicAcl, TheRefusalNamesTheTopicThePeerAndTheSetting) {
  const TopicAcl acl(Rules("uid=1001:orders"));
  EXPECT_EQ(acl.Refusal(1002, 1003, "payments"),
            "topic payments: uid 1002 (gid 1003) may not read it through this daemon "
            "(sluice.allowed.topics)");
  const TopicAcl produce(Rules("uid=1001:orders"), TopicAcl::Access::kProduce);
  EXPECT_EQ(produce.Refusal(1002, 1003, "payments"),
            "topic payments: uid 1002 (gid 1003) may not produce to it through this daemon "
            "(sluice.produce.topics)");
}

}  // namespace
}  // namespace sluice::brokerd
