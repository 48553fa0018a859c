#include "daemon/metrics.h"

#include "daemon/log.h"

namespace sluice::brokerd {
namespace {

bool ValidName(std::string_view name, bool colons) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colons && c == ':');
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Label values escape backslash, double quote and newline; HELP text escapes backslash and
// newline (the exposition format's two rules).
std::string Escape(std::string_view text, bool quotes) {
  std::string escaped;
  for (char c : text) {
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '\n') {
      escaped += "\\n";
    } else if (quotes && c == '"') {
      escaped += "\\\"";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

bool ValidLabelName(std::string_view name) {
  return ValidName(name, false) && !name.starts_with("__");
}

std::string RenderLabels(const Labels& labels) {
  if (labels.empty()) return {};
  std::string text = "{";
  for (const auto& [name, value] : labels) {
    if (text.size() > 1) text += ',';
    text += name + "=\"" + Escape(value, true) + "\"";
  }
  return text + "}";
}

}  // namespace

std::string Metrics::Refusal(std::string_view name, Type type, const Labels& labels) const {
  if (!ValidName(name, true)) return "invalid metric name";
  for (const auto& label : labels) {
    if (!ValidLabelName(label.first)) return "invalid label name " + label.first;
  }
  const auto found = families_.find(name);
  if (found != families_.end() && found->second.type != type) {
    return "registered as the other type";
  }
  return {};
}

Metrics::Family& Metrics::FamilyOf(std::string_view name, std::string_view help, Type type) {
  auto found = families_.find(name);
  if (found == families_.end()) {
    found = families_.emplace(std::string(name), Family{type, std::string(help), {}, {}}).first;
  }
  return found->second;
}

void Metrics::Refuse(std::string_view name, const std::string& reason) {
  Log(LogLevel::kError, "metric_refused", {{"name", std::string(name)}, {"reason", reason}});
  auto& refused = FamilyOf(kRefusedName,
                           "metric registrations refused: an invalid name or label name, or a name "
                           "registered as the other type (a programming error, logged as "
                           "metric_refused)",
                           Type::kCounter)
                      .counters[""];
  if (!refused) refused = std::make_unique<Counter>();
  refused->Add();
}

Counter& Metrics::counter(std::string_view name, std::string_view help, const Labels& labels) {
  std::string key = RenderLabels(labels);
  std::lock_guard lock(mutex_);
  if (const std::string reason = Refusal(name, Type::kCounter, labels); !reason.empty()) {
    Refuse(name, reason);
    return refused_counter_;
  }
  auto& cell = FamilyOf(name, help, Type::kCounter).counters[std::move(key)];
  if (!cell) cell = std::make_unique<Counter>();
  return *cell;
}

Gauge& Metrics::gauge(std::string_view name, std::string_view help, const Labels& labels) {
  std::string key = RenderLabels(labels);
  std::lock_guard lock(mutex_);
  if (const std::string reason = Refusal(name, Type::kGauge, labels); !reason.empty()) {
    Refuse(name, reason);
    return refused_gauge_;
  }
  auto& cell = FamilyOf(name, help, Type::kGauge).gauges[std::move(key)];
  if (!cell) cell = std::make_unique<Gauge>();
  return *cell;
}

void Metrics::RemoveSeries(std::string_view name, std::string_view value) {
  // A label set is rendered once, as its cells' key: `name="value"` after `{` or `,`.
  const std::string pair = RenderLabels({{std::string(name), std::string(value)}}).substr(1);
  const std::string label = pair.substr(0, pair.size() - 1);
  auto has_label = [&label](const auto& cell) {
    const std::string& key = cell.first;
    for (size_t at = key.find(label); at != std::string::npos; at = key.find(label, at + 1)) {
      if ((key[at - 1] == '{' || key[at - 1] == ',') &&
          (key[at + label.size()] == ',' || key[at + label.size()] == '}')) {
        return true;
      }
    }
    return false;
  };
  std::lock_guard lock(mutex_);
  for (auto& [family_name, family] : families_) {
    std::erase_if(family.counters, has_label);
    std::erase_if(family.gauges, has_label);
  }
}

std::string Metrics::Render() const {
  std::lock_guard lock(mutex_);
  std::string text;
  for (const auto& [name, family] : families_) {
    const bool counter = family.type == Type::kCounter;
    text += "# HELP " + name + " " + Escape(family.help, false) + "\n";
    text += "# TYPE " + name + (counter ? " counter\n" : " gauge\n");
    for (const auto& [labels, cell] : family.counters) {
      text += name + labels + " " + std::to_string(cell->value()) + "\n";
    }
    for (const auto& [labels, cell] : family.gauges) {
      text += name + labels + " " + std::to_string(cell->value()) + "\n";
    }
  }
  return text;
}

}  // namespace sluice::brokerd
