#include "daemon/daemon_config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace sluice::brokerd {
namespace {

using namespace std::chrono_literals;

class DaemonConfigTest : public testing::Test {
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

  std::map<std::string, std::string> files_;
};

TEST_F(DaemonConfigTest, FlagsGiveTheEssentialsAndDefaultsStayOnLoopback) {
  auto config = Parse({"--bootstrap-servers", "127.0.0.1:9092", "--socket", "/run/sluice.sock"});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(Kafka(*config, "bootstrap.servers"), "127.0.0.1:9092");
  EXPECT_EQ(config->socket_path, "/run/sluice.sock");
  EXPECT_EQ(config->metrics.host, "127.0.0.1");
  EXPECT_EQ(config->segment_dir, "/dev/shm");
  EXPECT_EQ(config->segment_max_total_bytes, 1ull << 30);
  EXPECT_TRUE(config->allowed_uids.empty());
  EXPECT_EQ(config->liveness_timeout, 5000ms);
  EXPECT_TRUE(config->metrics.enabled);
  EXPECT_TRUE(config->native_fetch);
}

TEST_F(DaemonConfigTest, MetricsCanBeTurnedOffOrGivenAnyFreePort) {
  auto off = Parse({"--bootstrap-servers", "b:1", "--socket", "/s", "--metrics", "off"});
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->metrics.enabled);
  auto any = Parse({"--bootstrap-servers", "b:1", "--socket", "/s", "--metrics", "127.0.0.1:0"});
  ASSERT_TRUE(any.ok()) << any.status().ToString();
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
      "sluice.metrics.listen=[::1]:9500\n";
  auto config = Parse({"--config", "/etc/sluice.conf", "--socket", "/run/b.sock", "-X",
                       "security.protocol=SASL_SSL"});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->socket_path, "/run/b.sock");
  EXPECT_EQ(Kafka(*config, "security.protocol"), "SASL_SSL");
  EXPECT_EQ(Kafka(*config, "bootstrap.servers"), "10.0.0.1:9092");
  EXPECT_EQ(config->kafka.size(), 2u) << "keys are trimmed, so the file's two lines are one key";
  EXPECT_EQ(config->allowed_uids, (std::vector<uid_t>{1000, 1001}));
  EXPECT_EQ(config->gap_timeout, 250ms);
  EXPECT_EQ(config->pause_after, 0ms);
  EXPECT_EQ(config->segment_max_total_bytes, 256ull << 20);
  EXPECT_FALSE(config->native_fetch);
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
      {{"--config", "/missing.conf"}, "/missing.conf: no such file"},
      {{"--config", "/bad.conf"}, "/bad.conf:2: expected key=value"},
  };
  for (const auto& [args, expected] : cases) {
    auto config = Parse(args);
    ASSERT_FALSE(config.ok()) << expected;
    EXPECT_NE(config.status().message().find(expected), std::string::npos)
        << config.status().message() << " does not contain " << expected;
  }
}

}  // namespace
}  // namespace sluice::brokerd
