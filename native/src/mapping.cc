#include "sluice/mapping.h"

#include <signal.h>
#include <sys/mman.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <utility>

namespace sluice {
namespace {

// The guarded mappings (Mapping::MapGuarded), which the SIGBUS handler looks through: a fixed
// table of lock-free words, since a signal handler may take no lock. A slot is free while its
// `begin` is 0.
struct Guard {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uint64_t> size{0};
  std::atomic<bool> truncated{false};
};
constexpr size_t kMaxGuarded = 4096;
std::array<Guard, kMaxGuarded> guards;
struct sigaction previous {};

// A page of a MAP_SHARED mapping beyond the end of its file raises SIGBUS on access. When the
// page is a guarded mapping's, the whole mapping is replaced by private zero pages and marked
// truncated, and the access is retried: it reads zeros, as if the file's writer had written
// them, and its owner learns it from Mapping::truncated(). Any other SIGBUS is the program's
// own: the handler before this one is restored, and the access, retried, goes to it (the
// default action ends the process, as before).
// mmap is no async-signal-safe function by POSIX's list, but a system call that takes no lock
// of the process's; Wayland compositors guard their clients' shared memory the same way.
void OnSigbus(int, siginfo_t* info, void*) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Guard& guard : guards) {
    const uintptr_t begin = guard.begin.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address - begin >= guard.size.load()) continue;
    guard.truncated.store(true, std::memory_order_seq_cst);
    if (mmap(reinterpret_cast<void*>(begin), guard.size.load(), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
      return;
    }
    break;
  }
  sigaction(SIGBUS, &previous, nullptr);
}

Status InstallSigbusHandler() {
  static const Status installed = [] {
    struct sigaction action {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGBUS, &action, &previous) != 0) return Status::FromErrno("sigaction", errno);
    return Status::OK();
  }();
  return installed;
}

}  // namespace

std::string SegmentPath(std::string_view name) {
  if (!name.empty() && name.front() == '/') return std::string(name);
  return "/dev/shm/" + std::string(name);
}

Result<Mapping> Mapping::Map(int fd, uint64_t size) {
  void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) return Status::FromErrno("mmap", errno);
  return Mapping(static_cast<uint8_t*>(data), size);
}

Result<Mapping> Mapping::MapGuarded(int fd, uint64_t size) {
  SLUICE_RETURN_NOT_OK(InstallSigbusHandler());
  SLUICE_ASSIGN_OR_RETURN(Mapping mapping, Map(fd, size));
  static std::mutex taking;  // between threads that take slots; the handler takes none
  std::lock_guard lock(taking);
  for (size_t slot = 0; slot < kMaxGuarded; ++slot) {
    Guard& guard = guards[slot];
    if (guard.begin.load(std::memory_order_acquire) != 0) continue;
    guard.truncated.store(false);
    guard.size.store(size);
    guard.begin.store(reinterpret_cast<uintptr_t>(mapping.data_), std::memory_order_release);
    mapping.guard_ = static_cast<int>(slot);
    return mapping;
  }
  return Status::NoFreeLane("all " + std::to_string(kMaxGuarded) +
                            " guarded mappings of the process are taken");
}

bool Mapping::truncated() const {
  return guard_ >= 0 && guards[static_cast<size_t>(guard_)].truncated.load();
}

void Mapping::Unmap() {
  if (data_ == nullptr) return;
  munmap(data_, size_);
  // Once unmapped, so that the handler finds the mapping for as long as it may fault.
  if (guard_ >= 0) guards[static_cast<size_t>(guard_)].begin.store(0, std::memory_order_release);
  data_ = nullptr;
  size_ = 0;
  guard_ = -1;
}

Mapping::Mapping(Mapping&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      guard_(std::exchange(other.guard_, -1)) {}

Mapping& Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    Unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    guard_ = std::exchange(other.guard_, -1);
  }
  return *this;
}

Mapping::~Mapping() { Unmap(); }

}  // namespace sluice
