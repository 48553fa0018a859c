// Which local peers may read, or produce to, which topics through the daemon (docs/brokerd.md,
// "Security model").
//
// The daemon reads Kafka with its own principal, so for PUSH readers these grants are the ACL:
// Kafka's own ACLs see the daemon, never the reader. A grant names a uid or a gid (the peer's
// SO_PEERCRED ones) and a topic pattern, as Kafka's ACL resource patterns do: a LITERAL name
// (`orders`), a PREFIXED one (`metrics.*`: every topic starting with `metrics.`) or `*`, every
// topic. A peer may connect when a grant names its uid or gid, and may subscribe to a topic when
// such a grant's pattern matches it. Reading and producing are granted apart, each by an acl of
// its own (sluice.allowed.topics, sluice.produce.topics): a peer that may read a topic may not
// write it for that. Pure: the caller says who the peer is.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/status.h"

namespace sluice::brokerd {

struct TopicPattern {
  std::string name;     // the literal name, or the prefix without its `*`
  bool prefix = false;  // PREFIXED: `name*`; `*` alone is the empty prefix, every topic

  bool Matches(std::string_view topic) const {
    return prefix ? topic.starts_with(name) : topic == name;
  }
  std::string ToString() const { return prefix ? name + "*" : name; }
};

struct TopicGrant {
  enum class Who { kUid, kGid };
  Who who = Who::kUid;
  uint32_t id = 0;  // a uid_t or gid_t
  TopicPattern pattern;
};

class TopicAcl {
 public:
  // What the grants let a peer do with their topics, which the refusals name.
  enum class Access { kRead, kProduce };

  explicit TopicAcl(std::vector<TopicGrant> grants = {}, Access access = Access::kRead)
      : grants_(std::move(grants)), access_(access) {}

  // Rules as `sluice.allowed.topics` holds them: `WHO:PATTERN[,PATTERN]...[;WHO:...]`, WHO
  // `uid=N` or `gid=N`, each PATTERN a topic name, a topic name's prefix followed by `*`, or `*`.
  // An error names `key` and the bad rule, and says what was expected.
  static Result<std::vector<TopicGrant>> ParseRules(std::string_view key, std::string_view text);

  // Whether any grant names this uid or gid: whether the peer may connect at all.
  bool Names(uid_t uid, gid_t gid) const;
  // Why a peer with this uid and gid may not read (or produce to) `topic`, naming both and the
  // setting that grants it; nothing when it may.
  std::optional<std::string> Refusal(uid_t uid, gid_t gid, std::string_view topic) const;

  const std::vector<TopicGrant>& grants() const { return grants_; }

 private:
  std::vector<TopicGrant> grants_;
  Access access_;
};

}  // namespace sluice::brokerd
