// Sends records the daemon cannot deliver (malformed chunk headers) to a dead-letter topic, with
// why and where from in their headers, so that nothing is dropped silently. An offset settles
// only when the broker has its dead letter.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ingest/commit_tracker.h"
#include "ingest/fetch_session.h"
#include "ingest/kafka_message.h"
#include "sluice/status.h"

namespace sluice::brokerd {

// Headers added to a dead letter, beside the original ones.
inline constexpr const char* kDeadLetterErrorHeader = "sluice.error";
inline constexpr const char* kDeadLetterOriginHeader = "sluice.origin";  // topic/partition/offset

class DeadLetters {
 public:
  static Result<std::unique_ptr<DeadLetters>> Create(const KafkaSettings& settings,
                                                     std::string topic);
  ~DeadLetters();
  DeadLetters(const DeadLetters&) = delete;
  DeadLetters& operator=(const DeadLetters&) = delete;

  // Queues a copy of `original` with `error`; its range is reported by Delivered once written.
  Status Send(const ConsumedRecord& original, const std::string& error);
  // Ranges whose dead letters the broker acknowledged since the last call; failures are logged
  // and their ranges stay unsettled, so their offsets are never committed.
  std::vector<OffsetRange> Delivered();
  // Waits up to `timeout` for what is queued.
  void Flush(std::chrono::milliseconds timeout);

  const std::string& topic() const { return topic_; }

 private:
  DeadLetters(rd_kafka_t* producer, std::string topic);
  static void OnDelivery(rd_kafka_t* producer, const rd_kafka_message_t* message, void* opaque);

  rd_kafka_t* producer_;
  std::string topic_;
  std::mutex mutex_;
  std::vector<OffsetRange> delivered_;
};

}  // namespace sluice::brokerd
