#include "daemon/metrics.h"

#include <stdexcept>

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

std::string RenderLabels(const Labels& labels) {
  if (labels.empty()) return {};
  std::string text = "{";
  for (const auto& [name, value] : labels) {
    if (!ValidName(name, false) || name.starts_with("__")) {
      throw std::invalid_argument("invalid metric label name: " + name);
    }
    if (text.size() > 1) text += ',';
    text += name + "=\"" + Escape(value, true) + "\"";
  }
  return text + "}";
}

}  // namespace

Metrics::Family& Metrics::FamilyOf(std::string_view name, std::string_view help, Type type) {
  if (!ValidName(name, true))
    throw std::invalid_argument("invalid metric name: " + std::string(name));
  auto found = families_.find(name);
  if (found == families_.end()) {
    found = families_.emplace(std::string(name), Family{type, std::string(help), {}, {}}).first;
  } else if (found->second.type != type) {
    throw std::invalid_argument("metric " + std::string(name) + " registered with another type");
  }
  return found->second;
}

Counter& Metrics::counter(std::string_view name, std::string_view help, const Labels& labels) {
  std::string key = RenderLabels(labels);
  std::lock_guard lock(mutex_);
  auto& cell = FamilyOf(name, help, Type::kCounter).counters[std::move(key)];
  if (!cell) cell = std::make_unique<Counter>();
  return *cell;
}

Gauge& Metrics::gauge(std::string_view name, std::string_view help, const Labels& labels) {
  std::string key = RenderLabels(labels);
  std::lock_guard lock(mutex_);
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
