#include "ingest/message_source.h"

#include <array>
#include <string>

namespace sluice::brokerd {
namespace {

// Messages taken from the queue per call: enough to amortise its lock, few enough to bound what
// waits outside an object.
constexpr size_t kConsumeBatch = 256;

}  // namespace

Status QueueSource::Poll(std::chrono::milliseconds timeout, std::deque<ReadyMessage>& out) {
  std::array<rd_kafka_message_t*, kConsumeBatch> messages{};
  const ssize_t count = rd_kafka_consume_batch_queue(queue_, static_cast<int>(timeout.count()),
                                                     messages.data(), messages.size());
  Status failure = Status::OK();
  for (ssize_t i = 0; i < count; ++i) {
    KafkaMessage message(messages[static_cast<size_t>(i)]);
    if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++stats_.records;
      stats_.bytes += message->key_len + message->len;
      out.push_back({std::move(message), std::nullopt});
    } else if (message->err != RD_KAFKA_RESP_ERR__PARTITION_EOF && failure.ok()) {
      failure = Status(StatusCode::kIoError,
                       std::string("consumer: ") + rd_kafka_message_errstr(message.get()));
    }
  }
  return failure;
}

}  // namespace sluice::brokerd
