// Where a pump's messages come from, in the order they go into objects: straight from the
// subscription's queue (RECORDS), or through the chunk sequencer (CHUNK_STREAMS).
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "ingest/kafka_message.h"
#include "sluice/status.h"

namespace sluice::brokerd {

struct SourceStats {
  uint64_t records = 0;  // consumed from librdkafka
  uint64_t bytes = 0;    // their keys and values
};

class MessageSource {
 public:
  virtual ~MessageSource() = default;
  // Appends the messages ready to go into objects to `out`, waiting up to `timeout` for some.
  virtual Status Poll(std::chrono::milliseconds timeout, std::vector<ReadyMessage>& out) = 0;
  virtual const SourceStats& stats() const = 0;
  // Whether the ready messages are already in the commit tracker, one range each.
  virtual bool takes_offsets() const = 0;
};

// The subscription's queue, which librdkafka forwards its partitions' messages to.
class QueueSource final : public MessageSource {
 public:
  explicit QueueSource(rd_kafka_queue_t* queue) : queue_(queue) {}
  Status Poll(std::chrono::milliseconds timeout, std::vector<ReadyMessage>& out) override;
  const SourceStats& stats() const override { return stats_; }
  bool takes_offsets() const override { return false; }

 private:
  rd_kafka_queue_t* queue_;
  SourceStats stats_;
};

}  // namespace sluice::brokerd
