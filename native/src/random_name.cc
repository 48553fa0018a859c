#include "sluice/random_name.h"

#include <sys/random.h>

#include <cerrno>
#include <vector>

namespace sluice {

Result<std::string> RandomHex(size_t bytes) {
  std::vector<unsigned char> random(bytes);
  size_t filled = 0;
  while (filled < bytes) {
    // Blocks only until the kernel's pool is first initialised, early in boot.
    const ssize_t got = ::getrandom(random.data() + filled, bytes - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno("getrandom", errno);
    }
    filled += static_cast<size_t>(got);
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * bytes);
  for (const unsigned char byte : random) {
    text.push_back(kDigits[byte >> 4]);
    text.push_back(kDigits[byte & 0xF]);
  }
  return text;
}

Result<std::string> TemporarySuffix() {
  SLUICE_ASSIGN_OR_RETURN(std::string random, RandomHex(8));
  return ".tmp-" + random;
}

}  // namespace sluice
