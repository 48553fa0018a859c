#include "kafka_test_batches.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <stdexcept>

// The test batches and records are built with designated initializers that name only what a
// test is about; GCC 12 flags every member they leave at its default.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace sluice::brokerd::kafka {

// ---- A test-only encoder: builds what a broker sends, field by field. ----

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutZigZag(std::string& out, int64_t v) {
  PutVarint(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

void PutNullable(std::string& out, const std::optional<std::string>& bytes) {
  if (!bytes) {
    PutZigZag(out, -1);
    return;
  }
  PutZigZag(out, static_cast<int64_t>(bytes->size()));
  out += *bytes;
}

std::string Hex(std::string_view digits) {
  std::string out;
  int pending = -1;
  for (const char c : digits) {
    if (c == ' ' || c == '\n') continue;
    const int nibble = c <= '9' ? c - '0' : c - 'a' + 10;
    if (pending < 0) {
      pending = nibble;
    } else {
      out.push_back(static_cast<char>(pending << 4 | nibble));
      pending = -1;
    }
  }
  return out;
}

std::string EncodeRecord(const TestRecord& record) {
  std::string body(1, '\0');  // attributes
  PutZigZag(body, record.timestamp_delta);
  PutZigZag(body, record.offset_delta);
  PutNullable(body, record.key);
  PutNullable(body, record.value);
  PutZigZag(body, static_cast<int64_t>(record.headers.size()));
  for (const TestHeader& header : record.headers) {
    PutNullable(body, header.key);
    PutNullable(body, header.value);
  }
  std::string out;
  PutZigZag(out, static_cast<int64_t>(body.size()));
  return out + body;
}

std::string EncodeBatch(const TestBatch& batch) {
  std::string records;
  if (batch.raw_records) {
    records = *batch.raw_records;
  } else {
    for (const TestRecord& record : batch.records) records += EncodeRecord(record);
  }
  if (batch.compress) records = batch.compress(records);
  std::string tail;  // from attributes on: what the CRC covers
  PutBig(tail, batch.attributes);
  PutBig(tail, batch.last_offset_delta.value_or(
                   batch.records.empty() ? 0 : batch.records.back().offset_delta));
  PutBig(tail, batch.base_timestamp);
  PutBig(tail, batch.max_timestamp);
  PutBig(tail, batch.producer_id);
  PutBig<int16_t>(tail, 0);  // producer epoch
  PutBig<int32_t>(tail, 0);  // base sequence
  PutBig(tail, batch.record_count.value_or(static_cast<int32_t>(batch.records.size())));
  tail += records;
  std::string out;
  PutBig(out, batch.base_offset);
  PutBig(out, static_cast<int32_t>(4 + 1 + 4 + tail.size()));
  PutBig<int32_t>(out, 0);  // partition leader epoch
  PutBig(out, batch.magic);
  PutBig<uint32_t>(out, 0);  // CRC: not checked, as librdkafka's default does not
  return out + tail;
}

TestRecord Value(int32_t offset_delta, std::string value) {
  return {.offset_delta = offset_delta, .key = std::nullopt, .value = std::move(value)};
}

TestBatch Consecutive(int64_t base_offset, int count, int16_t attributes, int64_t producer_id) {
  TestBatch batch{.base_offset = base_offset, .attributes = attributes, .producer_id = producer_id};
  for (int i = 0; i < count; ++i)
    batch.records.push_back(Value(i, "v" + std::to_string(base_offset + i)));
  return batch;
}

std::string Marker(int64_t offset, int64_t producer_id, bool abort) {
  std::string key, value;
  PutBig<int16_t>(key, 0);
  PutBig<int16_t>(key, abort ? 0 : 1);
  PutBig<int16_t>(value, 0);
  PutBig<int32_t>(value, 3);
  return EncodeBatch({.base_offset = offset,
                      .attributes = kTransactional | kControl,
                      .producer_id = producer_id,
                      .records = {{.key = key, .value = value}}});
}

std::vector<TestRecord> VariedRecords(int count) {
  std::vector<TestRecord> records;
  for (int i = 0; i < count; ++i) {
    TestRecord& record = records.emplace_back();
    record.offset_delta = i;
    record.timestamp_delta = i * 3;
    if (i % 5 != 0) record.key = "key-" + std::to_string(i);
    record.value = std::string(static_cast<size_t>(20 + i % 13), static_cast<char>('a' + i % 26));
    if (i % 4 == 0) record.headers = {{"sluice.seq", std::to_string(i)}, {"n", std::nullopt}};
  }
  // Compresses far beyond the first output buffer: the output has to grow.
  records.back().value = std::string(1 << 20, 'z');
  return records;
}

// ---- Reading everything back, copied out of the views. ----

Walk ReadAll(std::string_view batches, std::span<const AbortedTransaction> aborted,
             int64_t from_offset) {
  RecordBatchReader reader(batches, aborted, from_offset);
  Walk walk;
  FetchedRecord record;
  for (;;) {
    Result<bool> more = reader.Next(record);
    if (!more.ok()) {
      walk.status = more.status();
      break;
    }
    if (!*more) break;
    ReadRecord& copy = walk.records.emplace_back();
    copy.offset = record.offset;
    copy.timestamp_ms = record.timestamp_ms;
    if (record.key) copy.key = std::string(*record.key);
    if (record.value) copy.value = std::string(*record.value);
    for (const KafkaHeader& header : record.headers) {
      copy.headers.push_back(
          {std::string(header.key), header.has_value
                                        ? std::optional<std::string>(std::string(header.value))
                                        : std::nullopt});
    }
  }
  walk.next_offset = reader.next_offset();
  return walk;
}

// ---- Compressors, as Kafka's clients use them. ----

std::string GzipCompress(const std::string& in) {
  z_stream stream{};
  // 15 + 16: a gzip header and trailer, as Kafka's Java producer writes.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("deflateInit2");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(in.size())) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  stream.avail_in = static_cast<uInt>(in.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate");
  return out;
}

std::string SnappyBlock(std::string_view in) {
  size_t size = snappy_max_compressed_length(in.size());
  std::string out(size, '\0');
  if (snappy_compress(in.data(), in.size(), out.data(), &size) != SNAPPY_OK) {
    throw std::runtime_error("snappy_compress");
  }
  out.resize(size);
  return out;
}

std::string XerialSnappy(const std::string& in) {
  std::string out("\x82SNAPPY\0", 8);
  PutBig<int32_t>(out, 1);
  PutBig<int32_t>(out, 1);
  const size_t half = in.size() / 2;
  for (std::string_view part :
       {std::string_view(in).substr(0, half), std::string_view(in).substr(half)}) {
    const std::string block = SnappyBlock(part);
    PutBig(out, static_cast<int32_t>(block.size()));
    out += block;
  }
  return out;
}

std::string Lz4Frame(const std::string& in) {
  std::string out(LZ4F_compressFrameBound(in.size(), nullptr), '\0');
  const size_t size = LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), nullptr);
  if (LZ4F_isError(size)) throw std::runtime_error("LZ4F_compressFrame");
  out.resize(size);
  return out;
}

std::string Zstd(const std::string& in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  const size_t size = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  if (ZSTD_isError(size)) throw std::runtime_error("ZSTD_compress");
  out.resize(size);
  return out;
}

std::string ZstdWithoutContentSize(const std::string& in) {
  ZSTD_CCtx* context = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 0);
  std::string out(ZSTD_compressBound(in.size()), '\0');
  const size_t size = ZSTD_compress2(context, out.data(), out.size(), in.data(), in.size());
  ZSTD_freeCCtx(context);
  if (ZSTD_isError(size)) throw std::runtime_error("ZSTD_compress2");
  if (ZSTD_getFrameContentSize(out.data(), size) != ZSTD_CONTENTSIZE_UNKNOWN) {
    throw std::runtime_error("content size still in the frame");
  }
  out.resize(size);
  return out;
}

}  // namespace sluice::brokerd::kafka
