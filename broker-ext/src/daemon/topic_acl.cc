#include "daemon/topic_acl.h"

#include <algorithm>
#include <charconv>

#include "sluice/limits.h"

namespace sluice::brokerd {
namespace {

// Kafka's own limits on a topic name (org.apache.kafka.common.internals.Topic), which are the
// names' (sluice/limits.h): ASCII letters, digits, '.', '_' and '-', at most 249 of them, and
// neither "." nor "..". A pattern that no topic could match is a mistake in the configuration,
// not a rule.

std::string_view Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// Splits at `separator`; empty parts are kept, so that the caller can refuse them.
std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t at = text.find(separator);
    parts.push_back(Trim(text.substr(0, at)));
    if (at == std::string_view::npos) return parts;
    text = text.substr(at + 1);
  }
}

Result<TopicPattern> ParsePattern(std::string_view text) {
  TopicPattern pattern;
  pattern.prefix = text.ends_with('*');
  if (pattern.prefix) text.remove_suffix(1);
  pattern.name = std::string(text);
  if (text.empty() && !pattern.prefix) return Status::InvalidArgument("an empty topic pattern");
  if (text.size() > limits::kMaxTopicLength) {
    return Status::InvalidArgument("topic pattern \"" + pattern.ToString() + "\" is longer than " +
                                   std::to_string(limits::kMaxTopicLength) +
                                   " characters, which no topic is");
  }
  if (!std::ranges::all_of(text, limits::IsNameCharacter)) {
    return Status::InvalidArgument(
        "topic pattern \"" + pattern.ToString() +
        "\": a topic name has only letters, digits, '.', '_' and '-', and '*' goes only at the "
        "end (a prefix)");
  }
  if (!pattern.prefix && (text == "." || text == "..")) {
    return Status::InvalidArgument("topic pattern \"" + pattern.ToString() +
                                   "\": not a topic name Kafka allows");
  }
  return pattern;
}

Result<TopicGrant::Who> ParseWho(std::string_view kind) {
  if (kind == "uid") return TopicGrant::Who::kUid;
  if (kind == "gid") return TopicGrant::Who::kGid;
  return Status::InvalidArgument("expected uid=N or gid=N before ':'");
}

Result<std::vector<TopicGrant>> ParseRule(std::string_view rule) {
  const size_t colon = rule.find(':');
  if (colon == std::string_view::npos) {
    return Status::InvalidArgument("expected uid=N:TOPICS or gid=N:TOPICS");
  }
  const std::string_view who = Trim(rule.substr(0, colon));
  const size_t equals = who.find('=');
  if (equals == std::string_view::npos) {
    return Status::InvalidArgument("expected uid=N or gid=N before ':'");
  }
  SLUICE_ASSIGN_OR_RETURN(const TopicGrant::Who kind, ParseWho(Trim(who.substr(0, equals))));
  const std::string_view number = Trim(who.substr(equals + 1));
  uint32_t id = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), id);
  if (number.empty() || error != std::errc{} || end != number.data() + number.size()) {
    return Status::InvalidArgument("\"" + std::string(number) + "\" is not a uid or gid number");
  }
  const std::string_view topics = Trim(rule.substr(colon + 1));
  if (topics.empty()) return Status::InvalidArgument("no topic pattern after ':'");
  std::vector<TopicGrant> grants;
  for (const std::string_view text : Split(topics, ',')) {
    SLUICE_ASSIGN_OR_RETURN(TopicPattern pattern, ParsePattern(text));
    grants.push_back({kind, id, std::move(pattern)});
  }
  return grants;
}

std::string Principal(TopicGrant::Who who, uint32_t id) {
  return (who == TopicGrant::Who::kUid ? "uid " : "gid ") + std::to_string(id);
}

}  // namespace

Result<std::vector<TopicGrant>> TopicAcl::ParseRules(std::string_view key, std::string_view text) {
  std::vector<TopicGrant> grants;
  for (const std::string_view rule : Split(text, ';')) {
    Result<std::vector<TopicGrant>> parsed =
        rule.empty() ? Status::InvalidArgument("an empty rule (two ';' in a row, or one at an end)")
                     : ParseRule(rule);
    if (!parsed.ok()) {
      return Status::InvalidArgument(std::string(key) + ": rule \"" + std::string(rule) +
                                     "\": " + parsed.status().message());
    }
    grants.insert(grants.end(), parsed->begin(), parsed->end());
  }
  return grants;
}

bool TopicAcl::Names(uid_t uid, gid_t gid) const {
  return std::ranges::any_of(grants_, [&](const TopicGrant& grant) {
    return grant.id == (grant.who == TopicGrant::Who::kUid ? uid : gid);
  });
}

std::optional<std::string> TopicAcl::Refusal(uid_t uid, gid_t gid, std::string_view topic) const {
  const bool granted = std::ranges::any_of(grants_, [&](const TopicGrant& grant) {
    return grant.id == (grant.who == TopicGrant::Who::kUid ? uid : gid) &&
           grant.pattern.Matches(topic);
  });
  if (granted) return std::nullopt;
  const bool read = access_ == Access::kRead;
  return "topic " + std::string(topic) + ": " + Principal(TopicGrant::Who::kUid, uid) + " (" +
         Principal(TopicGrant::Who::kGid, gid) + ") may not " +
         (read ? "read it" : "produce to it") + " through this daemon (" +
         (read ? "sluice.allowed.topics" : "sluice.produce.topics") + ")";
}

}  // namespace sluice::brokerd
