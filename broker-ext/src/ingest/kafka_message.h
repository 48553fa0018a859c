// Owning handles and views of librdkafka messages shared by the ingest parts.
#pragma once

#include <librdkafka/rdkafka.h>

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

// A consumed message on its way into an object; `chunk` is its identity in CHUNK_STREAMS mode.
struct ReadyMessage {
  KafkaMessage message;
  std::optional<ChunkId> chunk;
};

// "topic [partition] at offset N", for errors about one record.
std::string Where(const rd_kafka_message_t* message);

inline std::string_view Bytes(const void* data, size_t length) {
  return data == nullptr ? std::string_view{}
                         : std::string_view(static_cast<const char*>(data), length);
}

// The message's headers in order; the views live as long as the message.
std::vector<KafkaHeader> HeadersOf(const rd_kafka_message_t* message);

}  // namespace sluice::brokerd
