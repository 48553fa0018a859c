// Which malloc the daemon runs on. It links mimalloc: librdkafka allocates an op and a message
// per record on its broker thread and the pump frees them on another, and glibc's arenas made
// those two calls most of the daemon's time at 100-byte records (benchmarks/README.md, ingest).
// The override works by symbol interposition, which a link order or an LD_PRELOAD can undo
// silently, so the daemon asks at start-up and says it in its ready line.
#pragma once

#include <string_view>

namespace sluice::brokerd {

// "mimalloc" when malloc hands out mimalloc's memory, "libc" otherwise.
std::string_view MallocInUse();

}  // namespace sluice::brokerd
