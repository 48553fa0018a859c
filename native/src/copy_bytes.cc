#include "copy_bytes.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sluice::internal {

namespace {
#if defined(__SSE2__)
struct CachedStores {
  static void Store(__m128i* at, __m128i value) { _mm_store_si128(at, value); }
};
struct StreamingStores {
  static void Store(__m128i* at, __m128i value) { _mm_stream_si128(at, value); }
};

template <typename Stores>
void CopyAligned(uint8_t* d, const uint8_t* s, size_t n) {
  // The first 16 bytes with an ordinary unaligned store, then on from the destination's next
  // 16-byte boundary, where aligned and streaming stores must start.
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d),
                   _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
  const size_t head = 16 - (reinterpret_cast<uintptr_t>(d) & 15);
  d += head;
  s += head;
  n -= head;
  for (; n >= 64; d += 64, s += 64, n -= 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    Stores::Store(reinterpret_cast<__m128i*>(d), a);
    Stores::Store(reinterpret_cast<__m128i*>(d + 16), b);
    Stores::Store(reinterpret_cast<__m128i*>(d + 32), c);
    Stores::Store(reinterpret_cast<__m128i*>(d + 48), e);
  }
  std::memcpy(d, s, n);
}
#endif

// The largest unified cache of cpu0, from sysfs; 0 when it cannot be read. (sysconf's
// _SC_LEVEL3_CACHE_SIZE decodes CPUID, which a VM may report wrongly: 320 MiB for 32 here.)
size_t LastLevelCacheBytes() {
  size_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream type_file(dir + "/type");
    std::ifstream size_file(dir + "/size");
    std::string type;
    size_t kib = 0;
    std::string unit;
    if (!(type_file >> type) || !(size_file >> kib >> unit)) break;
    if (type == "Unified" && unit.starts_with("K")) largest = std::max(largest, kib << 10);
  }
  return largest;
}
}  // namespace

void CopyLarge(void* dst, const void* src, size_t n, bool streaming) {
#if defined(__SSE2__)
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  if (streaming) {
    CopyAligned<StreamingStores>(d, s, n);
  } else {
    CopyAligned<CachedStores>(d, s, n);
  }
#else
  (void)streaming;
  std::memcpy(dst, src, n);
#endif
}

bool StreamingPays(size_t ring_bytes) {
  static const size_t cache = LastLevelCacheBytes();
  return cache > 0 && ring_bytes >= cache;
}

void FenceCopies() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace sluice::internal
