#include "daemon/allocator.h"

#ifndef SLUICE_SYSTEM_MALLOC
#include <mimalloc.h>

#include <cstdlib>
#endif

namespace sluice::brokerd {

std::string_view MallocInUse() {
#ifdef SLUICE_SYSTEM_MALLOC
  // A sanitized build (cmake/Sanitizers.cmake) links no mimalloc: malloc is the system's, as
  // the sanitizer wraps it.
  return "libc";
#else
  // calloc, not malloc: the probe is only looked at by address, but GCC sees uninitialized bytes.
  void* probe = std::calloc(1, 64);
  const bool mimalloc = mi_is_in_heap_region(probe);
  std::free(probe);
  return mimalloc ? "mimalloc" : "libc";
#endif
}

}  // namespace sluice::brokerd
