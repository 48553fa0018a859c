#include "daemon/daemon_config.h"

#include <arpa/inet.h>
#include <grp.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>

namespace sluice::brokerd {
namespace {

Status Bad(std::string_view key, std::string_view value, std::string_view expectation) {
  return Status::InvalidArgument(std::string(key) + " = \"" + std::string(value) +
                                 "\": " + std::string(expectation));
}

template <typename T>
Result<std::vector<T>> NumberList(std::string_view key, std::string_view text) {
  std::vector<T> values;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    Result<T> value = ParseNumber<T>(key, text.substr(0, comma));
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

Result<std::chrono::milliseconds> Millis(std::string_view key, std::string_view text,
                                         int64_t minimum) {
  Result<int64_t> ms = ParseNumber<int64_t>(key, text);
  if (!ms.ok()) return ms.status();
  if (*ms < minimum) return Bad(key, text, "must be at least " + std::to_string(minimum));
  return std::chrono::milliseconds(*ms);
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

// Applies one setting; returns an error naming the key when the value or the key is wrong.
Status Apply(DaemonConfig& config, std::string_view key, std::string_view value) {
  if (!key.starts_with("sluice.")) {
    for (auto& [k, v] : config.kafka) {
      if (k == key) {
        v = value;
        return Status::OK();
      }
    }
    config.kafka.emplace_back(key, value);
    return Status::OK();
  }
  if (key == "sluice.socket") {
    // sun_path holds the path and its terminating NUL.
    if (value.empty() || value.size() >= sizeof(sockaddr_un{}.sun_path)) {
      return Bad(key, value, "must be a path of 1 to 107 bytes");
    }
    config.socket_path = value;
  } else if (key == "sluice.metrics.listen") {
    if (value == "off") {
      config.metrics.enabled = false;
      return Status::OK();
    }
    Result<ListenAddress> address = Address(key, value);
    if (!address.ok()) return address.status();
    config.metrics = *address;
  } else if (key == "sluice.segment.dir") {
    if (!value.starts_with("/")) return Bad(key, value, "must be an absolute path");
    config.segment_dir = value;
  } else if (key == "sluice.segment.max.total.bytes") {
    Result<uint64_t> bytes = ParseNumber<uint64_t>(key, value);
    if (!bytes.ok()) return bytes.status();
    if (*bytes == 0) return Bad(key, value, "must be positive");
    config.segment_max_total_bytes = *bytes;
  } else if (key == "sluice.allowed.uids") {
    Result<std::vector<uid_t>> uids = NumberList<uid_t>(key, value);
    if (!uids.ok()) return uids.status();
    config.allowed_uids = *uids;
  } else if (key == "sluice.allowed.gids") {
    Result<std::vector<gid_t>> gids = NumberList<gid_t>(key, value);
    if (!gids.ok()) return gids.status();
    config.allowed_gids = *gids;
  } else if (key == "sluice.allowed.topics") {
    Result<std::vector<TopicGrant>> rules = TopicAcl::ParseRules(key, value);
    if (!rules.ok()) return rules.status();
    config.topic_acl = TopicAcl(rules.MoveValue());
  } else if (key == "sluice.produce.topics") {
    Result<std::vector<TopicGrant>> rules = TopicAcl::ParseRules(key, value);
    if (!rules.ok()) return rules.status();
    config.produce_grants = rules.MoveValue();
  } else if (key == "sluice.access.group") {
    Result<gid_t> gid = Group(key, value);
    if (!gid.ok()) return gid.status();
    SLUICE_RETURN_NOT_OK(CheckAccessGroup(key, value, *gid));
    config.access_group = *gid;
  } else if (key == "sluice.liveness.timeout.ms") {
    // The segment refuses liveness timeouts below 10 ms: heartbeats could not keep up.
    Result<std::chrono::milliseconds> ms = Millis(key, value, 10);
    if (!ms.ok()) return ms.status();
    config.liveness_timeout = *ms;
  } else if (key == "sluice.reorder.window.bytes") {
    Result<uint64_t> bytes = ParseNumber<uint64_t>(key, value);
    if (!bytes.ok()) return bytes.status();
    if (*bytes == 0) return Bad(key, value, "must be positive");
    config.reorder_window_bytes = *bytes;
  } else if (key == "sluice.producers.max" || key == "sluice.producers.max.per.uid") {
    Result<size_t> count = ParseNumber<size_t>(key, value);
    if (!count.ok()) return count.status();
    if (*count == 0) return Bad(key, value, "must be positive");
    size_t& limit =
        key == "sluice.producers.max" ? config.producers_max : config.producers_max_per_uid;
    limit = *count;
  } else if (key == "sluice.pause.after.ms") {
    Result<std::chrono::milliseconds> ms = Millis(key, value, 0);
    if (!ms.ok()) return ms.status();
    config.pause_after = *ms;
  } else if (key == "sluice.gap.timeout.ms") {
    Result<std::chrono::milliseconds> ms = Millis(key, value, 1);
    if (!ms.ok()) return ms.status();
    config.gap_timeout = *ms;
  } else if (key == "sluice.dead.letter.topic") {
    if (value.empty()) return Bad(key, value, "must not be empty");
    config.dead_letter_topic = std::string(value);
  } else if (key == "sluice.fetch") {
    if (value != "native" && value != "librdkafka") return Bad(key, value, "native or librdkafka");
    config.native_fetch = value == "native";
  } else if (key == "sluice.broker.id") {
    Result<int32_t> id = ParseNumber<int32_t>(key, value);
    if (!id.ok()) return id.status();
    config.broker_id = *id;
  } else {
    return Bad(key, value, "unknown sluice setting");
  }
  return Status::OK();
}

std::string_view Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

Status ApplyLine(DaemonConfig& config, std::string_view line) {
  const size_t equals = line.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    return Status::InvalidArgument("expected key=value, got \"" + std::string(line) + "\"");
  }
  return Apply(config, Trim(line.substr(0, equals)), Trim(line.substr(equals + 1)));
}

Status ApplyFile(DaemonConfig& config, const std::string& path, std::string_view text) {
  size_t number = 0;
  while (!text.empty()) {
    ++number;
    const size_t newline = text.find('\n');
    const std::string_view line = Trim(text.substr(0, newline));
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    if (line.empty() || line.front() == '#') continue;
    Status status = ApplyLine(config, line);
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
    } else if (flag == "--bootstrap-servers") {
      flags.emplace_back("bootstrap.servers", value);
    } else if (flag == "--socket") {
      flags.emplace_back("sluice.socket", value);
    } else if (flag == "--metrics") {
      flags.emplace_back("sluice.metrics.listen", value);
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

  DaemonConfig config;
  if (file) {
    Result<std::string> text = read_file(*file);
    if (!text.ok()) return text.status();
    Status status = ApplyFile(config, *file, *text);
    if (!status.ok()) return status;
  }
  for (const auto& [key, value] : flags) {
    Status status = Apply(config, key, value);
    if (!status.ok()) return status;
  }

  const bool has_bootstrap =
      std::any_of(config.kafka.begin(), config.kafka.end(),
                  [](const auto& kv) { return kv.first == "bootstrap.servers"; });
  if (!has_bootstrap) {
    return Status::InvalidArgument("bootstrap.servers: missing (--bootstrap-servers)");
  }
  if (config.socket_path.empty()) {
    return Status::InvalidArgument("sluice.socket: missing (--socket)");
  }
  SLUICE_RETURN_NOT_OK(Authorize(config));
  return config;
}

}  // namespace sluice::brokerd
