// A shared, writable mapping of a segment file, and where a segment name lives.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/export.h"
#include "sluice/status.h"

namespace sluice {

// "/dev/shm/NAME" for a plain name; a name that starts with '/' is already a path.
SLUICE_EXPORT std::string SegmentPath(std::string_view name);

class SLUICE_EXPORT Mapping {
 public:
  // Maps the first `size` bytes of `fd` shared and read-write.
  static Result<Mapping> Map(int fd, uint64_t size);
  Mapping() = default;
  Mapping(Mapping&& other) noexcept;
  Mapping& operator=(Mapping&& other) noexcept;
  ~Mapping();

  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  Mapping(uint8_t* data, uint64_t size) : data_(data), size_(size) {}
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace sluice
