// handoff-writer: the C++ side of the handoff benchmark (benchmarks/README.md).
//
//   handoff-writer sluice --segment NAME --size B --records N --warmup W --slot-size Z --slots S
//       [--checksums]
//   handoff-writer memcpy --size B --records N --warmup W --slot-size Z --slots S
//   handoff-writer threads --size B --records N --warmup W --slot-size Z --slots S
//
// `sluice` creates a RECORDS segment, waits for one reader, and publishes W + N records of B value
// bytes, as many per object as fit a slot, through the in-place batch builder: each value is
// copied once, from a prepared source buffer into shared memory. `memcpy` makes the same copies
// from the same source into a private ring of the same slots, with no reader: the anchor.
// `threads` adds a reader thread that sums every byte of each slot: the hardware's ceiling for a
// handoff whose reader reads what it is handed.
//
// The first W records warm both sides up (the reader's JIT above all); an object ends at record W
// so that the reader can tell where the measured part starts. Prints one line:
//   start_ns=.. end_ns=.. cpu_s=.. objects=.. records=.. bytes=..
// with start_ns and end_ns on CLOCK_MONOTONIC, which Java's System.nanoTime shares on Linux, so
// the harness can subtract the reader's end from the writer's start. cpu_s is this process's CPU
// time over the same window. `threads` adds checksum=.. (its reader's sum), which keeps the
// compiler from dropping the reads.
#include <sched.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sluice/batch_builder.h"
#include "sluice/segment_writer.h"

namespace {

using sluice::Status;

// Larger than L2, a part of L3: the writer reads its source mostly from L3, as a broker copying
// from recently received socket buffers would.
constexpr size_t kSourceBytes = 16 << 20;
constexpr auto kTimeout = std::chrono::seconds(60);
// The reader releases its last object microseconds after the writer's last publish.
constexpr auto kDrainTimeout = std::chrono::seconds(10);

int64_t Now(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Options {
  std::string segment;
  size_t size = 0;
  uint64_t records = 0;
  uint64_t warmup = 0;
  uint64_t slot_size = 0;
  uint32_t slots = 0;
  bool checksums = false;
};

// The values: consecutive records are consecutive B-byte pieces of a random source, wrapping
// around, as in a receive buffer. A cursor, not i % pieces: a division per record would cost the
// writer more than the builder's bookkeeping.
class Source {
 public:
  explicit Source(size_t size)
      : size_(size), end_(kSourceBytes / size * size), bytes_(kSourceBytes) {
    std::mt19937_64 random(42);
    for (auto& byte : bytes_) byte = static_cast<char>(random());
  }
  std::string_view Current() const { return {bytes_.data() + position_, size_}; }
  void Advance() {
    position_ += size_;
    if (position_ == end_) position_ = 0;
  }

 private:
  size_t size_;
  size_t end_;
  size_t position_ = 0;
  std::vector<char> bytes_;
};

struct Window {
  int64_t start_ns = 0, end_ns = 0, cpu_start_ns = 0, cpu_end_ns = 0;
  uint64_t objects = 0;
  void Start() {
    start_ns = Now(CLOCK_MONOTONIC);
    cpu_start_ns = Now(CLOCK_PROCESS_CPUTIME_ID);
    objects = 0;
  }
  void End() {
    end_ns = Now(CLOCK_MONOTONIC);
    cpu_end_ns = Now(CLOCK_PROCESS_CPUTIME_ID);
  }
  // `more` is appended to the line: further key=value pairs.
  void Print(const Options& options, const std::string& more = "") const {
    std::printf("start_ns=%lld end_ns=%lld cpu_s=%.6f objects=%llu records=%llu bytes=%llu%s\n",
                static_cast<long long>(start_ns), static_cast<long long>(end_ns),
                static_cast<double>(cpu_end_ns - cpu_start_ns) / 1e9,
                static_cast<unsigned long long>(objects),
                static_cast<unsigned long long>(options.records),
                static_cast<unsigned long long>(options.records * options.size), more.c_str());
  }
};

int Fail(const std::string& what, const Status& status) {
  std::fprintf(stderr, "handoff-writer: %s: %s\n", what.c_str(), status.ToString().c_str());
  return 1;
}

int RunSluice(const Options& options) {
  sluice::WriterOptions writer_options;
  writer_options.name = options.segment;
  writer_options.kind = sluice::ObjectKind::kRecords;
  writer_options.slot_count = options.slots;
  writer_options.slot_size = options.slot_size;
  writer_options.lane_count = 1;
  writer_options.checksums = options.checksums;
  auto created = sluice::SegmentWriter::Create(writer_options);
  if (!created.ok()) return Fail("create " + options.segment, created.status());
  auto& writer = *created;
  if (auto waited = writer->WaitForReaders(1, kTimeout); !waited.ok()) {
    return Fail("wait for a reader", waited);
  }

  Source source(options.size);
  sluice::RecordsBatchBuilder builder;
  Window window;
  uint64_t next = 0;
  // Every record has the same shape, so how many fit a slot is learnt from the first full object;
  // later objects skip the per-row size check.
  uint64_t rows_per_object = 0;
  // Fills one slot after the other with records [next, end); the last object ends at `end`.
  auto publish_until = [&](uint64_t end) -> Status {
    sluice::Record record;
    while (next < end) {
      SLUICE_ASSIGN_OR_RETURN(auto slot, writer->Acquire(kTimeout));
      do {
        record.offset = static_cast<int64_t>(next);
        record.timestamp_ms = record.offset;
        record.value = source.Current();
        const bool full = rows_per_object == 0 ? builder.num_rows() > 0 &&
                                                     builder.EncodedSizeWith(record) > slot.capacity
                                               : builder.num_rows() == rows_per_object;
        if (full) break;
        builder.Add(record);
        source.Advance();
      } while (++next < end);
      if (rows_per_object == 0 && next < end) rows_per_object = builder.num_rows();
      SLUICE_ASSIGN_OR_RETURN(auto encoded, builder.Finish(slot.data, slot.capacity, slot.stores));
      SLUICE_RETURN_NOT_OK(writer->Publish(encoded).status());
      ++window.objects;
    }
    return Status::OK();
  };
  if (auto published = publish_until(options.warmup); !published.ok()) {
    return Fail("publish", published);
  }
  window.Start();
  if (auto published = publish_until(options.warmup + options.records); !published.ok()) {
    return Fail("publish", published);
  }
  // Close returns once the reader released every slot: the handoff is complete.
  if (auto closed = writer->Close(kDrainTimeout); !closed.ok()) return Fail("close", closed);
  window.End();
  window.Print(options);
  return 0;
}

// The copies of the memcpy anchors: one memcpy per record, the records back to back in a slot of
// a private ring, the next slot when one is full. `next_slot(n, bytes)` runs when slot number n
// (counting from 0 over the whole run) is full with `bytes`, before the copies go on into n + 1.
class RingCopy {
 public:
  explicit RingCopy(const Options& options)
      : options_(options), source_(options.size), ring_(options.slot_size * options.slots) {
    // Touch every page first, as the segment's pages are by the time the measured part starts.
    std::memset(ring_.data(), 1, ring_.size());
  }

  const char* Slot(uint64_t n) const { return ring_.data() + Offset(n); }
  uint64_t slot() const { return slot_; }
  uint64_t used() const { return used_; }

  template <typename NextSlot>
  void CopyUntil(uint64_t begin, uint64_t end, NextSlot&& next_slot) {
    for (uint64_t i = begin; i < end; ++i) {
      const std::string_view value = source_.Current();
      source_.Advance();
      if (used_ + value.size() > options_.slot_size) {
        next_slot(slot_, used_);
        ++slot_;
        used_ = 0;
      }
      std::memcpy(ring_.data() + Offset(slot_) + used_, value.data(), value.size());
      used_ += value.size();
    }
  }

 private:
  // Slot number n of the run lies where the ring's slot n % slots does.
  uint64_t Offset(uint64_t n) const { return n % options_.slots * options_.slot_size; }

  const Options& options_;
  Source source_;
  std::vector<char> ring_;
  uint64_t slot_ = 0;
  uint64_t used_ = 0;
};

int RunMemcpy(const Options& options) {
  RingCopy copy(options);
  Window window;
  auto count = [&](uint64_t, uint64_t) { ++window.objects; };
  copy.CopyUntil(0, options.warmup, count);
  window.Start();
  copy.CopyUntil(options.warmup, options.warmup + options.records, count);
  window.End();
  // Nobody reads the ring: this tells the compiler its bytes are observed, so no copy is dropped.
  asm volatile("" : : "r"(copy.Slot(0)) : "memory");
  window.Print(options);
  return 0;
}

// Spins briefly, then yields: on two cores the other side may need this one.
void Idle(int& steps) {
  if (++steps < 100) {
    __builtin_ia32_pause();
  } else {
    sched_yield();
  }
}

// The sum Probe.sum makes in the Java readers: 8-byte words with eight accumulators, then the
// tail's signed bytes.
uint64_t Sum(const char* bytes, size_t length) {
  uint64_t sums[8] = {};
  size_t i = 0;
  for (; i + 64 <= length; i += 64) {
    for (int k = 0; k < 8; ++k) {
      uint64_t word;
      std::memcpy(&word, bytes + i + 8 * k, 8);
      sums[k] += word;
    }
  }
  for (; i + 8 <= length; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    sums[0] += word;
  }
  for (; i < length; ++i) sums[0] += static_cast<uint64_t>(static_cast<int8_t>(bytes[i]));
  uint64_t total = 0;
  for (uint64_t sum : sums) total += sum;
  return total;
}

// The handoff without the format, the processes and the JVM: the memcpy anchor's copies, each
// full slot handed to a reader thread of this process that sums every byte of it (as the Java
// readers do) and hands it back. What two cores can do when one writes what the other reads.
int RunThreads(const Options& options) {
  RingCopy copy(options);
  std::vector<uint64_t> filled(options.slots);
  std::atomic<uint64_t> published{0}, released{0};
  std::atomic<bool> done{false};
  uint64_t checksum = 0;
  std::thread reader([&] {
    for (uint64_t n = 0;; ++n) {
      int steps = 0;
      while (published.load(std::memory_order_acquire) <= n) {
        if (done.load(std::memory_order_acquire) &&
            published.load(std::memory_order_acquire) <= n) {
          return;
        }
        Idle(steps);
      }
      checksum += Sum(copy.Slot(n), filled[n % options.slots]);
      released.store(n + 1, std::memory_order_release);
    }
  });
  Window window;
  auto hand_over = [&](uint64_t n, uint64_t bytes) {
    filled[n % options.slots] = bytes;
    published.store(n + 1, std::memory_order_release);
    ++window.objects;
    // Slot n + 1 is free once the reader released what the ring held there before.
    int steps = 0;
    while (n + 1 - released.load(std::memory_order_acquire) >= options.slots) Idle(steps);
  };
  copy.CopyUntil(0, options.warmup, hand_over);
  window.Start();
  copy.CopyUntil(options.warmup, options.warmup + options.records, hand_over);
  hand_over(copy.slot(), copy.used());
  done.store(true, std::memory_order_release);
  reader.join();
  window.End();
  window.Print(options, " checksum=" + std::to_string(checksum));
  return 0;
}

struct UsageError {
  std::string message;
};

Options Parse(int argc, char** argv, bool sluice) {
  std::map<std::string, std::string> values;
  Options options;
  for (int i = 2; i < argc; ++i) {
    const std::string name = argv[i];
    if (sluice && name == "--checksums") {
      options.checksums = true;
    } else if (i + 1 < argc && name.rfind("--", 0) == 0) {
      values[name] = argv[++i];
    } else {
      throw UsageError{"unexpected argument " + name};
    }
  }
  auto number = [&](const std::string& name) -> uint64_t {
    const auto found = values.find(name);
    if (found == values.end()) throw UsageError{"missing " + name};
    char* end = nullptr;
    const uint64_t value = std::strtoull(found->second.c_str(), &end, 10);
    if (found->second.empty() || *end != '\0') throw UsageError{name + " needs a number"};
    values.erase(found);
    return value;
  };
  if (sluice) {
    const auto found = values.find("--segment");
    if (found == values.end()) throw UsageError{"missing --segment"};
    options.segment = found->second;
    values.erase(found);
  }
  options.size = number("--size");
  options.records = number("--records");
  options.warmup = number("--warmup");
  options.slot_size = number("--slot-size");
  options.slots = static_cast<uint32_t>(number("--slots"));
  if (!values.empty()) throw UsageError{"unexpected argument " + values.begin()->first};
  if (options.size == 0 || options.size > kSourceBytes || options.size > options.slot_size ||
      options.slots == 0) {
    throw UsageError{"need 0 < --size <= min(--slot-size, 16 MiB) and --slots > 0"};
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string command = argc > 1 ? argv[1] : "";
    if (command == "sluice") return RunSluice(Parse(argc, argv, true));
    if (command == "memcpy") return RunMemcpy(Parse(argc, argv, false));
    if (command == "threads") return RunThreads(Parse(argc, argv, false));
    throw UsageError{"the command is sluice, memcpy or threads"};
  } catch (const UsageError& error) {
    std::fprintf(stderr, "handoff-writer: %s\n", error.message.c_str());
    return 2;
  }
}
