#include "daemon/daemon_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest_util.h"

namespace sluice::brokerd {
namespace {

using namespace std::chrono_literals;

class DaemonConfigTest : public ::testing::Test {
 protected:
  Result<DaemonConfig> Parse(std::vector<std::string_view> args) {
    return ParseDaemonConfig(args, [this](const std::string& path) -> Result<std::string> {
      auto found = files_.find(path);
      if (found == files_.end()) return Status(StatusCode::kIoError, path + ": no such file");
      return found->second;
    });
  }

  std::string Kafka(const DaemonConfig& config, std::string_view key) {
    for (const auto& [k, v] : config.kafka) {
      if (k == key) return v;
    }
    return "<unset>";
  }

  // Each case's arguments fail to parse with a message containing its text.
  void Expect(const std::vector<std::pair<std::vector<std::string_view>, std::string>>& cases) {
    for (const auto& [args, expected] : cases) {
      auto config = Parse(args);
      ASSERT_FALSE(config.ok()) << expected;
      EXPECT_NE(config.status().message().find(expected), std::string::npos)
          << config.status().message() << " does not contain " << expected;
    }
  }

  std::map<std::string, std::string> files_;
};

TEST_F(DaemonConfigTest, FlagsGiveTheEssentialsAndDefaultsStayOnLoopback) {
  auto config = Parse({"--bootstrap-servers", "127.0.0.1:9092", "--socket", "/run/sluice.sock"});
  ASSERT_OK(config);
  EXPECT_EQ(Kafka(*config, "bootstrap.servers"), "127.0.0.1:9092");
  EXPECT_EQ(config->socket_path, "/run/sluice.sock");
  EXPECT_EQ(config->metrics.host, "127.0.0.1");
  EXPECT_EQ(config->segment_dir, "/dev/shm");
  EXPECT_EQ(config->segment_max_total_bytes, 1ull << 30);
  EXPECT_EQ(config->allowed_uids, std::vector<uid_t>{::geteuid()});
  EXPECT_TRUE(config->allowed_gids.empty());
  EXPECT_EQ(config->liveness_timeout, 5000ms);
  EXPECT_TRUE(config->metrics.enabled);
  EXPECT_TRUE(config->native_fetch);
  EXPECT_EQ(config->producers_max, 256u);
  EXPECT_EQ(config->producers_max_per_uid, 128u);
}

TEST_F(DaemonConfigTest, MetricsCanBeTurnedOffOrGivenAnyFreePort) {
  auto off = Parse({"--bootstrap-servers", "b:1", "--socket", "/s", "--metrics", "off"});
  ASSERT_OK(off);
  EXPECT_FALSE(off->metrics.enabled);
  auto any = Parse({"--bootstrap-servers", "b:1", "--socket", "/s", "--metrics", "127.0.0.1:0"});
  ASSERT_OK(any);
  EXPECT_TRUE(any->metrics.enabled);
  EXPECT_EQ(any->metrics.port, 0);
}

TEST_F(DaemonConfigTest, TheFileSetsBothKindsOfKeysAndFlagsOverrideIt) {
  files_["/etc/sluice.conf"] =
      "# comment\n"
      "bootstrap.servers = ignored:1\n"
      "bootstrap.servers=10.0.0.1:9092\n"
      "security.protocol=SSL\n"
      "\n"
      "sluice.socket=/run/a.sock\n"
      "sluice.allowed.uids=1000,1001\n"
      "sluice.gap.timeout.ms=250\n"
      "sluice.pause.after.ms=0\n"
      "sluice.segment.max.total.bytes=268435456\n"
      "sluice.fetch=librdkafka\n"
      "sluice.producers.max=10\n"
      "sluice.producers.max.per.uid=3\n"
      "sluice.metrics.listen=[::1]:9500\n";
  auto config = Parse({"--config", "/etc/sluice.conf", "--socket", "/run/b.sock", "-X",
                       "security.protocol=SASL_SSL"});
  ASSERT_OK(config);
  EXPECT_EQ(config->socket_path, "/run/b.sock");
  EXPECT_EQ(Kafka(*config, "security.protocol"), "SASL_SSL");
  EXPECT_EQ(Kafka(*config, "bootstrap.servers"), "10.0.0.1:9092");
  EXPECT_EQ(config->kafka.size(), 2u) << "keys are trimmed, so the file's two lines are one key";
  EXPECT_EQ(config->allowed_uids, (std::vector<uid_t>{1000, 1001}));
  EXPECT_EQ(config->gap_timeout, 250ms);
  EXPECT_EQ(config->pause_after, 0ms);
  EXPECT_EQ(config->segment_max_total_bytes, 256ull << 20);
  EXPECT_FALSE(config->native_fetch);
  EXPECT_EQ(config->producers_max, 10u);
  EXPECT_EQ(config->producers_max_per_uid, 3u);
  EXPECT_EQ(config->metrics.host, "::1");
  EXPECT_EQ(config->metrics.port, 9500);
}

TEST_F(DaemonConfigTest, BadInputIsRefusedNamingTheKeyOrFlag) {
  files_["/bad.conf"] = "sluice.socket=/s\nno equals sign here\n";
  const std::string long_path = "/" + std::string(200, 'p');
  const std::vector<std::pair<std::vector<std::string_view>, std::string>> cases = {
      {{"--socket", "/s"}, "bootstrap.servers: missing"},
      {{"--bootstrap-servers", "b:1"}, "sluice.socket: missing"},
      {{"--bootstrap-servers"}, "--bootstrap-servers: no value"},
      {{"--nope", "1"}, "unknown flag --nope"},
      {{"-X", "=1"}, "-X: expected key=value"},
      {{"-X", "sluice.nope=1"}, "sluice.nope = \"1\": unknown sluice setting"},
      {{"-X", "sluice.liveness.timeout.ms=5"}, "sluice.liveness.timeout.ms = \"5\""},
      {{"-X", "sluice.allowed.uids=1,x"}, "sluice.allowed.uids = \"x\": expected a number"},
      {{"--metrics", "localhost:9"}, "the host must be an IP address"},
      {{"--metrics", "127.0.0.1:70000"}, "expected a number"},
      {{"--bootstrap-servers", "b:1", "--socket", long_path}, "sluice.socket"},
      {{"-X", "sluice.segment.dir=shm"}, "must be an absolute path"},
      {{"-X", "sluice.segment.max.total.bytes=0"}, "sluice.segment.max.total.bytes = \"0\""},
      {{"-X", "sluice.segment.max.total.bytes=1G"}, "expected a number"},
      {{"-X", "sluice.fetch=fast"}, "sluice.fetch = \"fast\": native or librdkafka"},
      {{"-X", "sluice.producers.max=0"}, "sluice.producers.max = \"0\": must be positive"},
      {{"-X", "sluice.producers.max.per.uid=-1"}, "sluice.producers.max.per.uid = \"-1\""},
      {{"--config", "/missing.conf"}, "/missing.conf: no such file"},
      {{"--config", "/bad.conf"}, "/bad.conf:2: expected key=value"},
  };
  Expect(cases);
}

// docs/brokerd.md, "Security model": with no grant, the daemon's own uid reads every topic, and
// nobody else connects.
TEST_F(DaemonConfigTest, WithoutGrantsTheDaemonsOwnUidReadsEveryTopic) {
  auto config = Parse({"--bootstrap-servers", "b:1", "--socket", "/s"});
  ASSERT_OK(config);
  EXPECT_TRUE(config->topic_acl.Names(::geteuid(), 12345));
  EXPECT_FALSE(config->topic_acl.Names(::geteuid() + 1, 12345));
  EXPECT_EQ(config->topic_acl.Refusal(::geteuid(), 12345, "any.topic"), std::nullopt);
  EXPECT_NE(config->topic_acl.Refusal(::geteuid() + 1, 12345, "any.topic"), std::nullopt);
}

// What sluice.allowed.uids / gids meant before topic rules, they still mean: every topic.
TEST_F(DaemonConfigTest, AllowedUidsAndGidsStillReadEveryTopic) {
  auto config = Parse({"--bootstrap-servers", "b:1", "--socket", "/s", "-X",
                       "sluice.allowed.uids=1000", "-X", "sluice.allowed.gids=2000"});
  ASSERT_OK(config);
  EXPECT_EQ(config->topic_acl.Refusal(1000, 1, "orders"), std::nullopt);
  EXPECT_EQ(config->topic_acl.Refusal(7, 2000, "metrics.cpu"), std::nullopt);
  EXPECT_EQ(config->allowed_uids, std::vector<uid_t>{1000});
  if (::geteuid() != 1000) {
    EXPECT_FALSE(config->topic_acl.Names(::geteuid(), 1))
        << "as before, a list leaves the daemon's own uid out unless it names it";
  }
}

TEST_F(DaemonConfigTest, TopicRulesGrantTheirTopicsAndLetTheirPeersConnect) {
  files_["/brokerd.conf"] = "sluice.allowed.topics = uid=1001:orders,metrics.* ; gid=3000:*\n";
  auto config = Parse({"--bootstrap-servers", "b:1", "--socket", "/s", "--config", "/brokerd.conf",
                       "-X", "sluice.allowed.uids=1002"});
  ASSERT_OK(config);
  EXPECT_EQ(config->allowed_uids, (std::vector<uid_t>{1002, 1001}))
      << "the socket lets in every uid a grant names";
  EXPECT_EQ(config->allowed_gids, std::vector<gid_t>{3000});
  const TopicAcl& acl = config->topic_acl;
  EXPECT_EQ(acl.Refusal(1001, 5, "orders"), std::nullopt);
  EXPECT_EQ(acl.Refusal(1001, 5, "metrics.cpu"), std::nullopt);
  EXPECT_NE(acl.Refusal(1001, 5, "payments"), std::nullopt);
  EXPECT_EQ(acl.Refusal(1002, 5, "payments"), std::nullopt) << "sluice.allowed.uids: every topic";
  EXPECT_EQ(acl.Refusal(4000, 3000, "payments"), std::nullopt);
}

// A read grant is no write grant: PRODUCE is judged by sluice.produce.topics alone, whose uids and
// gids may connect too; unset, it grants the daemon's own uid every topic only while no read
// setting is set, as the configuration without grants always let it (docs/brokerd.md, "Security
// model").
TEST_F(DaemonConfigTest, ProducingIsGrantedApartFromReading) {
  auto none = Parse({"--bootstrap-servers", "b:1", "--socket", "/s"});
  ASSERT_OK(none);
  EXPECT_EQ(none->produce_acl.Refusal(::geteuid(), 1, "sluice.chunks.any"), std::nullopt);
  EXPECT_NE(none->produce_acl.Refusal(::geteuid() + 1, 1, "sluice.chunks.any"), std::nullopt);

  const uid_t reader = ::geteuid() + 1;
  for (const std::string& reads : {"sluice.allowed.topics=uid=" + std::to_string(reader) + ":*",
                                   "sluice.allowed.uids=" + std::to_string(reader),
                                   "sluice.allowed.uids=" + std::to_string(::geteuid())}) {
    SCOPED_TRACE(reads);
    auto config = Parse({"--bootstrap-servers", "b:1", "--socket", "/s", "-X", reads});
    ASSERT_OK(config);
    for (const uid_t uid : {reader, ::geteuid()}) {
      EXPECT_NE(config->produce_acl.Refusal(uid, 1, "sluice.chunks.any"), std::nullopt)
          << "uid " << uid << " may read, and produce nothing";
    }
  }

  auto granted =
      Parse({"--bootstrap-servers", "b:1", "--socket", "/s", "-X", "sluice.allowed.uids=1000", "-X",
             "sluice.produce.topics=uid=1001:sluice.chunks.*;gid=3000:sluice.chunks.a"});
  ASSERT_OK(granted);
  const TopicAcl& produce = granted->produce_acl;
  EXPECT_EQ(produce.Refusal(1001, 5, "sluice.chunks.b"), std::nullopt);
  EXPECT_NE(produce.Refusal(1001, 5, "orders"), std::nullopt);
  EXPECT_EQ(produce.Refusal(7, 3000, "sluice.chunks.a"), std::nullopt);
  EXPECT_NE(produce.Refusal(1000, 5, "sluice.chunks.a"), std::nullopt) << "a reader of every topic";
  EXPECT_NE(granted->topic_acl.Refusal(1001, 5, "sluice.chunks.b"), std::nullopt)
      << "a producer reads nothing for it";
  EXPECT_EQ(granted->allowed_uids, (std::vector<uid_t>{1000, 1001})) << "producers connect";
  EXPECT_EQ(granted->allowed_gids, std::vector<gid_t>{3000});

  auto bad = Parse(
      {"--bootstrap-servers", "b:1", "--socket", "/s", "-X", "sluice.produce.topics=uid=1001"});
  EXPECT_RAISES_WITH_MESSAGE(InvalidArgument, "sluice.produce.topics: rule \"uid=1001\"", bad);
}

// Each bad rule stops the daemon naming sluice.allowed.topics and the rule.
TEST_F(DaemonConfigTest, BadTopicRulesAreRefusedNamingThePropertyAndTheRule) {
  const std::string too_long = "uid=1:" + std::string(250, 'a');
  const std::string key = "sluice.allowed.topics=";
  const std::vector<std::string> texts = {
      key + "uid=1001", key + "user=1:orders", key + "uid=x:orders",     key + "uid=-1:orders",
      key + "uid=1:",   key + "uid=1:a,,b",    key + "uid=1:or ders",    key + "uid=1:a*b",
      key + "uid=1:**", key + "uid=1:..",      key + too_long,           key + "uid=1:a;;gid=2:b",
      key + "uid=1:a;", key + "uid:orders",    key + "uid=4294967296:a",
  };
  const std::vector<std::string> expected = {
      "sluice.allowed.topics: rule \"uid=1001\": expected uid=N:TOPICS or gid=N:TOPICS",
      "sluice.allowed.topics: rule \"user=1:orders\": expected uid=N or gid=N before ':'",
      "rule \"uid=x:orders\": \"x\" is not a uid or gid number",
      "rule \"uid=-1:orders\": \"-1\" is not a uid or gid number",
      "rule \"uid=1:\": no topic pattern after ':'",
      "rule \"uid=1:a,,b\": an empty topic pattern",
      "rule \"uid=1:or ders\": topic pattern \"or ders\": a topic name has only letters",
      "rule \"uid=1:a*b\": topic pattern \"a*b\"",
      "rule \"uid=1:**\": topic pattern \"**\"",
      "rule \"uid=1:..\": topic pattern \"..\": not a topic name Kafka allows",
      "is longer than 249 characters",
      "sluice.allowed.topics: rule \"\": an empty rule",
      "sluice.allowed.topics: rule \"\": an empty rule",
      "rule \"uid:orders\": expected uid=N or gid=N before ':'",
      "rule \"uid=4294967296:a\": \"4294967296\" is not a uid or gid number",
  };
  std::vector<std::pair<std::vector<std::string_view>, std::string>> cases;
  for (size_t i = 0; i < texts.size(); ++i) {
    cases.push_back(
        {{"--bootstrap-servers", "b:1", "--socket", "/s", "-X", texts[i]}, expected[i]});
  }
  cases.push_back({{"--bootstrap-servers", "b:1", "--socket", "/s", "-X",
                    "sluice.allowed.uids=1001", "-X", "sluice.allowed.topics=uid=1001:orders"},
                   "sluice.allowed.topics: rule \"uid=1001:orders\": uid=1001 is in "
                   "sluice.allowed.uids, which lets it read every topic; take it out of "
                   "sluice.allowed.uids to limit it to its rules"});
  cases.push_back({{"--bootstrap-servers", "b:1", "--socket", "/s", "-X", "sluice.allowed.gids=7",
                    "-X", "sluice.allowed.topics=gid=7:*"},
                   "rule \"gid=7:*\": gid=7 is in sluice.allowed.gids"});
  Expect(cases);
}

// docs/brokerd.md, "Security model": the group that may open the socket and segments too.
TEST_F(DaemonConfigTest, TheAccessGroupIsAGidOrAGroupNameAndNoneByDefault) {
  auto none = Parse({"--bootstrap-servers", "b:1", "--socket", "/s"});
  ASSERT_OK(none);
  EXPECT_FALSE(none->access_group.has_value());
  // The tests run as root, who may give its files any group; a gid needs no name.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, a member of every group";
  auto by_gid =
      Parse({"--bootstrap-servers", "b:1", "--socket", "/s", "-X", "sluice.access.group=54340"});
  ASSERT_OK(by_gid);
  EXPECT_EQ(by_gid->access_group, std::optional<gid_t>(54340));
  auto by_name =
      Parse({"--bootstrap-servers", "b:1", "--socket", "/s", "-X", "sluice.access.group=root"});
  ASSERT_OK(by_name);
  EXPECT_EQ(by_name->access_group, std::optional<gid_t>(0));
  Expect({{{"--bootstrap-servers", "b:1", "--socket", "/s", "-X",
            "sluice.access.group=no-such-sluice-group"},
           "sluice.access.group = \"no-such-sluice-group\": no such group"},
          {{"--bootstrap-servers", "b:1", "--socket", "/s", "-X", "sluice.access.group="},
           "sluice.access.group = \"\": no such group"},
          {{"--bootstrap-servers", "b:1", "--socket", "/s", "-X", "sluice.access.group=12x"},
           "sluice.access.group = \"12x\": expected a number"}});
}

// ---- The settings table: its defaults, its listing, and docs/brokerd.md's copy ----

// A default the setting's own parser refuses would stop every DaemonConfig from being made.
TEST(DaemonSettingsTest, EveryDefaultIsAValueItsSettingAccepts) {
  for (const DaemonSetting& setting : DaemonSettings()) {
    SCOPED_TRACE(setting.key);
    EXPECT_NE(setting.default_value.empty(), setting.unset.empty())
        << "a setting has a default value or says what holds without one";
    if (setting.default_value.empty()) continue;
    DaemonConfig config;
    EXPECT_OK(setting.apply(setting, setting.default_value, config));
  }
}

TEST(DaemonSettingsTest, KeysAndFlagsAreEachOneSettings) {
  std::set<std::string_view> keys;
  std::set<std::string_view> flags;
  for (const DaemonSetting& setting : DaemonSettings()) {
    EXPECT_TRUE(keys.insert(setting.key).second) << setting.key;
    if (!setting.flag.empty()) {
      EXPECT_TRUE(flags.insert(setting.flag).second) << setting.flag;
    }
  }
}

TEST(DaemonSettingsTest, TheListingHasALineForEverySettingWithItsDefault) {
  std::istringstream listing(FormatDaemonSettings());
  std::string line;
  ASSERT_TRUE(std::getline(listing, line));
  EXPECT_EQ(line, "key\tflag\ttype\tdefault\tbounds\tdoc");
  for (const DaemonSetting& setting : DaemonSettings()) {
    ASSERT_TRUE(std::getline(listing, line)) << "no line for " << setting.key;
    const std::string_view default_text =
        setting.default_value.empty() ? setting.unset : setting.default_value;
    EXPECT_TRUE(line.starts_with(std::string(setting.key) + "\t" + std::string(setting.flag) +
                                 "\t" + std::string(setting.type) + "\t" +
                                 std::string(default_text) + "\t"))
        << line;
    EXPECT_TRUE(line.ends_with(setting.doc)) << line;
  }
  EXPECT_FALSE(std::getline(listing, line)) << "a line of no setting: " << line;
  EXPECT_NE(FormatDaemonSettings().find("sluice.liveness.timeout.ms\t\tmilliseconds\t5000\t"
                                        "at least 10\t"),
            std::string::npos)
      << "a number's bounds are its minimum";
}

// The rows of the table under docs/brokerd.md's "## Configuration", each split into its cells.
std::vector<std::vector<std::string>> DocumentedSettings() {
  std::ifstream in(BROKERD_DOC);
  EXPECT_TRUE(in) << BROKERD_DOC;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) in_section = line == "## Configuration";
    if (!in_section || !line.starts_with("| `")) continue;
    std::vector<std::string> cells;
    std::istringstream row(line.substr(1));
    std::string cell;
    while (std::getline(row, cell, '|')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

std::string Quoted(std::string_view text) { return "`" + std::string(text) + "`"; }

// docs/brokerd.md, "Configuration", lists what the daemon knows, with the same flags and defaults.
TEST(DaemonSettingsTest, TheDocsTableListsEverySettingWithItsFlagAndDefault) {
  const std::vector<std::vector<std::string>> rows = DocumentedSettings();
  ASSERT_FALSE(rows.empty()) << "no table under ## Configuration in " << BROKERD_DOC;
  std::set<std::string> documented;
  for (const std::vector<std::string>& row : rows) {
    ASSERT_GE(row.size(), 4u) << row[0];
    const std::string key =
        row[0].substr(row[0].find('`') + 1, row[0].rfind('`') - row[0].find('`') - 1);
    documented.insert(key);
    const auto setting = std::ranges::find(DaemonSettings(), key, &DaemonSetting::key);
    if (setting == DaemonSettings().end()) {
      ADD_FAILURE() << BROKERD_DOC << " documents " << key << ", which the daemon does not know";
      continue;
    }
    EXPECT_EQ(row[0], " " + Quoted(key) + " ") << "one key a row";
    EXPECT_EQ(row[1], setting->flag.empty() ? " " : " " + Quoted(setting->flag) + " ") << key;
    const std::string default_text = setting->default_value.empty()
                                         ? std::string(setting->unset)
                                         : Quoted(setting->default_value);
    EXPECT_NE(row[2].find(default_text), std::string::npos)
        << key << "'s default is " << default_text << ", the doc says" << row[2];
  }
  for (const DaemonSetting& setting : DaemonSettings()) {
    EXPECT_TRUE(documented.contains(std::string(setting.key)))
        << setting.key << " is missing from " << BROKERD_DOC;
  }
}

}  // namespace
}  // namespace sluice::brokerd
