#include "segment_fuzz_entry.h"

#include <cstring>
#include <vector>

#include "sluice/crc32c.h"
#include "sluice/layout.h"
#include "sluice/segment_image.h"

namespace sluice::fuzz {
namespace {

// Gives every checksummed slot the CRC32C of its (mutated) data, so that mutations reach the IPC
// decoding behind the checksum instead of stopping at it.
void RefreshChecksums(uint8_t* base, const SegmentLayout& l) {
  namespace s = layout::slot;
  for (uint32_t slot = 0; slot < l.slot_count; ++slot) {
    uint8_t* descriptor = base + l.DescriptorOffset(slot);
    uint32_t flags;
    uint32_t length;
    std::memcpy(&flags, descriptor + s::kFlags, 4);
    std::memcpy(&length, descriptor + s::kLength, 4);
    if ((flags & s::kHasChecksum) == 0 || length > l.slot_size) continue;
    const uint32_t crc = crc32c::Compute(base + l.SlotDataOffset(slot), length);
    std::memcpy(descriptor + s::kChecksum, &crc, 4);
  }
}

}  // namespace

int FuzzSegmentImage(const uint8_t* data, size_t size) {
  // A mapped segment is page-aligned; the copy gives the image the alignment its atomics need.
  std::vector<uint64_t> words((size + 7) / 8);
  auto* image = reinterpret_cast<uint8_t*>(words.data());
  if (size > 0) std::memcpy(image, data, size);
  if (Inspect(image, size).ok()) return 0;
  auto header = ValidateHeader(image, size);
  if (!header.ok()) return 0;
  RefreshChecksums(image, header->layout);
  (void)Inspect(image, size);
  return 0;
}

}  // namespace sluice::fuzz
