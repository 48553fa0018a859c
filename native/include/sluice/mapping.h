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
  // The same for a file another process may truncate, its writer that the mapper does not trust
  // (a daemon reading a producer's segment, docs/brokerd.md, "Local producers"): an access to a
  // page the truncation took would raise SIGBUS and kill the mapper. Here a SIGBUS handler,
  // installed once for the process, replaces the whole mapping with private zero pages, so that
  // every access, on any thread, reads zeros from then on, and truncated() says so. Fails when
  // the process holds 4096 such mappings already.
  static Result<Mapping> MapGuarded(int fd, uint64_t size);
  Mapping() = default;
  Mapping(Mapping&& other) noexcept;
  Mapping& operator=(Mapping&& other) noexcept;
  ~Mapping();

  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  // A guarded mapping's file was truncated under it: its bytes are zeros now, not the file's.
  bool truncated() const;

 private:
  Mapping(uint8_t* data, uint64_t size) : data_(data), size_(size) {}
  void Unmap();
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  int guard_ = -1;  // its slot among the guarded mappings, or -1
};

}  // namespace sluice
