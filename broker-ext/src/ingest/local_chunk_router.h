// Where the chunks of local producers go: the daemon-wide registry of the CHUNK_STREAMS
// subscriptions of each chunk topic, and each subscription's inbox of local chunks that its pump
// drains with the records it fetches (docs/brokerd.md, "Local producers").
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ingest/kafka_message.h"

namespace sluice::brokerd {

// One per CHUNK_STREAMS subscription: the local chunks routed to it, until its pump drains them.
class LocalChunkInbox {
 public:
  // `wake` is called after every push (the pump's rd_kafka_queue_yield); `job_filter` empty: all
  // jobs.
  LocalChunkInbox(std::string job_filter, std::function<void()> wake);
  LocalChunkInbox(const LocalChunkInbox&) = delete;
  LocalChunkInbox& operator=(const LocalChunkInbox&) = delete;

  // From producer threads.
  void Push(ReadyMessage message);
  // From the pump's thread: appends what was pushed, in push order, and empties the inbox.
  void Drain(std::vector<ReadyMessage>& out);
  // Whether a chunk of `job` belongs in this inbox.
  bool Accepts(const std::string& job) const { return job_filter_.empty() || job == job_filter_; }
  const std::string& job_filter() const { return job_filter_; }

 private:
  const std::string job_filter_;
  const std::function<void()> wake_;
  std::mutex mutex_;
  std::vector<ReadyMessage> pending_;
};

class LocalChunkRouter {
 public:
  void Add(const std::string& topic, std::shared_ptr<LocalChunkInbox> inbox);
  void Remove(const std::string& topic, const LocalChunkInbox* inbox);
  // Gives the chunk to every inbox of `topic` whose filter matches (a copy each, the owner
  // shared); returns how many took it. None: the chunk is dropped here, and the message with it
  // (its producer slot goes back). Thread-safe.
  size_t Route(const std::string& topic, ReadyMessage message);

 private:
  std::mutex mutex_;
  std::map<std::string, std::vector<std::shared_ptr<LocalChunkInbox>>, std::less<>> inboxes_;
};

}  // namespace sluice::brokerd
