#include "daemon/allocator.h"

#include <mimalloc.h>

#include <cstdlib>

namespace sluice::brokerd {

std::string_view MallocInUse() {
  // calloc, not malloc: the probe is only looked at by address, but GCC sees uninitialized bytes.
  void* probe = std::calloc(1, 64);
  const bool mimalloc = mi_is_in_heap_region(probe);
  std::free(probe);
  return mimalloc ? "mimalloc" : "libc";
}

}  // namespace sluice::brokerd
