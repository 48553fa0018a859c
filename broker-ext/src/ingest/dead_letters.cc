#include "ingest/dead_letters.h"

#include <array>
#include <utility>

#include "daemon/log.h"
#include "ingest/kafka_message.h"

namespace sluice::brokerd {

Result<std::unique_ptr<DeadLetters>> DeadLetters::Create(const KafkaSettings& settings,
                                                         std::string topic) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::array<char, 512> error{};
  for (const auto& [key, value] : settings) {
    // Consumer-only settings are the consumer's; the producer takes the connection settings.
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error.data(), error.size()) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Status::InvalidArgument(key + ": " + error.data());
    }
  }
  rd_kafka_conf_set(conf, "enable.idempotence", "true", error.data(), error.size());
  rd_kafka_conf_set_dr_msg_cb(conf, &DeadLetters::OnDelivery);
  auto letters = std::unique_ptr<DeadLetters>(new DeadLetters(nullptr, std::move(topic)));
  rd_kafka_conf_set_opaque(conf, letters.get());
  letters->producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error.data(), error.size());
  if (letters->producer_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(std::string("dead-letter producer: ") + error.data());
  }
  return letters;
}

DeadLetters::DeadLetters(rd_kafka_t* producer, std::string topic)
    : producer_(producer), topic_(std::move(topic)) {}

DeadLetters::~DeadLetters() {
  if (producer_ == nullptr) return;
  Flush(std::chrono::milliseconds(5000));
  rd_kafka_destroy(producer_);
}

Status DeadLetters::Send(const ConsumedRecord& original, const std::string& error) {
  rd_kafka_headers_t* headers = rd_kafka_headers_new(8);
  for (const KafkaHeader& header : original.headers) {
    rd_kafka_header_add(headers, header.key.data(), static_cast<ssize_t>(header.key.size()),
                        header.has_value ? header.value.data() : nullptr,
                        static_cast<ssize_t>(header.value.size()));
  }
  const std::string origin = std::string(original.topic) + "/" +
                             std::to_string(original.partition) + "/" +
                             std::to_string(original.offset);
  rd_kafka_header_add(headers, kDeadLetterErrorHeader, -1, error.data(),
                      static_cast<ssize_t>(error.size()));
  rd_kafka_header_add(headers, kDeadLetterOriginHeader, -1, origin.data(),
                      static_cast<ssize_t>(origin.size()));
  auto* range = new OffsetRange{original.partition, original.offset, original.offset};
  // librdkafka takes a null pointer for a null key or value.
  auto pointer = [](const std::optional<std::string_view>& bytes) {
    return bytes ? const_cast<char*>(bytes->data()) : nullptr;
  };
  const rd_kafka_resp_err_t err = rd_kafka_producev(
      producer_, RD_KAFKA_V_TOPIC(topic_.c_str()),
      RD_KAFKA_V_KEY(pointer(original.key), original.key_size()),
      RD_KAFKA_V_VALUE(pointer(original.value), original.value_size()), RD_KAFKA_V_HEADERS(headers),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(range), RD_KAFKA_V_END);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // On failure the headers and the opaque are still ours.
    rd_kafka_headers_destroy(headers);
    delete range;
    return Status(StatusCode::kIoError,
                  "dead letter to " + topic_ + ": " + std::string(rd_kafka_err2str(err)));
  }
  return Status::OK();
}

void DeadLetters::OnDelivery(rd_kafka_t* /*producer*/, const rd_kafka_message_t* message,
                             void* opaque) {
  auto* letters = static_cast<DeadLetters*>(opaque);
  std::unique_ptr<OffsetRange> range(static_cast<OffsetRange*>(message->_private));
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Log(LogLevel::kError, "dead_letter_failed",
        {{"topic", letters->topic_},
         {"origin_partition", std::to_string(range->partition)},
         {"origin_offset", std::to_string(range->first_offset)},
         {"error", rd_kafka_err2str(message->err)}});
    return;
  }
  std::lock_guard lock(letters->mutex_);
  letters->delivered_.push_back(*range);
}

std::vector<OffsetRange> DeadLetters::Delivered() {
  rd_kafka_poll(producer_, 0);
  std::lock_guard lock(mutex_);
  return std::exchange(delivered_, {});
}

void DeadLetters::Flush(std::chrono::milliseconds timeout) {
  rd_kafka_flush(producer_, static_cast<int>(timeout.count()));
}

}  // namespace sluice::brokerd
