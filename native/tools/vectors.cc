#include "vectors.h"

#include <arrow/record_batch.h>

#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

#include "content_rule.h"
#include "sluice/crc32c.h"
#include "sluice/layout.h"
#include "sluice/segment_image.h"
#include "sluice/segment_reader.h"
#include "sluice/segment_writer.h"

namespace sluice::vectors {
namespace {

namespace h = layout::header;
namespace ln = layout::lane;
namespace s = layout::slot;

using Image = std::vector<uint8_t>;

template <typename T>
void Put(Image& image, uint64_t offset, T value) {
  std::memcpy(image.data() + offset, &value, sizeof(T));
}
template <typename T>
T Get(const Image& image, uint64_t offset) {
  T value;
  std::memcpy(&value, image.data() + offset, sizeof(T));
  return value;
}

struct Good {
  Image image;
  SegmentLayout layout;
  uint64_t objects = 0;
  uint64_t records = 0;
  uint64_t checksum = 0;
};

// A real writer publishes `count` rows of the content rule, `batch` per object, to one attached
// reader; the image is the file at that point, with the process-specific fields (pids,
// heartbeats) zeroed so that it is the same on every run.
Result<Good> Publish(const std::string& directory, ObjectKind kind, uint64_t count, size_t size,
                     size_t batch) {
  WriterOptions options;
  // An absolute path: a plain name would be taken as one in /dev/shm.
  options.name = std::filesystem::absolute(directory + "/.vector-in-progress.seg").string();
  options.kind = kind;
  options.slot_count = 4;
  options.slot_size = 4096;
  options.lane_count = 2;
  options.doorbell = false;
  SLUICE_ASSIGN_OR_RETURN(auto writer, SegmentWriter::Create(options));
  ReaderOptions reader_options;
  reader_options.doorbell = false;
  SLUICE_ASSIGN_OR_RETURN(auto reader, SegmentReader::Open(writer->path(), reader_options));

  Good good;
  RecordsBatchBuilder records;
  ChunksBatchBuilder chunks;
  std::deque<content::OwnedRecord> record_store;
  std::deque<content::OwnedChunk> chunk_store;
  for (uint64_t first = 0; first < count; first += batch) {
    for (uint64_t i = first; i < std::min<uint64_t>(first + batch, count); ++i) {
      if (kind == ObjectKind::kRecords) {
        const Record& record = content::AppendRecord(record_store, i, size);
        records.Add(record);
        good.checksum += content::ValueHash(record);
      } else {
        const Chunk& chunk = content::AppendChunk(chunk_store, i, count, size);
        chunks.Add(chunk);
        good.checksum += content::ValueHash(chunk);
      }
    }
    SLUICE_ASSIGN_OR_RETURN(auto slot, writer->Acquire(std::chrono::seconds(1)));
    SLUICE_ASSIGN_OR_RETURN(auto encoded,
                            kind == ObjectKind::kRecords
                                ? records.Finish(slot.data, slot.capacity, slot.stores)
                                : chunks.Finish(slot.data, slot.capacity, slot.stores));
    SLUICE_RETURN_NOT_OK(writer->Publish(encoded).status());
    ++good.objects;
  }
  good.records = count;
  good.layout = writer->layout();
  std::ifstream file(writer->path(), std::ios::binary);
  good.image.assign(std::istreambuf_iterator<char>(file), {});

  Put<uint64_t>(good.image, h::kWriterPid, 0);
  Put<uint64_t>(good.image, h::kWriterHeartbeatNs, 0);
  for (uint32_t lane = 0; lane < good.layout.lane_count; ++lane) {
    Put<uint64_t>(good.image, good.layout.LaneOffset(lane) + ln::kReaderPid, 0);
    Put<uint64_t>(good.image, good.layout.LaneOffset(lane) + ln::kReaderHeartbeatNs, 0);
  }
  reader.reset();
  (void)writer->Close(std::chrono::nanoseconds(0));
  return good;
}

Status WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) return Status::FromErrno("write " + path, errno);
  return Status::OK();
}

// The first published object's message, as a file of its own.
Status WriteObject(const std::string& path, const Good& good) {
  const uint64_t descriptor = good.layout.DescriptorOffset(0);
  return WriteFile(path, good.image.data() + good.layout.SlotDataOffset(0),
                   Get<uint32_t>(good.image, descriptor + s::kLength));
}

}  // namespace

Status WriteAll(const std::string& directory) {
  SLUICE_ASSIGN_OR_RETURN(const Good records, Publish(directory, ObjectKind::kRecords, 10, 16, 4));
  SLUICE_ASSIGN_OR_RETURN(const Good chunks, Publish(directory, ObjectKind::kChunks, 7, 24, 3));
  const SegmentLayout& l = records.layout;
  const uint64_t slot0 = l.DescriptorOffset(0);

  std::ostringstream manifest;
  manifest << "# file\tresult\tobjects\trecords\tchecksum\tfield\n";
  auto good = [&](const std::string& name, const Good& g) {
    manifest << name << "\tok\t" << g.objects << "\t" << g.records << "\t"
             << content::FormatChecksum(g.checksum) << "\t-\n";
    return WriteFile(directory + "/" + name, g.image.data(), g.image.size());
  };
  // A copy of the RECORDS image broken by `patch`, which a reader must reject naming `field`.
  auto bad = [&](const std::string& name, const std::string& field,
                 const std::function<void(Image&)>& patch) {
    Image image = records.image;
    patch(image);
    manifest << name << "\terror\t-\t-\t-\t" << field << "\n";
    return WriteFile(directory + "/" + name, image.data(), image.size());
  };
  auto recompute_checksum = [&](Image& image) {
    const auto length = Get<uint32_t>(image, slot0 + s::kLength);
    Put<uint32_t>(image, slot0 + s::kChecksum,
                  crc32c::Compute(image.data() + l.SlotDataOffset(0), length));
  };

  SLUICE_RETURN_NOT_OK(good("records-ok.seg", records));
  SLUICE_RETURN_NOT_OK(good("chunks-ok.seg", chunks));
  SLUICE_RETURN_NOT_OK(bad("bad-magic.seg", "magic", [](Image& i) { i[7] = 'X'; }));
  SLUICE_RETURN_NOT_OK(
      bad("bad-version.seg", "version", [](Image& i) { Put<uint32_t>(i, h::kVersion, 2); }));
  SLUICE_RETURN_NOT_OK(bad("lane-count-zero.seg", "lane_count",
                           [](Image& i) { Put<uint32_t>(i, h::kLaneCount, 0); }));
  SLUICE_RETURN_NOT_OK(bad("truncated.seg", "segment_size",
                           [](Image& i) { i.erase(i.end() - layout::kPageSize, i.end()); }));
  SLUICE_RETURN_NOT_OK(bad("region-out-of-file.seg", "slot_data_offset",
                           [](Image& i) { Put<uint64_t>(i, h::kSlotDataOffset, 1ull << 40); }));
  SLUICE_RETURN_NOT_OK(bad("bad-schema.seg", "schema", [](Image& i) {
    std::memset(i.data() + h::kSchema + 8, 0xA5, Get<uint32_t>(i, h::kSchemaLength) - 8);
  }));
  SLUICE_RETURN_NOT_OK(bad("slot-length.seg", "length", [&](Image& i) {
    Put<uint32_t>(i, slot0 + s::kLength, static_cast<uint32_t>(l.slot_size + 64));
  }));
  SLUICE_RETURN_NOT_OK(bad("bad-checksum.seg", "checksum", [&](Image& i) {
    Put<uint32_t>(i, slot0 + s::kChecksum, Get<uint32_t>(i, slot0 + s::kChecksum) ^ 1);
  }));
  SLUICE_RETURN_NOT_OK(bad("holders-beyond-lanes.seg", "state_word", [&](Image& i) {
    Put<uint64_t>(i, slot0 + s::kStateWord, Get<uint64_t>(i, slot0 + s::kStateWord) | 1u << 5);
  }));
  SLUICE_RETURN_NOT_OK(bad("writer-and-readers.seg", "state_word", [&](Image& i) {
    Put<uint64_t>(i, slot0 + s::kStateWord,
                  Get<uint64_t>(i, slot0 + s::kStateWord) | s::kWriterBit);
  }));
  SLUICE_RETURN_NOT_OK(bad("bad-message.seg", "message", [&](Image& i) {
    Put<uint32_t>(i, l.SlotDataOffset(0), 0);
    recompute_checksum(i);
  }));
  SLUICE_RETURN_NOT_OK(bad("record-count.seg", "record_count",
                           [&](Image& i) { Put<uint32_t>(i, slot0 + s::kRecordCount, 99); }));
  SLUICE_RETURN_NOT_OK(WriteObject(directory + "/records-object.arrow", records));
  SLUICE_RETURN_NOT_OK(WriteObject(directory + "/chunks-object.arrow", chunks));
  const std::string text = manifest.str();
  return WriteFile(directory + "/manifest.tsv", reinterpret_cast<const uint8_t*>(text.data()),
                   text.size());
}

}  // namespace sluice::vectors
