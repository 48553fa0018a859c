#include "ordering/chunk_headers.h"

#include <limits>
#include <optional>

#include "protocol/wire.h"
#include "sluice/limits.h"

namespace sluice::brokerd {
namespace {

// Quotes at most 64 bytes of a header value: enough to recognise it in a log, bounded in size.
std::string Quote(std::string_view value) {
  constexpr size_t kMax = 64;
  std::string quoted = "\"";
  quoted.append(value.substr(0, kMax));
  if (value.size() > kMax) quoted.append("...");
  quoted.append("\"");
  return quoted;
}

Status Malformed(std::string_view header, std::string_view problem) {
  return Status::InvalidArgument(std::string(header) + ": " + std::string(problem));
}

}  // namespace

Result<uint64_t> ParseSeq(std::string_view text) {
  if (text.empty()) return Malformed(kSeqHeader, "empty");
  if (text.size() > 1 && text.front() == '0') {
    return Malformed(kSeqHeader, Quote(text) + " has a leading zero");
  }
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return Malformed(kSeqHeader, Quote(text) + " is not a decimal number");
    }
    const auto digit = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      return Malformed(kSeqHeader, Quote(text) + " is beyond 18446744073709551615");
    }
    value = value * 10 + digit;
  }
  return value;
}

Result<ChunkId> ParseChunkHeaders(std::span<const KafkaHeader> headers) {
  std::optional<std::string_view> job, stream, seq, eos;
  for (const KafkaHeader& header : headers) {
    std::optional<std::string_view>* slot = nullptr;
    if (header.key == kJobHeader) {
      slot = &job;
    } else if (header.key == kStreamHeader) {
      slot = &stream;
    } else if (header.key == kSeqHeader) {
      slot = &seq;
    } else if (header.key == kEosHeader) {
      slot = &eos;
    } else {
      continue;  // Other headers belong to the application.
    }
    if (slot->has_value()) return Malformed(header.key, "repeated");
    if (!header.has_value) return Malformed(header.key, "null value");
    *slot = header.value;
  }
  if (!job) return Malformed(kJobHeader, "missing");
  if (!stream) return Malformed(kStreamHeader, "missing");
  if (!seq) return Malformed(kSeqHeader, "missing");
  if (eos && *eos != "true") return Malformed(kEosHeader, Quote(*eos) + " is not \"true\"");
  // A job id and a stream name travel on into readers' file names, logs and metric labels: one
  // outside the names' alphabet is as malformed as a bad seq (docs/formats.md, "Chunk record").
  SLUICE_RETURN_NOT_OK(protocol::CheckName(kJobHeader, *job, 1, limits::kMaxNameLength));
  SLUICE_RETURN_NOT_OK(protocol::CheckName(kStreamHeader, *stream, 1, limits::kMaxNameLength));
  Result<uint64_t> parsed = ParseSeq(*seq);
  if (!parsed.ok()) return parsed.status();
  return ChunkId{std::string(*job), std::string(*stream), *parsed, eos.has_value()};
}

}  // namespace sluice::brokerd
