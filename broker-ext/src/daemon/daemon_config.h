// sluice-brokerd's configuration: command-line flags over an optional `key=value` file.
//
// Keys starting with `sluice.` are the daemon's own; every other key is a librdkafka property
// and passes through untouched (security settings included), so librdkafka stays the one judge
// of its own configuration. The command line wins over the file.
#pragma once

#include <sys/types.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/topic_acl.h"
#include "sluice/status.h"

namespace sluice::brokerd {

struct ListenAddress {
  std::string host;   // an IP literal
  uint16_t port = 0;  // 0: any free port
  bool enabled = true;
};

// The parsed configuration. Its defaults are the settings table's (kDaemonSettings), applied by
// the constructor, so that a default is written once, beside the setting's parsing and doc.
struct DaemonConfig {
  DaemonConfig();

  std::string socket_path;  // sluice.socket / --socket
  ListenAddress metrics;    // sluice.metrics.listen / --metrics; `off`
  std::string segment_dir;  // sluice.segment.dir
  // Shared memory is RAM: the slot bytes of all segments together may not exceed this, so that
  // readers cannot take the host's memory (docs/brokerd.md, "Configuration").
  uint64_t segment_max_total_bytes{};  // sluice.segment.max.total.bytes
  // Peers allowed on the socket (SO_PEERCRED) and the topics they may read, one model
  // (docs/brokerd.md, "Security model"): a peer connects when a grant of `topic_acl` names its
  // uid or gid, and reads the topics those grants match. sluice.allowed.uids / gids grant every
  // topic (what they always meant), sluice.allowed.topics grants some; with none of the three,
  // the daemon's own uid reads every topic. Once parsed, `allowed_uids` and `allowed_gids` hold
  // every uid and gid a grant names, to read or to produce, which is what the socket lets in.
  std::vector<uid_t> allowed_uids;  // sluice.allowed.uids, comma-separated
  std::vector<gid_t> allowed_gids;  // sluice.allowed.gids
  TopicAcl topic_acl;               // sluice.allowed.topics, then the grants above
  // The topics a peer may produce to (PRODUCE), granted apart from reading: a read grant is no
  // write grant (docs/brokerd.md, "Security model"). Unset, the daemon's own uid may produce to
  // every topic as long as none of the three read settings is set either, which keeps the
  // configuration without grants what it was; once any is, nobody produces without a grant
  // here. Its uids and gids may connect too.
  std::optional<std::vector<TopicGrant>> produce_grants;  // sluice.produce.topics, while parsing
  TopicAcl produce_acl{{}, TopicAcl::Access::kProduce};   // what they grant, once parsed
  // The group whose members may open the socket and the segments too (docs/brokerd.md, "Security
  // model"): the socket 0660, the folders the daemon creates for it 0710, segments and doorbells
  // 0660, all that group's. None: the daemon's uid alone (0600, 0700). The daemon must be a
  // member of it, or root, which parsing checks.
  std::optional<gid_t> access_group;             // sluice.access.group: a name or a gid
  std::chrono::milliseconds liveness_timeout{};  // sluice.liveness.timeout.ms
  uint64_t reorder_window_bytes{};               // sluice.reorder.window.bytes
  // Local producers (docs/brokerd.md, "Local producers"): each holds a thread, a mapping and a
  // lane of the daemon's, so a peer's PRODUCEs are bounded as its SUBSCRIBEs are.
  size_t producers_max{};                   // sluice.producers.max: in all
  size_t producers_max_per_uid{};           // sluice.producers.max.per.uid: of one peer uid
  std::chrono::milliseconds gap_timeout{};  // sluice.gap.timeout.ms
  // How long every slot may stay held before the partitions are paused; until then librdkafka's
  // bounded prefetch queue absorbs the stall, since a resume costs a refetch.
  std::chrono::milliseconds pause_after{};       // sluice.pause.after.ms
  std::optional<std::string> dead_letter_topic;  // sluice.dead.letter.topic
  std::optional<int32_t> broker_id;              // sluice.broker.id: which partitions are local
  // RECORDS subscriptions fetch natively (docs/brokerd.md, "Native fetch path") unless this is
  // false or the connection is not plaintext; CHUNK_STREAMS ones always go through librdkafka.
  bool native_fetch{};  // sluice.fetch: native | librdkafka
  // librdkafka properties in the order given; bootstrap.servers is among them.
  std::vector<std::pair<std::string, std::string>> kafka;
};

// One setting the daemon knows: a row of the table that parsing, `--list-settings` and the test
// of docs/brokerd.md's "Configuration" table all read.
struct DaemonSetting {
  std::string_view key{};
  std::string_view flag{};  // the command-line flag that sets it too; empty: -X or the file only
  std::string_view type{};  // what a value is, in words
  // A value the setting accepts, which DaemonConfig starts from; empty: none, and `unset` says
  // what holds without one.
  std::string_view default_value{};
  std::string_view unset{};
  std::optional<int64_t> minimum{};  // a number's least value
  std::string_view bounds{};         // what else a value must be, in words
  std::string_view doc{};            // one line; docs/brokerd.md says the rest
  // Sets `config` from `value`, or returns an error naming the key and quoting the value.
  Status (*apply)(const DaemonSetting& setting, std::string_view value,
                  DaemonConfig& config) = nullptr;

  bool required() const { return unset == "required"; }
};

// Every setting, in docs/brokerd.md's order. Keys not in it that start with `sluice.` are
// refused; every other key is a librdkafka property and passes through, as the two librdkafka
// properties listed here (which the daemon needs or reads itself) do.
std::span<const DaemonSetting> DaemonSettings();

// The table as `sluice-brokerd --list-settings` prints it: a header line, then one line a
// setting, its columns separated by tabs.
std::string FormatDaemonSettings();

inline constexpr std::string_view kDaemonUsage =
    "usage: sluice-brokerd --bootstrap-servers HOST:PORT --socket PATH [--config FILE]\n"
    "                      [--metrics HOST:PORT] [-X key=value]...\n"
    "       sluice-brokerd --list-settings\n"
    "  -X sets a sluice.* setting or any librdkafka property; see docs/brokerd.md";

// A whole decimal number of type T; an error naming `key` and quoting `text` otherwise. Shared
// by the daemon's own settings and the librdkafka properties it reads itself.
template <typename T>
Result<T> ParseNumber(std::string_view key, std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
    return Status::InvalidArgument(std::string(key) + " = \"" + std::string(text) +
                                   "\": expected a number");
  }
  return value;
}

// Parses the arguments after the program name; `read_file` returns a file's text (the tests
// pass their own). Errors name the flag or key and the value.
Result<DaemonConfig> ParseDaemonConfig(
    std::span<const std::string_view> args,
    const std::function<Result<std::string>(const std::string&)>& read_file);

}  // namespace sluice::brokerd
