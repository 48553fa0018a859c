#include "ingest/message_source.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace sluice::brokerd {
namespace {

// Messages taken from the queue per call: enough to amortise its lock, few enough to bound what
// waits outside an object.
constexpr size_t kConsumeBatch = 256;

}  // namespace

Status QueueSource::Poll(std::chrono::milliseconds timeout, std::vector<ReadyMessage>& out) {
  std::array<rd_kafka_message_t*, kConsumeBatch> messages{};
  // The batch call waits until its whole batch is there or the timeout passes, even with
  // messages at hand: a stream of large chunks, which never fills a batch, would wait out every
  // timeout. So wait for one message alone, then take what else is queued without waiting.
  messages[0] = rd_kafka_consume_queue(queue_, static_cast<int>(timeout.count()));
  if (messages[0] == nullptr) return Status::OK();
  const ssize_t more =
      rd_kafka_consume_batch_queue(queue_, 0, messages.data() + 1, messages.size() - 1);
  const ssize_t count = 1 + std::max<ssize_t>(more, 0);
  Status failure = Status::OK();
  for (ssize_t i = 0; i < count; ++i) {
    KafkaMessage message(messages[static_cast<size_t>(i)]);
    if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++stats_.records;
      stats_.bytes += message->key_len + message->len;
      out.push_back(FromLibrdkafka(std::move(message)));
    } else if (message->err != RD_KAFKA_RESP_ERR__PARTITION_EOF && failure.ok()) {
      failure = Status(StatusCode::kIoError,
                       std::string("consumer: ") + rd_kafka_message_errstr(message.get()));
    }
  }
  return failure;
}

}  // namespace sluice::brokerd
