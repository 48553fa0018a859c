#pragma once

#include <cstddef>
#include <cstring>

namespace sluice::internal {

// Below this memcpy does not use `rep movsb`.
inline constexpr size_t kCopyLoopFrom = 4096;

// CopyBytes from kCopyLoopFrom bytes on.
void CopyLarge(void* dst, const void* src, size_t n, bool streaming);

// Copies n bytes from src to dst (not overlapping): the one copy of a payload into a slot.
//
// From 4 KiB on, with 16-byte loads and stores aligned on the destination: glibc's memcpy hands
// such copies to `rep movsb`, which on the AMD EPYC the benchmarks run on moves 17-20 GB/s when
// source and destination agree modulo 64 and 3-8 GB/s when they differ by 1, 8 or 16 bytes, and
// a value's place in a fetch response and its place in an Arrow buffer agree only by chance.
// `streaming` makes those stores non-temporal (see StreamingPays). Smaller copies go to memcpy,
// whose vector loops do not mind alignment; inline, so that the small values of a records object
// cost what memcpy costs.
inline void CopyBytes(void* dst, const void* src, size_t n, bool streaming) {
  if (n < kCopyLoopFrom) {
    std::memcpy(dst, src, n);
  } else {
    CopyLarge(dst, src, n, streaming);
  }
}

// Whether a writer that cycles through `ring_bytes` of slots should stream its payloads: when the
// ring is at least the last-level cache, a slot is out of the cache by the time the writer comes
// back to it, and an ordinary store first reads each line from memory only to overwrite it, and
// evicts lines the reader is about to read. Streaming stores skip the read; the reader then reads
// from memory, which it would have done anyway. A ring that fits stays in the cache, where the
// reader finds it. Measured: benchmarks/README.md, "Handoff". False when the cache size is unknown.
bool StreamingPays(size_t ring_bytes);

// Orders CopyBytes' non-temporal stores before the stores that follow, which a release store
// alone does not: a writer calls it before it publishes the slot those copies went to.
void FenceCopies();

}  // namespace sluice::internal
