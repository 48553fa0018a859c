#include "kafka/wire_primitives.h"

#include <limits>

namespace sluice::brokerd::kafka {

void AppendString(std::string& out, std::string_view text) {
  text = text.substr(0, std::numeric_limits<int16_t>::max());
  Append(out, static_cast<int16_t>(text.size()));
  out.append(text);
}

Status WireReader::Skip(std::string_view field, size_t size) {
  SLUICE_RETURN_NOT_OK(Need(field, size));
  rest_.remove_prefix(size);
  return Status::OK();
}

Status WireReader::String(std::string_view field, std::string_view& out) {
  int16_t length = 0;
  SLUICE_RETURN_NOT_OK(Read(field, length));
  if (length < 0) return Negative(field, length);
  return Take(field, static_cast<size_t>(length), out);
}

Status WireReader::Count(std::string_view field, size_t min_entry_size, bool nullable,
                         int32_t& out) {
  SLUICE_RETURN_NOT_OK(Read(field, out));
  if (nullable && out == -1) {
    out = 0;
    return Status::OK();
  }
  if (out < 0) return Negative(field, out);
  if (static_cast<size_t>(out) > rest_.size() / min_entry_size) {
    return Status::InvalidArgument(std::string(frame_name_) + ": " + std::string(field) +
                                   " count " + std::to_string(out) + " does not fit in the " +
                                   std::to_string(rest_.size()) + " bytes left");
  }
  return Status::OK();
}

Status WireReader::NullableBytes(std::string_view field, std::string_view& out) {
  int32_t length = 0;
  SLUICE_RETURN_NOT_OK(Read(field, length));
  if (length == -1) {
    out = {};
    return Status::OK();
  }
  if (length < 0) return Negative(field, length);
  return Take(field, static_cast<size_t>(length), out);
}

Status WireReader::Need(std::string_view field, size_t size) const {
  if (size <= rest_.size()) return Status::OK();
  return Status::InvalidArgument(std::string(frame_name_) + ": " + std::string(field) + " needs " +
                                 std::to_string(size) + " bytes, the frame has " +
                                 std::to_string(rest_.size()) + " left");
}

Status WireReader::Take(std::string_view field, size_t size, std::string_view& out) {
  SLUICE_RETURN_NOT_OK(Need(field, size));
  out = rest_.substr(0, size);
  rest_.remove_prefix(size);
  return Status::OK();
}

Status WireReader::Negative(std::string_view field, int64_t value) const {
  return Status::InvalidArgument(std::string(frame_name_) + ": " + std::string(field) + " length " +
                                 std::to_string(value) + " is negative");
}

}  // namespace sluice::brokerd::kafka
