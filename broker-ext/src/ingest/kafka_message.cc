#include "ingest/kafka_message.h"

namespace sluice::brokerd {

std::string Where(const rd_kafka_message_t* message) {
  return std::string(rd_kafka_topic_name(message->rkt)) + " [" +
         std::to_string(message->partition) + "] at offset " + std::to_string(message->offset);
}

std::vector<KafkaHeader> HeadersOf(const rd_kafka_message_t* message) {
  std::vector<KafkaHeader> result;
  rd_kafka_headers_t* headers = nullptr;
  // rd_kafka_message_headers wants a non-const message but only reads it.
  if (rd_kafka_message_headers(const_cast<rd_kafka_message_t*>(message), &headers) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    return result;
  }
  const char* name = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  for (size_t i = 0;
       rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
       ++i) {
    result.push_back({name, Bytes(value, size), value != nullptr});
  }
  return result;
}

}  // namespace sluice::brokerd
