#include "sluice/mapping.h"

#include <sys/mman.h>

#include <cerrno>
#include <utility>

namespace sluice {

std::string SegmentPath(std::string_view name) {
  if (!name.empty() && name.front() == '/') return std::string(name);
  return "/dev/shm/" + std::string(name);
}

Result<Mapping> Mapping::Map(int fd, uint64_t size) {
  void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) return Status::FromErrno("mmap", errno);
  return Mapping(static_cast<uint8_t*>(data), size);
}

Mapping::Mapping(Mapping&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

Mapping& Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Mapping::~Mapping() {
  if (data_ != nullptr) munmap(data_, size_);
}

}  // namespace sluice
