// What the local-producer tests write as a producer: CHUNKS objects published into a producer
// segment of their own, as a SluiceSink's local channel does (docs/formats.md, "PRODUCE"). One
// helper for the unit tests of LocalProducer and the real daemon's, so that both write the
// objects the same way.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "sluice/batch_builder.h"
#include "sluice/segment_writer.h"
#include "sluice/status.h"

namespace sluice::brokerd {

// One row of a CHUNKS object.
struct ChunkRow {
  std::string job;
  std::string stream;
  uint64_t seq;
  bool eos;
  std::string payload;
};

// Publishes one CHUNKS object of `rows` in the writer's next free slot, waiting up to `timeout`
// for one.
inline Status PublishChunks(SegmentWriter& writer, const std::vector<ChunkRow>& rows,
                            std::chrono::nanoseconds timeout = std::chrono::seconds(10)) {
  ChunksBatchBuilder builder;
  for (const auto& row : rows) {
    builder.Add(Chunk{row.job, row.stream, row.seq, row.eos, row.payload});
  }
  SLUICE_ASSIGN_OR_RETURN(SlotBuffer slot, writer.Acquire(timeout));
  SLUICE_ASSIGN_OR_RETURN(EncodedObject encoded,
                          builder.Finish(slot.data, slot.capacity, slot.stores));
  return writer.Publish(encoded).status();
}

}  // namespace sluice::brokerd
