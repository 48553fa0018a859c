#include "kafka/fetch_protocol.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

namespace sluice::brokerd::kafka {
namespace {

// Record batch layout (magic 2): the offsets of the header fields the reader needs.
constexpr size_t kLengthEnd = 12;  // baseOffset and batchLength: what batchLength does not count
constexpr size_t kMagicAt = 16;
constexpr size_t kAttributesAt = 21;
constexpr size_t kLastOffsetDeltaAt = 23;
constexpr size_t kBaseTimestampAt = 27;
constexpr size_t kMaxTimestampAt = 35;
constexpr size_t kProducerIdAt = 43;
constexpr size_t kRecordCountAt = 57;
constexpr size_t kRecordsAt = 61;

constexpr int16_t kCompressionMask = 0x07;
constexpr int16_t kLogAppendTimeBit = 0x08;
constexpr int16_t kTransactionalBit = 0x10;
constexpr int16_t kControlBit = 0x20;
constexpr int16_t kAbortMarker = 0;  // the type of a control record's key; 1 is COMMIT

// A batch that claims to decompress to more than this is taken as corrupt rather than
// allocated: brokers cap a fetch at tens of MiB, and good codecs compress records about 10x.
constexpr size_t kMaxDecompressed = size_t{256} << 20;

inline uint16_t ByteSwap(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t ByteSwap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t ByteSwap(uint64_t v) { return __builtin_bswap64(v); }

template <typename T>
inline T Load(const char* p) {
  using U = std::make_unsigned_t<T>;
  U v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::little && sizeof(U) > 1) v = ByteSwap(v);
  return static_cast<T>(v);
}

template <typename T>
inline void Store(char* p, T value) {
  auto v = static_cast<std::make_unsigned_t<T>>(value);
  if constexpr (std::endian::native == std::endian::little && sizeof(v) > 1) v = ByteSwap(v);
  std::memcpy(p, &v, sizeof v);
}

template <typename T>
inline void Append(std::string& out, T value) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  Store(out.data() + at, value);
}

// Kafka bounds the names it accepts far below int16's range (topics at 249 bytes); clamping
// keeps an oversized one from corrupting the rest of the frame.
void AppendString(std::string& out, std::string_view text) {
  text = text.substr(0, std::numeric_limits<int16_t>::max());
  Append(out, static_cast<int16_t>(text.size()));
  out.append(text);
}

// Offsets and timestamps come off the wire unchecked: wrap like Java's longs instead of
// overflowing into undefined behaviour.
inline int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// Reads a protobuf-style varint of at most kMaxBytes bytes (5 for Kafka's varint, 10 for its
// varlong); null when it runs past `end` or is longer.
template <int kMaxBytes>
[[gnu::always_inline]] inline const char* ReadRawVarint(const char* p, const char* end,
                                                        uint64_t& out) {
  // Most of a record's varints, its deltas and short lengths, fit one byte: skip the loop.
  if (p < end && static_cast<uint8_t>(*p) < 0x80) [[likely]] {
    out = static_cast<uint8_t>(*p);
    return p + 1;
  }
  uint64_t value = 0;
  for (int i = 0; i < kMaxBytes; ++i, ++p) {
    if (p == end) return nullptr;
    const uint64_t byte = static_cast<uint8_t>(*p);
    value |= (byte & 0x7F) << (7 * i);
    if (byte < 0x80) {
      out = value;
      return p + 1;
    }
  }
  return nullptr;
}

// Java's readVarint keeps the low 32 bits of a 5-byte varint; so does this.
inline int32_t ZigZag32(uint64_t raw) {
  const auto v = static_cast<uint32_t>(raw);
  return static_cast<int32_t>((v >> 1) ^ (0u - (v & 1u)));
}

inline int64_t ZigZag64(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (0 - (v & 1))); }

// A varint length and that many bytes; -1 is null. Null when either runs past `end`.
[[gnu::always_inline]] inline const char* ReadNullableBytes(const char* p, const char* end,
                                                            std::optional<std::string_view>& out) {
  uint64_t raw = 0;
  p = ReadRawVarint<5>(p, end, raw);
  if (p == nullptr) return nullptr;
  const int32_t length = ZigZag32(raw);
  if (length == -1) {
    out.reset();
    return p;
  }
  if (length < 0 || length > end - p) return nullptr;
  out.emplace(p, static_cast<size_t>(length));
  return p + length;
}

// Decodes the record at `p` into `record`, all but its offset and timestamp, which take the
// batch's base values; returns where the record ends, or null with `problem` saying what broke.
[[gnu::always_inline]] inline const char* DecodeRecord(const char* p, const char* end,
                                                       FetchedRecord& record,
                                                       int64_t& timestamp_delta,
                                                       int32_t& offset_delta,
                                                       const char*& problem) {
  uint64_t raw = 0;
  p = ReadRawVarint<5>(p, end, raw);
  if (p == nullptr) {
    problem = "a record's length varint runs past the batch";
    return nullptr;
  }
  const int32_t length = ZigZag32(raw);
  if (length < 0 || length > end - p) {
    problem = "a record's length runs past the batch";
    return nullptr;
  }
  end = p + length;
  if (p == end) {
    problem = "a record is empty";
    return nullptr;
  }
  ++p;  // attributes: Kafka defines none for records
  p = ReadRawVarint<10>(p, end, raw);
  if (p == nullptr) {
    problem = "a record's timestamp delta runs past the record";
    return nullptr;
  }
  timestamp_delta = ZigZag64(raw);
  p = ReadRawVarint<5>(p, end, raw);
  if (p == nullptr) {
    problem = "a record's offset delta runs past the record";
    return nullptr;
  }
  offset_delta = ZigZag32(raw);
  p = ReadNullableBytes(p, end, record.key);
  if (p == nullptr) {
    problem = "a record's key length is below -1 or runs past the record";
    return nullptr;
  }
  p = ReadNullableBytes(p, end, record.value);
  if (p == nullptr) {
    problem = "a record's value length is below -1 or runs past the record";
    return nullptr;
  }
  p = ReadRawVarint<5>(p, end, raw);
  const int32_t header_count = ZigZag32(raw);
  // A header takes two bytes at least: a count beyond that fails before it sizes the vector.
  if (p == nullptr || header_count < 0 || header_count > (end - p) / 2) {
    problem = "a record's header count is negative or runs past the record";
    return nullptr;
  }
  // Filled in place: resize is free when the last record had as many headers, the common case,
  // and never gives capacity back.
  record.headers.resize(static_cast<size_t>(header_count));
  for (KafkaHeader& header : record.headers) {
    p = ReadRawVarint<5>(p, end, raw);
    const int32_t key_length = ZigZag32(raw);
    if (p == nullptr || key_length < 0 || key_length > end - p) {
      problem = "a record header's key is null, negative or runs past the record";
      return nullptr;
    }
    header.key = std::string_view(p, static_cast<size_t>(key_length));
    p += key_length;
    p = ReadRawVarint<5>(p, end, raw);
    const int32_t value_length = ZigZag32(raw);
    if (p == nullptr || value_length < -1 || value_length > end - p) {
      problem = "a record header's value length is below -1 or runs past the record";
      return nullptr;
    }
    header.has_value = value_length >= 0;
    header.value = std::string_view(p, header.has_value ? static_cast<size_t>(value_length) : 0);
    p += header.value.size();
  }
  if (p != end) {
    problem = "a record has bytes after its headers";
    return nullptr;
  }
  return p;
}

// Where a batch starts in a fetch's records, and whether it is all there.
enum class Framing { kComplete, kCutShort, kBadLength, kBadMagic };

// Frames the batch at the start of `bytes`, setting `size` to its bytes when complete. The magic
// is checked as soon as its byte is there, cut short or not: a cut-short batch of another magic is
// garbage, not a batch the next fetch can resume at.
Framing FrameBatch(std::string_view bytes, size_t& size) {
  if (bytes.size() < kLengthEnd) return Framing::kCutShort;
  const int32_t length = Load<int32_t>(bytes.data() + 8);
  if (length < static_cast<int32_t>(kRecordsAt - kLengthEnd)) return Framing::kBadLength;
  if (bytes.size() > kMagicAt && bytes[kMagicAt] != 2) return Framing::kBadMagic;
  if (bytes.size() - kLengthEnd < static_cast<size_t>(length)) return Framing::kCutShort;
  size = kLengthEnd + static_cast<size_t>(length);
  return Framing::kComplete;
}

// One past the last offset of the complete batch at `batch`.
int64_t BatchEnd(const char* batch) {
  return WrappingAdd(Load<int64_t>(batch), int64_t{Load<int32_t>(batch + kLastOffsetDeltaAt)} + 1);
}

// The first output buffer of a codec that does not say how much it will produce.
size_t InitialOutputSize(size_t compressed) {
  return std::clamp(compressed * 4, size_t{64} << 10, kMaxDecompressed);
}

// Doubles `out`, up to the bound; false once there.
bool Grow(std::string& out) {
  if (out.size() >= kMaxDecompressed) return false;
  out.resize(std::min(kMaxDecompressed, out.size() * 2));
  return true;
}

Status TooLarge() {
  return Status::InvalidArgument("records decompress to more than " +
                                 std::to_string(kMaxDecompressed) + " bytes");
}

Status Gunzip(std::string_view in, std::string& out) {
  z_stream stream{};
  // 15 + 32: the largest window, and a gzip or zlib header detected from the data.
  if (inflateInit2(&stream, 15 + 32) != Z_OK) return Status::InvalidArgument("gzip: no memory");
  struct End {
    z_stream* stream;
    ~End() { inflateEnd(stream); }
  } end{&stream};
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  stream.avail_in = static_cast<uInt>(in.size());  // a batch is below 2 GiB
  out.resize(InitialOutputSize(in.size()));
  size_t produced = 0;
  for (;;) {
    if (produced == out.size() && !Grow(out)) return TooLarge();
    const auto room = static_cast<uInt>(out.size() - produced);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    stream.avail_out = room;
    const int rc = inflate(&stream, Z_NO_FLUSH);
    produced += room - stream.avail_out;
    if (rc == Z_STREAM_END) break;
    // Z_BUF_ERROR is no progress: fine when the output was full, the end when the input is out.
    if (rc == Z_BUF_ERROR && stream.avail_out == 0) continue;
    if (rc != Z_OK) {
      return Status::InvalidArgument(std::string("gzip: ") +
                                     (stream.msg != nullptr ? stream.msg : "truncated data"));
    }
  }
  out.resize(produced);
  return Status::OK();
}

Status AppendSnappyBlock(std::string_view in, std::string& out) {
  size_t size = 0;
  if (snappy_uncompressed_length(in.data(), in.size(), &size) != SNAPPY_OK) {
    return Status::InvalidArgument("snappy: invalid block length");
  }
  if (size > kMaxDecompressed - out.size()) return TooLarge();
  const size_t old = out.size();
  out.resize(old + size);
  if (snappy_uncompress(in.data(), in.size(), out.data() + old, &size) != SNAPPY_OK) {
    return Status::InvalidArgument("snappy: invalid data");
  }
  return Status::OK();
}

// Kafka's Java producer writes snappy in xerial's framing (a magic, two versions, then blocks
// each behind its int32 length); librdkafka writes a bare snappy block. Both reach brokers.
Status Unsnappy(std::string_view in, std::string& out) {
  constexpr std::string_view kXerialMagic("\x82SNAPPY\0", 8);
  constexpr size_t kXerialHeader = 16;
  if (in.size() < kXerialHeader || in.substr(0, kXerialMagic.size()) != kXerialMagic) {
    return AppendSnappyBlock(in, out);
  }
  in.remove_prefix(kXerialHeader);
  while (!in.empty()) {
    if (in.size() < 4) return Status::InvalidArgument("snappy: xerial block length cut short");
    const int32_t length = Load<int32_t>(in.data());
    in.remove_prefix(4);
    if (length < 0 || static_cast<size_t>(length) > in.size()) {
      return Status::InvalidArgument("snappy: xerial block length " + std::to_string(length) +
                                     " runs past the " + std::to_string(in.size()) + " bytes left");
    }
    SLUICE_RETURN_NOT_OK(AppendSnappyBlock(in.substr(0, static_cast<size_t>(length)), out));
    in.remove_prefix(static_cast<size_t>(length));
  }
  return Status::OK();
}

// One decompression context per thread: creating one allocates its window and tables, a cost
// per batch otherwise.
LZ4F_dctx* ThreadLz4Context() {
  struct Context {
    LZ4F_dctx* dctx = nullptr;
    Context() {
      if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) dctx = nullptr;
    }
    ~Context() { LZ4F_freeDecompressionContext(dctx); }
  };
  thread_local Context context;
  return context.dctx;
}

ZSTD_DCtx* ThreadZstdContext() {
  thread_local std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> context(ZSTD_createDCtx(),
                                                                            &ZSTD_freeDCtx);
  return context.get();
}

// Kafka writes one LZ4 frame per batch (lz4frame.h's format); bytes after it are ignored, as
// Java's and librdkafka's readers do.
Status Unlz4(std::string_view in, std::string& out) {
  LZ4F_dctx* context = ThreadLz4Context();
  if (context == nullptr) return Status::InvalidArgument("lz4: no memory");
  // A batch that failed before left the context inside its frame.
  LZ4F_resetDecompressionContext(context);
  out.resize(InitialOutputSize(in.size()));
  size_t produced = 0;
  for (;;) {
    if (produced == out.size() && !Grow(out)) return TooLarge();
    size_t written = out.size() - produced;
    size_t read = in.size();
    const size_t hint =
        LZ4F_decompress(context, out.data() + produced, &written, in.data(), &read, nullptr);
    if (LZ4F_isError(hint))
      return Status::InvalidArgument(std::string("lz4: ") + LZ4F_getErrorName(hint));
    produced += written;
    in.remove_prefix(read);
    if (hint == 0) break;
    if (read == 0 && written == 0) return Status::InvalidArgument("lz4: truncated frame");
  }
  out.resize(produced);
  return Status::OK();
}

// zstd may leave the content size out of a frame's header (streaming compressors do), and a
// batch may hold several frames: decompress as a stream.
Status Unzstd(std::string_view in, std::string& out) {
  ZSTD_DCtx* context = ThreadZstdContext();
  if (context == nullptr) return Status::InvalidArgument("zstd: no memory");
  ZSTD_DCtx_reset(context, ZSTD_reset_session_only);
  // The header's content size sizes the first buffer, up to a cap: a corrupt one must not
  // allocate hundreds of MiB before the data proves it wrong.
  constexpr unsigned long long kMaxTrusted = 16 << 20;
  const unsigned long long content = ZSTD_getFrameContentSize(in.data(), in.size());
  out.resize(content > 0 && content <= kMaxTrusted ? static_cast<size_t>(content)
                                                   : InitialOutputSize(in.size()));
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  size_t produced = 0;
  for (;;) {
    if (produced == out.size() && !Grow(out)) return TooLarge();
    ZSTD_outBuffer output{out.data(), out.size(), produced};
    const size_t read_before = input.pos;
    const size_t hint = ZSTD_decompressStream(context, &output, &input);
    if (ZSTD_isError(hint))
      return Status::InvalidArgument(std::string("zstd: ") + ZSTD_getErrorName(hint));
    const bool progressed = output.pos != produced || input.pos != read_before;
    produced = output.pos;
    if (hint == 0 && input.pos == input.size) break;
    if (!progressed) return Status::InvalidArgument("zstd: truncated frame");
  }
  out.resize(produced);
  return Status::OK();
}

Result<std::shared_ptr<const std::string>> Decompress(int codec, std::string_view in) {
  auto out = std::make_shared<std::string>();
  switch (codec) {
    case 1:
      SLUICE_RETURN_NOT_OK(Gunzip(in, *out));
      break;
    case 2:
      SLUICE_RETURN_NOT_OK(Unsnappy(in, *out));
      break;
    case 3:
      SLUICE_RETURN_NOT_OK(Unlz4(in, *out));
      break;
    case 4:
      SLUICE_RETURN_NOT_OK(Unzstd(in, *out));
      break;
    default:
      return Status::InvalidArgument("unknown compression codec " + std::to_string(codec));
  }
  return std::shared_ptr<const std::string>(std::move(out));
}

// Whether a control batch's first record is an ABORT marker; its key is int16 version, int16
// type.
Result<bool> IsAbortMarker(std::string_view records, int codec, int32_t record_count) {
  if (record_count == 0) return false;
  std::shared_ptr<const std::string> plain;
  if (codec != 0) {
    SLUICE_ASSIGN_OR_RETURN(plain, Decompress(codec, records));
    records = *plain;
  }
  FetchedRecord marker;
  int64_t timestamp_delta = 0;
  int32_t offset_delta = 0;
  const char* problem = nullptr;
  if (DecodeRecord(records.data(), records.data() + records.size(), marker, timestamp_delta,
                   offset_delta, problem) == nullptr) {
    return Status::InvalidArgument(problem);
  }
  if (!marker.key || marker.key->size() < 4) {
    return Status::InvalidArgument("a control record's key is shorter than 4 bytes");
  }
  return Load<int16_t>(marker.key->data() + 2) == kAbortMarker;
}

// Reads Fetch response fields, naming the field it stops at.
class FrameReader {
 public:
  explicit FrameReader(std::string_view frame) : rest_(frame) {}

  size_t remaining() const { return rest_.size(); }

  template <typename T>
  Status Read(std::string_view field, T& out) {
    SLUICE_RETURN_NOT_OK(Need(field, sizeof(T)));
    out = Load<T>(rest_.data());
    rest_.remove_prefix(sizeof(T));
    return Status::OK();
  }

  Status Skip(std::string_view field, size_t size) {
    SLUICE_RETURN_NOT_OK(Need(field, size));
    rest_.remove_prefix(size);
    return Status::OK();
  }

  Status String(std::string_view field, std::string_view& out) {
    int16_t length = 0;
    SLUICE_RETURN_NOT_OK(Read(field, length));
    if (length < 0) return Negative(field, length);
    return Take(field, static_cast<size_t>(length), out);
  }

  // An array's count; -1 (null) reads as 0 where `nullable`. Each entry takes at least
  // `min_entry_size` bytes, so a count the frame cannot hold fails here, before anything is
  // reserved for it.
  Status Count(std::string_view field, size_t min_entry_size, bool nullable, int32_t& out) {
    SLUICE_RETURN_NOT_OK(Read(field, out));
    if (nullable && out == -1) {
      out = 0;
      return Status::OK();
    }
    if (out < 0) return Negative(field, out);
    if (static_cast<size_t>(out) > rest_.size() / min_entry_size) {
      return Status::InvalidArgument("fetch response: " + std::string(field) + " count " +
                                     std::to_string(out) + " does not fit in the " +
                                     std::to_string(rest_.size()) + " bytes left");
    }
    return Status::OK();
  }

  // Nullable BYTES; null reads as empty.
  Status NullableBytes(std::string_view field, std::string_view& out) {
    int32_t length = 0;
    SLUICE_RETURN_NOT_OK(Read(field, length));
    if (length == -1) {
      out = {};
      return Status::OK();
    }
    if (length < 0) return Negative(field, length);
    return Take(field, static_cast<size_t>(length), out);
  }

 private:
  Status Need(std::string_view field, size_t size) const {
    if (size <= rest_.size()) return Status::OK();
    return Status::InvalidArgument("fetch response: " + std::string(field) + " needs " +
                                   std::to_string(size) + " bytes, the frame has " +
                                   std::to_string(rest_.size()) + " left");
  }

  Status Take(std::string_view field, size_t size, std::string_view& out) {
    SLUICE_RETURN_NOT_OK(Need(field, size));
    out = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return Status::OK();
  }

  static Status Negative(std::string_view field, int64_t value) {
    return Status::InvalidArgument("fetch response: " + std::string(field) + " length " +
                                   std::to_string(value) + " is negative");
  }

  std::string_view rest_;
};

}  // namespace

std::string EncodeFetchRequest(const FetchRequest& request) {
  std::string out;
  out.reserve(64 + request.client_id.size() + request.topic.size() +
              28 * request.partitions.size());
  Append<int32_t>(out, 0);  // the size, known at the end
  Append(out, kFetchApiKey);
  Append(out, kFetchVersion);
  Append(out, request.correlation_id);
  AppendString(out, request.client_id);
  Append<int32_t>(out, -1);  // replica id: a consumer
  Append(out, request.max_wait_ms);
  Append(out, request.min_bytes);
  Append(out, request.max_bytes);
  Append<int8_t>(out, request.read_committed ? 1 : 0);
  Append<int32_t>(out, 0);   // session id
  Append<int32_t>(out, -1);  // session epoch
  Append<int32_t>(out, 1);   // topics
  AppendString(out, request.topic);
  Append(out, static_cast<int32_t>(request.partitions.size()));
  for (const FetchPartition& partition : request.partitions) {
    Append(out, partition.partition);
    Append<int32_t>(out, -1);  // current leader epoch
    Append(out, partition.fetch_offset);
    Append<int64_t>(out, -1);  // log start offset
    Append(out, partition.max_bytes);
  }
  Append<int32_t>(out, 0);  // forgotten topics
  AppendString(out, "");    // rack id
  Store(out.data(), static_cast<int32_t>(out.size() - 4));
  return out;
}

Result<FetchResponse> DecodeFetchResponse(std::string_view frame) {
  // The fewest bytes an entry of each array takes: a topic's name length and partition count;
  // a partition's fixed fields with null aborted transactions and records; an aborted
  // transaction's two int64s.
  constexpr size_t kMinTopic = 2 + 4;
  constexpr size_t kMinPartition = 4 + 2 + 8 + 8 + 8 + 4 + 4 + 4;
  constexpr size_t kMinAborted = 8 + 8;

  FrameReader in(frame);
  FetchResponse response;
  SLUICE_RETURN_NOT_OK(in.Read("correlation_id", response.correlation_id));
  SLUICE_RETURN_NOT_OK(in.Read("throttle_time_ms", response.throttle_time_ms));
  SLUICE_RETURN_NOT_OK(in.Read("error_code", response.error_code));
  SLUICE_RETURN_NOT_OK(in.Skip("session_id", 4));
  int32_t topic_count = 0;
  SLUICE_RETURN_NOT_OK(in.Count("responses", kMinTopic, false, topic_count));
  for (int32_t t = 0; t < topic_count; ++t) {
    std::string_view topic;
    SLUICE_RETURN_NOT_OK(in.String("topic", topic));
    int32_t partition_count = 0;
    SLUICE_RETURN_NOT_OK(in.Count("partitions", kMinPartition, false, partition_count));
    for (int32_t p = 0; p < partition_count; ++p) {
      FetchedPartition& partition = response.partitions.emplace_back();
      response.topics.push_back(topic);
      SLUICE_RETURN_NOT_OK(in.Read("partition_index", partition.partition));
      SLUICE_RETURN_NOT_OK(in.Read("partition error_code", partition.error_code));
      SLUICE_RETURN_NOT_OK(in.Read("high_watermark", partition.high_watermark));
      SLUICE_RETURN_NOT_OK(in.Read("last_stable_offset", partition.last_stable_offset));
      SLUICE_RETURN_NOT_OK(in.Read("log_start_offset", partition.log_start_offset));
      int32_t aborted_count = 0;
      SLUICE_RETURN_NOT_OK(in.Count("aborted_transactions", kMinAborted, true, aborted_count));
      partition.aborted.resize(static_cast<size_t>(aborted_count));
      for (AbortedTransaction& aborted : partition.aborted) {
        SLUICE_RETURN_NOT_OK(in.Read("producer_id", aborted.producer_id));
        SLUICE_RETURN_NOT_OK(in.Read("first_offset", aborted.first_offset));
      }
      // The broker lists aborted transactions in the order they ended (its transaction index's
      // order), which is not the order they began when two overlap.
      std::stable_sort(partition.aborted.begin(), partition.aborted.end(),
                       [](const AbortedTransaction& a, const AbortedTransaction& b) {
                         return a.first_offset < b.first_offset;
                       });
      SLUICE_RETURN_NOT_OK(in.Skip("preferred_read_replica", 4));
      SLUICE_RETURN_NOT_OK(in.NullableBytes("records", partition.records));
    }
  }
  if (in.remaining() != 0) {
    return Status::InvalidArgument("fetch response: " + std::to_string(in.remaining()) +
                                   " bytes after the last field");
  }
  return response;
}

RecordBatchReader::RecordBatchReader(std::string_view batches,
                                     std::span<const AbortedTransaction> aborted,
                                     int64_t from_offset)
    : rest_(batches), aborted_(aborted), from_offset_(from_offset), next_offset_(from_offset) {}

Status RecordBatchReader::Stop(std::string_view problem) {
  rest_ = {};
  records_ = {};
  records_left_ = 0;
  return Status::InvalidArgument("record batch at offset " + std::to_string(base_offset_) + ": " +
                                 std::string(problem));
}

Result<bool> RecordBatchReader::NextBatch() {
  for (;;) {
    size_t size = 0;
    const Framing framing = FrameBatch(rest_, size);
    if (framing == Framing::kCutShort) {
      rest_ = {};
      return false;
    }
    const char* const batch = rest_.data();
    base_offset_ = Load<int64_t>(batch);
    if (framing == Framing::kBadLength) {
      return Stop("batch length " + std::to_string(Load<int32_t>(batch + 8)) +
                  " is shorter than a batch header");
    }
    if (framing == Framing::kBadMagic) {
      return Stop("magic " + std::to_string(static_cast<int8_t>(batch[kMagicAt])) +
                  ", only 2 is supported");
    }
    const auto attributes = Load<int16_t>(batch + kAttributesAt);
    const int64_t end = BatchEnd(batch);
    const auto producer_id = Load<int64_t>(batch + kProducerIdAt);
    const auto record_count = Load<int32_t>(batch + kRecordCountAt);
    const std::string_view records = rest_.substr(kRecordsAt, size - kRecordsAt);
    const int codec = attributes & kCompressionMask;
    rest_.remove_prefix(size);
    if (record_count < 0)
      return Stop("record count " + std::to_string(record_count) + " is negative");

    // Read committed, as Java's consumer does it: an aborted transaction is in play from its
    // first offset on, until its producer's ABORT marker. Taking them in at every batch, control
    // batches included, keeps one whose data came before this fetch from outliving its marker
    // and hiding that producer's next transaction.
    while (next_aborted_ < aborted_.size() &&
           aborted_[next_aborted_].first_offset <= WrappingAdd(end, -1)) {
      const int64_t id = aborted_[next_aborted_++].producer_id;
      if (std::find(aborting_.begin(), aborting_.end(), id) == aborting_.end()) {
        aborting_.push_back(id);
      }
    }
    const bool transactional = (attributes & kTransactionalBit) != 0;
    const auto aborting = std::find(aborting_.begin(), aborting_.end(), producer_id);
    const bool aborted = transactional && aborting != aborting_.end();
    bool skip = aborted || WrappingAdd(end, -1) < from_offset_ || record_count == 0;
    if ((attributes & kControlBit) != 0) {
      skip = true;
      if (aborted) {
        Result<bool> abort = IsAbortMarker(records, codec, record_count);
        if (!abort.ok()) return Stop(abort.status().message());
        if (*abort) aborting_.erase(aborting);
      }
    }
    if (skip) {
      next_offset_ = std::max(next_offset_, end);
      continue;
    }

    if (codec == 0) {
      decompressed_.reset();
      records_ = records;
    } else {
      Result<std::shared_ptr<const std::string>> plain = Decompress(codec, records);
      if (!plain.ok()) return Stop(plain.status().message());
      decompressed_ = plain.MoveValue();
      records_ = *decompressed_;
    }
    records_left_ = record_count;
    batch_end_ = end;
    log_append_time_ = (attributes & kLogAppendTimeBit) != 0;
    base_timestamp_ = Load<int64_t>(batch + kBaseTimestampAt);
    max_timestamp_ = Load<int64_t>(batch + kMaxTimestampAt);
    return true;
  }
}

Result<bool> RecordBatchReader::Next(FetchedRecord& record) {
  for (;;) {
    if (records_left_ == 0) {
      SLUICE_ASSIGN_OR_RETURN(const bool entered, NextBatch());
      if (!entered) return false;
      continue;
    }
    if (records_.empty()) [[unlikely]] {
      return Stop("its records end " + std::to_string(records_left_) + " records early");
    }
    int64_t timestamp_delta = 0;
    int32_t offset_delta = 0;
    const char* problem = nullptr;
    const char* const next = DecodeRecord(records_.data(), records_.data() + records_.size(),
                                          record, timestamp_delta, offset_delta, problem);
    if (next == nullptr) [[unlikely]] {
      return Stop(problem);
    }
    records_.remove_prefix(static_cast<size_t>(next - records_.data()));
    record.offset = WrappingAdd(base_offset_, offset_delta);
    if (--records_left_ == 0) {
      if (!records_.empty()) [[unlikely]] {
        return Stop(std::to_string(records_.size()) + " bytes after its last record");
      }
      next_offset_ = std::max(next_offset_, batch_end_);
    }
    if (record.offset < from_offset_) continue;
    record.timestamp_ms =
        log_append_time_ ? max_timestamp_ : WrappingAdd(base_timestamp_, timestamp_delta);
    return true;
  }
}

int64_t NextFetchOffset(std::string_view batches, int64_t from_offset) {
  int64_t next = from_offset;
  size_t size = 0;
  while (FrameBatch(batches, size) == Framing::kComplete) {
    next = std::max(next, BatchEnd(batches.data()));
    batches.remove_prefix(size);
  }
  return next;
}

}  // namespace sluice::brokerd::kafka
