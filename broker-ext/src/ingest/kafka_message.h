// A consumed record on its way into an object, whichever path fetched it: librdkafka's consumer
// (one message each) or the native fetch path (views into a fetch response).
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordering/chunk_headers.h"

namespace sluice::brokerd {

struct MessageDeleter {
  void operator()(rd_kafka_message_t* message) const { rd_kafka_message_destroy(message); }
};
using KafkaMessage = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;

// A record's fields, viewing bytes that the ReadyMessage's `owner` keeps alive.
struct ConsumedRecord {
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = 0;
  std::optional<std::string_view> key;    // nullopt: a null key
  std::optional<std::string_view> value;  // nullopt: a null value
  std::vector<KafkaHeader> headers;

  size_t value_size() const { return value ? value->size() : 0; }
  size_t key_size() const { return key ? key->size() : 0; }
};

// `chunk` is the record's identity in CHUNK_STREAMS mode; on the heap, so that views of its
// strings stay valid while ready messages move between vectors. `local_producer` is the id of
// the local producer whose segment holds the chunk, 0 for a record fetched from Kafka; a local
// chunk has partition -1, offset -1 and no headers (docs/brokerd.md, "Local producers").
struct ReadyMessage {
  ConsumedRecord record;
  std::shared_ptr<const void> owner;
  std::unique_ptr<const ChunkId> chunk;
  uint64_t local_producer = 0;
};

// A second ReadyMessage of the same record, for routing one local chunk to several
// subscriptions: the views and the owner are shared (the bytes stay alive until the last copy is
// gone), the chunk id is cloned (each subscription's sequencer owns its own).
ReadyMessage CopyForRouting(const ReadyMessage& message);

// Takes over a message of librdkafka's consumer (error-free).
ReadyMessage FromLibrdkafka(KafkaMessage message);

// "topic [partition] at offset N", for errors about one record.
std::string Where(const ConsumedRecord& record);
// The same for a record, or "local producer N of topic" for a local chunk, which has no offset.
std::string Where(const ReadyMessage& message);

}  // namespace sluice::brokerd
