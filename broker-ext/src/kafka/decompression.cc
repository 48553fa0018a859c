#include "kafka/decompression.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>

#include "kafka/wire_primitives.h"

namespace sluice::brokerd::kafka {
namespace {

// A batch that claims to decompress to more than this is taken as corrupt rather than
// allocated: brokers cap a fetch at tens of MiB, and good codecs compress records about 10x.
constexpr size_t kMaxDecompressed = size_t{256} << 20;

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

}  // namespace

Result<std::shared_ptr<const std::string>> Decompress(int codec, std::string_view compressed) {
  auto out = std::make_shared<std::string>();
  switch (codec) {
    case 1:
      SLUICE_RETURN_NOT_OK(Gunzip(compressed, *out));
      break;
    case 2:
      SLUICE_RETURN_NOT_OK(Unsnappy(compressed, *out));
      break;
    case 3:
      SLUICE_RETURN_NOT_OK(Unlz4(compressed, *out));
      break;
    case 4:
      SLUICE_RETURN_NOT_OK(Unzstd(compressed, *out));
      break;
    default:
      return Status::InvalidArgument("unknown compression codec " + std::to_string(codec));
  }
  return std::shared_ptr<const std::string>(std::move(out));
}

}  // namespace sluice::brokerd::kafka
