// sluice-segment-tool: writes, reads and inspects segments with the deterministic content of
// content_rule.h, and writes the test vectors. Usage errors exit 2, runtime errors 1.
#include <arrow/record_batch.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "content_rule.h"
#include "sluice/mapping.h"
#include "sluice/segment_image.h"
#include "sluice/segment_reader.h"
#include "sluice/segment_writer.h"
#include "vectors.h"

namespace {

using namespace sluice;  // NOLINT: a tool's main file

constexpr const char* kUsage =
    "usage:\n"
    "  sluice-segment-tool write --segment NAME --kind records|chunks --count N --size B\n"
    "      [--batch R] [--slots S] [--slot-size Z] [--lanes L] [--wait-readers K]\n"
    "      [--timeout-ms T] [--no-checksums]\n"
    "  sluice-segment-tool read --segment NAME [--timeout-ms T]\n"
    "  sluice-segment-tool inspect --file PATH\n"
    "  sluice-segment-tool vectors --out DIR\n";

struct UsageError {
  std::string message;
};

// --name value pairs and bare --flags, checked against what the command accepts.
class Arguments {
 public:
  Arguments(int argc, char** argv, const std::vector<std::string>& valued,
            const std::vector<std::string>& flags) {
    for (int i = 2; i < argc; ++i) {
      const std::string name = argv[i];
      if (std::find(flags.begin(), flags.end(), name) != flags.end()) {
        values_[name] = "";
      } else if (std::find(valued.begin(), valued.end(), name) != valued.end() && i + 1 < argc) {
        values_[name] = argv[++i];
      } else {
        throw UsageError{"unexpected argument " + name};
      }
    }
  }
  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  std::string Text(const std::string& name) const {
    if (!Has(name)) throw UsageError{"missing " + name};
    return values_.at(name);
  }
  uint64_t Number(const std::string& name, std::optional<uint64_t> fallback = {}) const {
    if (!Has(name)) {
      if (fallback.has_value()) return *fallback;
      throw UsageError{"missing " + name};
    }
    const std::string& text = values_.at(name);
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || text[0] == '-') {
      throw UsageError{name + " needs a non-negative integer, not " + text};
    }
    return value;
  }

 private:
  std::map<std::string, std::string> values_;
};

struct Totals {
  uint64_t objects = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t checksum = 0;
};

void PrintTotals(const Totals& totals, double seconds) {
  std::printf("objects=%" PRIu64 " records=%" PRIu64 " bytes=%" PRIu64
              " checksum=%s seconds=%.3f\n",
              totals.objects, totals.records, totals.bytes,
              content::FormatChecksum(totals.checksum).c_str(), seconds);
}

int Fail(const std::string& what, const Status& status) {
  std::fprintf(stderr, "sluice-segment-tool: %s: %s\n", what.c_str(), status.ToString().c_str());
  return 1;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int Write(const Arguments& args) {
  WriterOptions options;
  options.name = args.Text("--segment");
  const std::string kind = args.Text("--kind");
  if (kind != "records" && kind != "chunks") throw UsageError{"--kind is records or chunks"};
  options.kind = kind == "records" ? ObjectKind::kRecords : ObjectKind::kChunks;
  const uint64_t count = args.Number("--count");
  const size_t size = args.Number("--size");
  const uint64_t batch = args.Number("--batch", 64);
  if (batch == 0) throw UsageError{"--batch must be at least 1"};
  options.slot_count = static_cast<uint32_t>(args.Number("--slots", 64));
  options.slot_size = args.Number("--slot-size", 1 << 20);
  options.lane_count = static_cast<uint32_t>(args.Number("--lanes", 4));
  options.checksums = !args.Has("--no-checksums");
  const auto timeout = std::chrono::milliseconds(args.Number("--timeout-ms", 30000));
  const auto readers = static_cast<uint32_t>(args.Number("--wait-readers", 1));

  auto created = SegmentWriter::Create(options);
  if (!created.ok()) return Fail("create " + options.name, created.status());
  auto& writer = *created;
  if (auto waited = writer->WaitForReaders(readers, timeout); !waited.ok()) {
    return Fail("wait for readers", waited);
  }
  const auto start = std::chrono::steady_clock::now();
  Totals totals;
  // Rows are added to an object up to --batch, or until the next would overflow the slot. Their
  // bytes live in `store` until the object is written; a deque keeps them in place.
  auto publish_all = [&](auto& builder, auto& store, auto append) -> Status {
    auto flush = [&]() -> Status {
      SLUICE_ASSIGN_OR_RETURN(auto slot, writer->Acquire(timeout));
      SLUICE_ASSIGN_OR_RETURN(auto encoded, builder.Finish(slot.data, slot.capacity, slot.stores));
      SLUICE_RETURN_NOT_OK(writer->Publish(encoded).status());
      ++totals.objects;
      return Status::OK();
    };
    for (uint64_t i = 0; i < count; ++i) {
      const auto& row = append(store, i);
      const size_t rows = builder.num_rows();
      if (rows > 0 && (rows == batch || builder.EncodedSizeWith(row) > options.slot_size)) {
        SLUICE_RETURN_NOT_OK(flush());
        store.erase(store.begin(), store.end() - 1);  // keeps `row` where it is
      }
      builder.Add(row);
      ++totals.records;
      totals.bytes += size;
      totals.checksum += content::ValueHash(row);
    }
    return builder.num_rows() > 0 ? flush() : Status::OK();
  };
  Status published;
  if (options.kind == ObjectKind::kRecords) {
    RecordsBatchBuilder builder;
    std::deque<content::OwnedRecord> store;
    published = publish_all(builder, store, [&](auto& into, uint64_t i) -> const Record& {
      return content::AppendRecord(into, i, size);
    });
  } else {
    ChunksBatchBuilder builder;
    std::deque<content::OwnedChunk> store;
    published = publish_all(builder, store, [&](auto& into, uint64_t i) -> const Chunk& {
      return content::AppendChunk(into, i, count, size);
    });
  }
  if (!published.ok()) return Fail("publish", published);
  if (auto closed = writer->Close(timeout); !closed.ok()) return Fail("close", closed);
  PrintTotals(totals, SecondsSince(start));
  return 0;
}

int Read(const Arguments& args) {
  const std::string name = args.Text("--segment");
  const auto timeout = std::chrono::milliseconds(args.Number("--timeout-ms", 30000));
  ReaderOptions options;
  options.open_timeout = timeout;
  auto opened = SegmentReader::Open(name, options);
  if (!opened.ok()) return Fail("open " + name, opened.status());
  auto& reader = *opened;
  content::Verifier verifier(reader->header().kind);
  Totals totals;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    auto next = reader->Next(timeout);
    if (!next.ok() && next.status().code() == StatusCode::kEndOfStream) break;
    if (!next.ok()) return Fail("next object", next.status());
    auto batch = DecodeObject(*next, reader->header().schema);
    if (!batch.ok()) return Fail("object " + std::to_string(next->object_id), batch.status());
    if (auto verified = verifier.Add(**batch); !verified.ok()) {
      return Fail("object " + std::to_string(next->object_id), verified);
    }
    ++totals.objects;
    if (auto released = reader->Release(*next); !released.ok()) return Fail("release", released);
  }
  if (auto finished = verifier.Finish(); !finished.ok()) return Fail("stream", finished);
  totals.records = verifier.rows();
  totals.bytes = verifier.bytes();
  totals.checksum = verifier.checksum();
  PrintTotals(totals, SecondsSince(start));
  return 0;
}

int InspectFile(const Arguments& args) {
  const std::string path = args.Text("--file");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail("open " + path, Status::FromErrno("open", errno));
  struct stat info {};
  fstat(fd, &info);
  // A private copy: inspection must see an image that does not change under it.
  std::vector<uint64_t> image((static_cast<size_t>(info.st_size) + 7) / 8);
  const ssize_t got = pread(fd, image.data(), static_cast<size_t>(info.st_size), 0);
  close(fd);
  if (got != info.st_size) return Fail("read " + path, Status::FromErrno("read", errno));
  auto inspection =
      Inspect(reinterpret_cast<const uint8_t*>(image.data()), static_cast<uint64_t>(info.st_size));
  if (!inspection.ok()) return Fail("inspect " + path, inspection.status());
  Totals totals;
  for (const auto& batch : inspection->batches) {
    ++totals.objects;
    totals.records += static_cast<uint64_t>(batch->num_rows());
    const auto values = content::TotalsOf(*batch, inspection->header.kind);
    totals.bytes += values.bytes;
    totals.checksum += values.checksum;
  }
  PrintTotals(totals, 0);
  return 0;
}

int Run(int argc, char** argv) {
  if (argc < 2) throw UsageError{"missing command"};
  const std::string command = argv[1];
  if (command == "write") {
    return Write(Arguments(argc, argv,
                           {"--segment", "--kind", "--count", "--size", "--batch", "--slots",
                            "--slot-size", "--lanes", "--wait-readers", "--timeout-ms"},
                           {"--no-checksums"}));
  }
  if (command == "read") return Read(Arguments(argc, argv, {"--segment", "--timeout-ms"}, {}));
  if (command == "inspect") return InspectFile(Arguments(argc, argv, {"--file"}, {}));
  if (command == "vectors") {
    const std::string out = Arguments(argc, argv, {"--out"}, {}).Text("--out");
    if (auto written = vectors::WriteAll(out); !written.ok()) return Fail("vectors", written);
    return 0;
  }
  throw UsageError{"unknown command " + command};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const UsageError& error) {
    std::fprintf(stderr, "sluice-segment-tool: %s\n%s", error.message.c_str(), kUsage);
    return 2;
  }
}
