// Writes the produce fuzzer's seeds into a folder (README.md): the objects a producer puts in its
// segment's slots, encoded by the project's own ChunksBatchBuilder as the Java sink's are, and
// the malformed ones the daemon must refuse (docs/brokerd.md, "Local producers"), each after its
// descriptor's record_count as produce_fuzz_entry.h reads it. A seed's name says what the daemon
// makes of it: accepted-* or refused-*.
//
//   produce-fuzz-seeds DIR
#include <arrow/api.h>
#include <arrow/ipc/api.h>
#include <arrow/util/compression.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "sluice/batch_builder.h"
#include "sluice/schemas.h"
#include "sluice/status.h"

namespace sluice {
namespace {

struct Seed {
  std::string name;
  uint32_t record_count;
  std::vector<uint8_t> object;
};

// One object of `chunks` as a producer writes it.
Result<std::vector<uint8_t>> Encode(const std::vector<Chunk>& chunks) {
  ChunksBatchBuilder builder;
  for (const Chunk& chunk : chunks) builder.Add(chunk);
  std::vector<uint8_t> object(builder.EncodedSize());
  SLUICE_ASSIGN_OR_RETURN(const EncodedObject encoded,
                          builder.Finish(object.data(), object.size()));
  object.resize(encoded.length);
  return object;
}

// The object with 4 bytes more of metadata padding, which leaves every body buffer 4 bytes off
// the 8-byte alignment the IPC format requires (docs/formats.md, "The cycle").
std::vector<uint8_t> Misaligned(std::vector<uint8_t> object) {
  uint32_t metadata_length = 0;
  std::memcpy(&metadata_length, object.data() + 4, 4);
  object.insert(object.begin() + 8 + metadata_length, 4, 0);
  metadata_length += 4;
  std::memcpy(object.data() + 4, &metadata_length, 4);
  return object;
}

// A CHUNKS batch of one row built by Arrow itself, with a null job when `null_job`, or of no row.
std::shared_ptr<arrow::RecordBatch> ArrowBatch(int64_t rows, bool null_job) {
  arrow::StringBuilder jobs, streams;
  arrow::UInt64Builder seqs;
  arrow::BooleanBuilder eos;
  arrow::BinaryBuilder payloads;
  for (int64_t row = 0; row < rows; ++row) {
    (void)(null_job ? jobs.AppendNull() : jobs.Append("job-1"));
    (void)streams.Append("cyan");
    (void)seqs.Append(static_cast<uint64_t>(row));
    (void)eos.Append(false);
    (void)payloads.Append(std::string(4096, '\0'));
  }
  std::vector<std::shared_ptr<arrow::Array>> columns(5);
  (void)jobs.Finish(&columns[0]);
  (void)streams.Finish(&columns[1]);
  (void)seqs.Finish(&columns[2]);
  (void)eos.Finish(&columns[3]);
  (void)payloads.Finish(&columns[4]);
  return arrow::RecordBatch::Make(ChunksSchema(), rows, std::move(columns));
}

// The batch as Arrow's IPC writer puts it, its body compressed with `codec` unless UNCOMPRESSED.
Result<std::vector<uint8_t>> Serialize(const arrow::RecordBatch& batch,
                                       arrow::Compression::type codec) {
  auto options = arrow::ipc::IpcWriteOptions::Defaults();
  if (codec != arrow::Compression::UNCOMPRESSED) {
    auto made = arrow::util::Codec::Create(codec);
    if (!made.ok()) return Status::InvalidState(made.status().ToString());
    options.codec = std::move(*made);
  }
  auto message = arrow::ipc::SerializeRecordBatch(batch, options);
  if (!message.ok()) return Status::InvalidState(message.status().ToString());
  return std::vector<uint8_t>((*message)->data(), (*message)->data() + (*message)->size());
}

Result<std::vector<Seed>> Seeds() {
  const std::string longest(128, 'n');
  const std::vector<Chunk> one = {{"job-1", "cyan", 0, false, "payload of a chunk"}};
  std::vector<Seed> seeds;
  auto add = [&](std::string name, uint32_t record_count, std::vector<uint8_t> object) {
    seeds.push_back({std::move(name), record_count, std::move(object)});
  };
  auto add_chunks = [&](std::string name, const std::vector<Chunk>& chunks) -> Status {
    SLUICE_ASSIGN_OR_RETURN(auto object, Encode(chunks));
    add(std::move(name), static_cast<uint32_t>(chunks.size()), std::move(object));
    return Status::OK();
  };
  SLUICE_RETURN_NOT_OK(add_chunks("accepted-one-chunk", one));
  SLUICE_RETURN_NOT_OK(add_chunks("accepted-two-streams", {{"job-1", "cyan", 0, false, "c0"},
                                                           {"job-1", "magenta", 0, false, "m0"},
                                                           {"job-1", "cyan", 1, false, "c1"}}));
  SLUICE_RETURN_NOT_OK(add_chunks("accepted-eos-empty-payload", {{"j", "s", 7, true, ""}}));
  const std::string page(5000, 'p');
  SLUICE_RETURN_NOT_OK(add_chunks("accepted-large-payload", {{"job.2", "k_3", 1, false, page}}));
  SLUICE_RETURN_NOT_OK(
      add_chunks("accepted-longest-names", {{longest, longest, UINT64_MAX, true, "x"}}));
  SLUICE_RETURN_NOT_OK(add_chunks("accepted-dot-names", {{"..", ".", 0, false, "dots"}}));

  SLUICE_RETURN_NOT_OK(add_chunks("refused-stream-with-slash", {{"a", "../../etc", 1, false, ""}}));
  SLUICE_RETURN_NOT_OK(add_chunks("refused-empty-job", {{"", "s", 1, false, "empty job"}}));
  SLUICE_RETURN_NOT_OK(
      add_chunks("refused-nul-in-stream", {{"a", std::string_view("s\0t", 3), 1, false, "nul"}}));
  SLUICE_RETURN_NOT_OK(add_chunks("refused-name-too-long", {{longest + "n", "s", 1, false, ""}}));
  SLUICE_RETURN_NOT_OK(add_chunks("refused-second-row-no-name",
                                  {{"a", "s", 0, false, "fine"}, {"a", "s t", 1, false, ""}}));
  SLUICE_ASSIGN_OR_RETURN(auto valid, Encode(one));
  add("refused-record-count-beyond", 2, valid);
  add("refused-record-count-zero", 0, valid);
  add("refused-cut-short", 1,
      std::vector<uint8_t>(valid.begin(), valid.begin() + valid.size() / 2));
  add("refused-misaligned-body", 1, Misaligned(valid));
  add("refused-garbage", 1, std::vector<uint8_t>(256, 0x5a));
  add("refused-empty", 0, {});

  RecordsBatchBuilder records;
  const std::string value = "a record";
  records.Add(Record{0, 42, 0, std::nullopt, value, {}});
  std::vector<uint8_t> record_object(records.EncodedSize());
  SLUICE_ASSIGN_OR_RETURN(const EncodedObject encoded,
                          records.Finish(record_object.data(), record_object.size()));
  record_object.resize(encoded.length);
  add("refused-records-batch", 1, std::move(record_object));

  SLUICE_ASSIGN_OR_RETURN(auto no_rows,
                          Serialize(*ArrowBatch(0, false), arrow::Compression::UNCOMPRESSED));
  add("refused-no-rows", 0, std::move(no_rows));
  SLUICE_ASSIGN_OR_RETURN(auto null_job,
                          Serialize(*ArrowBatch(1, true), arrow::Compression::UNCOMPRESSED));
  add("refused-null-job", 1, std::move(null_job));
  for (const auto codec : {arrow::Compression::LZ4_FRAME, arrow::Compression::ZSTD}) {
    if (!arrow::util::Codec::IsAvailable(codec)) continue;
    SLUICE_ASSIGN_OR_RETURN(auto compressed, Serialize(*ArrowBatch(4, false), codec));
    add("refused-" + arrow::util::Codec::GetCodecAsString(codec) + "-body", 4,
        std::move(compressed));
  }
  return seeds;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: produce-fuzz-seeds DIR\n");
    return 2;
  }
  auto seeds = sluice::Seeds();
  if (!seeds.ok()) {
    std::fprintf(stderr, "%s\n", seeds.status().ToString().c_str());
    return 1;
  }
  for (const sluice::Seed& seed : *seeds) {
    std::ofstream out(std::string(argv[1]) + "/" + seed.name + ".bin", std::ios::binary);
    for (int shift = 0; shift < 32; shift += 8)
      out.put(static_cast<char>(seed.record_count >> shift));
    out.write(reinterpret_cast<const char*>(seed.object.data()),
              static_cast<std::streamsize>(seed.object.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", seed.name.c_str());
      return 1;
    }
  }
  std::printf("%zu seeds in %s\n", seeds->size(), argv[1]);
  return 0;
}
