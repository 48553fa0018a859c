#include "daemon/daemon_config.h"

#include <arpa/inet.h>
#include <grp.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace sluice::brokerd {
namespace {

Status Bad(std::string_view key, std::string_view value, std::string_view expectation) {
  return Status::InvalidArgument(std::string(key) + " = \"" + std::string(value) +
                                 "\": " + std::string(expectation));
}

template <typename T>
Result<std::vector<T>> NumberList(const DaemonSetting& setting, std::string_view text) {
  std::vector<T> values;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    Result<T> value = ParseNumber<T>(setting.key, text.substr(0, comma));
    if (!value.ok()) return value.status();
    values.push_back(*value);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return values;
}

Result<ListenAddress> Address(std::string_view key, std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return Bad(key, text, "expected HOST:PORT");
  ListenAddress address{std::string(text.substr(0, colon)), 0};
  if (!address.host.empty() && address.host.front() == '[' && address.host.back() == ']') {
    address.host = address.host.substr(1, address.host.size() - 2);
  }
  in6_addr ignored{};
  if (inet_pton(AF_INET, address.host.c_str(), &ignored) != 1 &&
      inet_pton(AF_INET6, address.host.c_str(), &ignored) != 1) {
    return Bad(key, text, "the host must be an IP address");
  }
  Result<uint16_t> port = ParseNumber<uint16_t>(key, text.substr(colon + 1));
  if (!port.ok()) return port.status();
  address.port = *port;
  return address;
}

// A number of milliseconds no less than the setting's minimum.
Result<std::chrono::milliseconds> Millis(const DaemonSetting& setting, std::string_view text) {
  Result<int64_t> ms = ParseNumber<int64_t>(setting.key, text);
  if (!ms.ok()) return ms.status();
  if (*ms < *setting.minimum) {
    return Bad(setting.key, text, "must be at least " + std::to_string(*setting.minimum));
  }
  return std::chrono::milliseconds(*ms);
}

template <typename T>
Result<T> Positive(const DaemonSetting& setting, std::string_view text) {
  Result<T> number = ParseNumber<T>(setting.key, text);
  if (number.ok() && *number == 0) return Bad(setting.key, text, "must be positive");
  return number;
}

// A group name, or a gid that needs no name (a container's often has none).
Result<gid_t> Group(std::string_view key, std::string_view text) {
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front()))) {
    return ParseNumber<gid_t>(key, text);
  }
  group entry{};
  group* found = nullptr;
  std::vector<char> buffer(16384);
  int err = 0;
  while ((err = ::getgrnam_r(std::string(text).c_str(), &entry, buffer.data(), buffer.size(),
                             &found)) == ERANGE) {
    buffer.resize(buffer.size() * 2);
  }
  if (found == nullptr) {
    return Bad(key, text,
               err == 0 ? "no such group"
                        : std::string("cannot look up the group: ") + std::strerror(err));
  }
  return found->gr_gid;
}

// The daemon gives its files the access group with fchown, which only root or a member may do:
// better said at start than at the first SUBSCRIBE.
Status CheckAccessGroup(std::string_view key, std::string_view text, gid_t gid) {
  if (::geteuid() == 0 || ::getegid() == gid) return Status::OK();
  std::vector<gid_t> groups(static_cast<size_t>(std::max(::getgroups(0, nullptr), 0)));
  const int count = ::getgroups(static_cast<int>(groups.size()), groups.data());
  if (count >= 0 &&
      std::ranges::find(groups.begin(), groups.begin() + count, gid) != groups.begin() + count) {
    return Status::OK();
  }
  return Bad(key, text,
             "sluice-brokerd runs as uid " + std::to_string(::geteuid()) +
                 ", which is not a member of gid " + std::to_string(gid) +
                 ", so it cannot give its socket and segments that group; add the daemon's "
                 "user to the group, or name one of its groups");
}

// A librdkafka property: passed through untouched, the last value given winning.
Status SetLibrdkafkaProperty(DaemonConfig& config, std::string_view key, std::string_view value) {
  for (auto& [k, v] : config.kafka) {
    if (k == key) {
      v = value;
      return Status::OK();
    }
  }
  config.kafka.emplace_back(key, value);
  return Status::OK();
}

Status PassToLibrdkafka(const DaemonSetting& setting, std::string_view value,
                        DaemonConfig& config) {
  return SetLibrdkafkaProperty(config, setting.key, value);
}

// What most rows do: parses the value with `kParse` and stores it in the field `kField`.
template <auto kField, auto kParse>
Status Store(const DaemonSetting& setting, std::string_view value, DaemonConfig& config) {
  auto parsed = kParse(setting, value);
  if (!parsed.ok()) return parsed.status();
  config.*kField = parsed.MoveValue();
  return Status::OK();
}

// The table. A setting's row holds everything about it; docs/brokerd.md, "Configuration", says
// more, and a test holds that page's table to this one.
constexpr DaemonSetting kDaemonSettings[] = {
    {.key = "bootstrap.servers",
     .flag = "--bootstrap-servers",
     .type = "librdkafka property",
     .unset = "required",
     .doc = "librdkafka's: the brokers to start from",
     .apply = PassToLibrdkafka},
    {.key = "sluice.socket",
     .flag = "--socket",
     .type = "path",
     .unset = "required",
     .bounds = "1 to 107 bytes",
     .doc = "the control socket's path",
     .apply = [](const DaemonSetting& s, std::string_view value, DaemonConfig& config) -> Status {
       // sun_path holds the path and its terminating NUL.
       if (value.empty() || value.size() >= sizeof(sockaddr_un{}.sun_path)) {
         return Bad(s.key, value, "must be a path of 1 to 107 bytes");
       }
       config.socket_path = value;
       return Status::OK();
     }},
    {.key = "sluice.metrics.listen",
     .flag = "--metrics",
     .type = "HOST:PORT or off",
     .default_value = "127.0.0.1:9464",
     .bounds = "HOST an IP literal; PORT 0 picks a free one",
     .doc = "where Prometheus text metrics are served, at /metrics",
     .apply = [](const DaemonSetting& s, std::string_view value, DaemonConfig& config) -> Status {
       if (value == "off") {
         config.metrics.enabled = false;
         return Status::OK();
       }
       Result<ListenAddress> address = Address(s.key, value);
       if (!address.ok()) return address.status();
       config.metrics = *address;
       return Status::OK();
     }},
    {.key = "sluice.segment.dir",
     .type = "path",
     .default_value = "/dev/shm",
     .bounds = "absolute",
     .doc = "where segments and their doorbells are created",
     .apply = [](const DaemonSetting& s, std::string_view value, DaemonConfig& config) -> Status {
       if (!value.starts_with("/")) return Bad(s.key, value, "must be an absolute path");
       config.segment_dir = value;
       return Status::OK();
     }},
    {.key = "sluice.segment.max.total.bytes",
     .type = "bytes",
     .default_value = "1073741824",
     .bounds = "positive",
     .doc = "the slot bytes of all segments together",
     .apply = Store<&DaemonConfig::segment_max_total_bytes, Positive<uint64_t>>},
    {.key = "sluice.allowed.uids",
     .type = "uids, comma-separated",
     .unset = "the daemon's own uid",
     .doc = "peers that may connect and read every topic",
     .apply = Store<&DaemonConfig::allowed_uids, NumberList<uid_t>>},
    {.key = "sluice.allowed.gids",
     .type = "gids, comma-separated",
     .unset = "none",
     .doc = "groups whose members may connect and read every topic",
     .apply = Store<&DaemonConfig::allowed_gids, NumberList<gid_t>>},
    {.key = "sluice.allowed.topics",
     .type = "topic rules",
     .unset = "none",
     .bounds = "uid=N:PATTERN[,PATTERN]... or gid=N:..., separated by ;",
     .doc = "rules granting a uid or gid some topics to read",
     .apply = [](const DaemonSetting& s, std::string_view value, DaemonConfig& config) -> Status {
       Result<std::vector<TopicGrant>> rules = TopicAcl::ParseRules(s.key, value);
       if (!rules.ok()) return rules.status();
       config.topic_acl = TopicAcl(rules.MoveValue());
       return Status::OK();
     }},
    {.key = "sluice.produce.topics",
     .type = "topic rules",
     .unset = "the daemon's own uid, every topic, while none of the three settings above is set",
     .bounds = "as sluice.allowed.topics",
     .doc = "rules granting a uid or gid some topics to produce to",
     .apply = [](const DaemonSetting& s, std::string_view value, DaemonConfig& config) -> Status {
       Result<std::vector<TopicGrant>> rules = TopicAcl::ParseRules(s.key, value);
       if (!rules.ok()) return rules.status();
       config.produce_grants = rules.MoveValue();
       return Status::OK();
     }},
    {.key = "sluice.access.group",
     .type = "group name or gid",
     .unset = "none",
     .bounds = "a group the daemon is a member of, unless it is root",
     .doc = "the group whose members may open the socket and the segments too",
     .apply = [](const DaemonSetting& s, std::string_view value, DaemonConfig& config) -> Status {
       Result<gid_t> gid = Group(s.key, value);
       if (!gid.ok()) return gid.status();
       SLUICE_RETURN_NOT_OK(CheckAccessGroup(s.key, value, *gid));
       config.access_group = *gid;
       return Status::OK();
     }},
    // The segment refuses liveness timeouts below 10 ms: heartbeats could not keep up.
    {.key = "sluice.liveness.timeout.ms",
     .type = "milliseconds",
     .default_value = "5000",
     .minimum = 10,
     .doc = "a reader silent this long is dead",
     .apply = Store<&DaemonConfig::liveness_timeout, Millis>},
    {.key = "sluice.reorder.window.bytes",
     .type = "bytes",
     .default_value = "67108864",
     .bounds = "positive",
     .doc = "CHUNK_STREAMS: bytes held across all streams while waiting for a missing seq",
     .apply = Store<&DaemonConfig::reorder_window_bytes, Positive<uint64_t>>},
    {.key = "sluice.producers.max",
     .type = "count",
     .default_value = "256",
     .bounds = "positive",
     .doc = "local producers of all peers together",
     .apply = Store<&DaemonConfig::producers_max, Positive<size_t>>},
    {.key = "sluice.producers.max.per.uid",
     .type = "count",
     .default_value = "128",
     .bounds = "positive",
     .doc = "local producers of one peer uid, over all its connections",
     .apply = Store<&DaemonConfig::producers_max_per_uid, Positive<size_t>>},
    {.key = "sluice.pause.after.ms",
     .type = "milliseconds",
     .default_value = "100",
     .minimum = 0,
     .doc = "how long the readers may hold every slot before their partitions are paused",
     .apply = Store<&DaemonConfig::pause_after, Millis>},
    {.key = "sluice.gap.timeout.ms",
     .type = "milliseconds",
     .default_value = "30000",
     .minimum = 1,
     .doc = "CHUNK_STREAMS: a missing seq is reported after this long",
     .apply = Store<&DaemonConfig::gap_timeout, Millis>},
    {.key = "sluice.dead.letter.topic",
     .type = "topic",
     .unset = "none",
     .bounds = "not empty",
     .doc = "where malformed chunk records go; without it they are counted and logged",
     .apply = [](const DaemonSetting& s, std::string_view value, DaemonConfig& config) -> Status {
       if (value.empty()) return Bad(s.key, value, "must not be empty");
       config.dead_letter_topic = std::string(value);
       return Status::OK();
     }},
    {.key = "sluice.broker.id",
     .type = "int32",
     .unset = "none",
     .doc = "the colocated broker's id, for the partitions whose leader is on this host and, "
            "with client.rack, the in-sync replicas read there at once",
     .apply = [](const DaemonSetting& s, std::string_view value, DaemonConfig& config) -> Status {
       Result<int32_t> id = ParseNumber<int32_t>(s.key, value);
       if (!id.ok()) return id.status();
       config.broker_id = *id;
       return Status::OK();
     }},
    {.key = "client.rack",
     .type = "librdkafka property",
     .unset = "none",
     .doc = "librdkafka's: the daemon's rack, which its native Fetch requests name",
     .apply = PassToLibrdkafka},
    {.key = "sluice.fetch",
     .type = "native or librdkafka",
     .default_value = "native",
     .doc = "how RECORDS subscriptions fetch",
     .apply = [](const DaemonSetting& s, std::string_view value, DaemonConfig& config) -> Status {
       if (value != "native" && value != "librdkafka") {
         return Bad(s.key, value, "native or librdkafka");
       }
       config.native_fetch = value == "native";
       return Status::OK();
     }},
};

const DaemonSetting* FindSetting(std::string_view key) {
  const auto found = std::ranges::find(kDaemonSettings, key, &DaemonSetting::key);
  return found == std::end(kDaemonSettings) ? nullptr : found;
}

// The setting a flag sets, if any.
const DaemonSetting* FindFlag(std::string_view flag) {
  if (flag.empty()) return nullptr;
  const auto found = std::ranges::find(kDaemonSettings, flag, &DaemonSetting::flag);
  return found == std::end(kDaemonSettings) ? nullptr : found;
}

// A configuration being parsed, and the keys given so far, whichever way.
struct Parsing {
  DaemonConfig config;
  std::vector<std::string> given;
};

// Applies one setting; returns an error naming the key when the value or the key is wrong. Keys
// outside the table pass to librdkafka unless they claim to be the daemon's.
Status Apply(Parsing& parsing, std::string_view key, std::string_view value) {
  parsing.given.emplace_back(key);
  DaemonConfig& config = parsing.config;
  if (const DaemonSetting* setting = FindSetting(key)) {
    return setting->apply(*setting, value, config);
  }
  if (key.starts_with("sluice.")) return Bad(key, value, "unknown sluice setting");
  return SetLibrdkafkaProperty(config, key, value);
}

std::string_view Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

Status ApplyLine(Parsing& parsing, std::string_view line) {
  const size_t equals = line.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    return Status::InvalidArgument("expected key=value, got \"" + std::string(line) + "\"");
  }
  return Apply(parsing, Trim(line.substr(0, equals)), Trim(line.substr(equals + 1)));
}

Status ApplyFile(Parsing& parsing, const std::string& path, std::string_view text) {
  size_t number = 0;
  while (!text.empty()) {
    ++number;
    const size_t newline = text.find('\n');
    const std::string_view line = Trim(text.substr(0, newline));
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    if (line.empty() || line.front() == '#') continue;
    Status status = ApplyLine(parsing, line);
    if (!status.ok()) {
      return Status::InvalidArgument(path + ":" + std::to_string(number) + ": " + status.message());
    }
  }
  return Status::OK();
}

// The one model of docs/brokerd.md, "Security model": sluice.allowed.uids / gids grant every
// topic, sluice.allowed.topics' rules some, the daemon's own uid every one when none is set;
// sluice.produce.topics grants producing, unset the daemon's own uid every topic when no read
// setting is set either; and the socket lets in whoever a grant of either names.
Status Authorize(DaemonConfig& config) {
  std::vector<TopicGrant> grants = config.topic_acl.grants();
  for (const TopicGrant& rule : grants) {
    const bool uid = rule.who == TopicGrant::Who::kUid;
    const bool everything =
        uid ? std::ranges::find(config.allowed_uids, rule.id) != config.allowed_uids.end()
            : std::ranges::find(config.allowed_gids, rule.id) != config.allowed_gids.end();
    if (everything) {
      const std::string who = std::string(uid ? "uid" : "gid") + "=" + std::to_string(rule.id);
      const std::string list = uid ? "sluice.allowed.uids" : "sluice.allowed.gids";
      return Status::InvalidArgument("sluice.allowed.topics: rule \"" + who + ":" +
                                     rule.pattern.ToString() + "\": " + who + " is in " + list +
                                     ", which lets it read every topic; take it out of " + list +
                                     " to limit it to its rules");
    }
  }
  const TopicPattern every_topic{"", true};
  for (const uid_t uid : config.allowed_uids) {
    grants.push_back({TopicGrant::Who::kUid, uid, every_topic});
  }
  for (const gid_t gid : config.allowed_gids) {
    grants.push_back({TopicGrant::Who::kGid, gid, every_topic});
  }
  const TopicGrant own_uid{TopicGrant::Who::kUid, ::geteuid(), every_topic};
  // Unset, producing is what it was in a configuration without grants, where the daemon's own uid
  // may do everything: the daemon's uid produces to every topic; a configuration that grants
  // reads grants no writes with them.
  std::vector<TopicGrant> produce_grants = config.produce_grants.value_or(
      grants.empty() ? std::vector{own_uid} : std::vector<TopicGrant>{});
  if (grants.empty()) grants.push_back(own_uid);
  std::vector<TopicGrant> everyone = grants;
  everyone.insert(everyone.end(), produce_grants.begin(), produce_grants.end());
  for (const TopicGrant& grant : everyone) {
    if (grant.who == TopicGrant::Who::kUid) {
      if (std::ranges::find(config.allowed_uids, grant.id) == config.allowed_uids.end()) {
        config.allowed_uids.push_back(grant.id);
      }
    } else if (std::ranges::find(config.allowed_gids, grant.id) == config.allowed_gids.end()) {
      config.allowed_gids.push_back(grant.id);
    }
  }
  config.topic_acl = TopicAcl(std::move(grants));
  config.produce_acl = TopicAcl(std::move(produce_grants), TopicAcl::Access::kProduce);
  return Status::OK();
}

}  // namespace

DaemonConfig::DaemonConfig() {
  for (const DaemonSetting& setting : kDaemonSettings) {
    if (setting.default_value.empty()) continue;
    const Status applied = setting.apply(setting, setting.default_value, *this);
    // A default its own setting refuses is a mistake in the table, which the tests catch
    // (DaemonSettingsTest.EveryDefaultIsAValueItsSettingAccepts); never a user's input.
    if (!applied.ok()) std::abort();
  }
}

std::span<const DaemonSetting> DaemonSettings() { return kDaemonSettings; }

std::string FormatDaemonSettings() {
  std::string text = "key\tflag\ttype\tdefault\tbounds\tdoc\n";
  for (const DaemonSetting& s : kDaemonSettings) {
    const std::string bounds =
        s.minimum ? "at least " + std::to_string(*s.minimum) : std::string(s.bounds);
    const std::string_view default_text = s.default_value.empty() ? s.unset : s.default_value;
    for (const std::string_view column :
         {s.key, s.flag, s.type, default_text, std::string_view(bounds), s.doc}) {
      text += column;
      text += column == s.doc ? '\n' : '\t';
    }
  }
  return text;
}

Result<DaemonConfig> ParseDaemonConfig(
    std::span<const std::string_view> args,
    const std::function<Result<std::string>(const std::string&)>& read_file) {
  // The file is applied first wherever --config appears, so every flag overrides it.
  std::vector<std::pair<std::string, std::string>> flags;
  std::optional<std::string> file;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view flag = args[i];
    if (i + 1 >= args.size()) return Status::InvalidArgument(std::string(flag) + ": no value");
    const std::string_view value = args[++i];
    if (flag == "--config") {
      file = std::string(value);
    } else if (const DaemonSetting* setting = FindFlag(flag)) {
      flags.emplace_back(setting->key, value);
    } else if (flag == "-X") {
      const size_t equals = value.find('=');
      if (equals == std::string_view::npos || equals == 0) {
        return Status::InvalidArgument("-X: expected key=value, got \"" + std::string(value) +
                                       "\"");
      }
      flags.emplace_back(value.substr(0, equals), value.substr(equals + 1));
    } else {
      return Status::InvalidArgument("unknown flag " + std::string(flag));
    }
  }

  Parsing parsing;
  if (file) {
    Result<std::string> text = read_file(*file);
    if (!text.ok()) return text.status();
    SLUICE_RETURN_NOT_OK(ApplyFile(parsing, *file, *text));
  }
  for (const auto& [key, value] : flags) {
    SLUICE_RETURN_NOT_OK(Apply(parsing, key, value));
  }
  for (const DaemonSetting& setting : kDaemonSettings) {
    if (setting.required() &&
        std::ranges::find(parsing.given, setting.key) == parsing.given.end()) {
      return Status::InvalidArgument(std::string(setting.key) + ": missing (" +
                                     std::string(setting.flag) + ")");
    }
  }
  SLUICE_RETURN_NOT_OK(Authorize(parsing.config));
  return std::move(parsing.config);
}

}  // namespace sluice::brokerd
