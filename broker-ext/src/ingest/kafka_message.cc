#include "ingest/kafka_message.h"

namespace sluice::brokerd {
namespace {

std::string_view Bytes(const void* data, size_t length) {
  return data == nullptr ? std::string_view{}
                         : std::string_view(static_cast<const char*>(data), length);
}

}  // namespace

ReadyMessage FromLibrdkafka(KafkaMessage message) {
  rd_kafka_message_t* m = message.get();
  ReadyMessage ready;
  ConsumedRecord& record = ready.record;
  record.topic = rd_kafka_topic_name(m->rkt);
  record.partition = m->partition;
  record.offset = m->offset;
  record.timestamp_ms = rd_kafka_message_timestamp(m, nullptr);
  if (m->key != nullptr) record.key = Bytes(m->key, m->key_len);
  if (m->payload != nullptr) record.value = Bytes(m->payload, m->len);
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* name = nullptr;
    const void* value = nullptr;
    size_t size = 0;
    for (size_t i = 0;
         rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
         ++i) {
      record.headers.push_back({name, Bytes(value, size), value != nullptr});
    }
  }
  ready.owner = std::shared_ptr<const void>(message.release(), [](const void* p) {
    rd_kafka_message_destroy(static_cast<rd_kafka_message_t*>(const_cast<void*>(p)));
  });
  return ready;
}

ReadyMessage CopyForRouting(const ReadyMessage& message) {
  ReadyMessage copy;
  copy.record = message.record;
  copy.owner = message.owner;
  if (message.chunk != nullptr) copy.chunk = std::make_unique<const ChunkId>(*message.chunk);
  copy.local_producer = message.local_producer;
  return copy;
}

std::string Where(const ConsumedRecord& record) {
  return std::string(record.topic) + " [" + std::to_string(record.partition) + "] at offset " +
         std::to_string(record.offset);
}

std::string Where(const ReadyMessage& message) {
  if (message.local_producer == 0) return Where(message.record);
  return "local producer " + std::to_string(message.local_producer) + " of " +
         std::string(message.record.topic);
}

}  // namespace sluice::brokerd
