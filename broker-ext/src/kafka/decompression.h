// Decompression of the record batches Kafka compresses: the codec in the low three bits of a
// batch's attributes, 1 gzip, 2 snappy (a bare block, or Java's xerial framing), 3 lz4 (one LZ4
// frame), 4 zstd (one or more frames, with or without their content size).
//
// Why a file of its own: each codec has its library, its framing and its way of (not) saying how
// much it will produce, and the record-batch walk (kafka/record_batch_reader.h) needs none of
// that, only the records' bytes (docs/brokerd.md, "Native fetch path").
//
// The input is the caller's; the output is a buffer of its own, shared so that the records
// viewed in it stay valid as long as someone holds it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "sluice/status.h"

namespace sluice::brokerd::kafka {

// The records of a batch compressed with `codec`. Output beyond 256 MiB is taken as corrupt
// rather than allocated. An unknown codec, data the codec rejects, or data that ends early is
// kInvalidArgument naming the codec.
Result<std::shared_ptr<const std::string>> Decompress(int codec, std::string_view compressed);

}  // namespace sluice::brokerd::kafka
