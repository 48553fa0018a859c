#include "ingest/local_chunk_router.h"

#include <algorithm>
#include <utility>

namespace sluice::brokerd {

LocalChunkInbox::LocalChunkInbox(std::string job_filter, std::function<void()> wake)
    : job_filter_(std::move(job_filter)), wake_(std::move(wake)) {}

void LocalChunkInbox::Push(ReadyMessage message) {
  {
    std::lock_guard lock(mutex_);
    pending_.push_back(std::move(message));
  }
  // Outside the lock: the pump may be draining as soon as it is woken.
  if (wake_) wake_();
}

void LocalChunkInbox::Drain(std::vector<ReadyMessage>& out) {
  std::vector<ReadyMessage> taken;
  {
    std::lock_guard lock(mutex_);
    taken.swap(pending_);
  }
  out.insert(out.end(), std::make_move_iterator(taken.begin()),
             std::make_move_iterator(taken.end()));
}

void LocalChunkRouter::Add(const std::string& topic, std::shared_ptr<LocalChunkInbox> inbox) {
  std::lock_guard lock(mutex_);
  inboxes_[topic].push_back(std::move(inbox));
}

void LocalChunkRouter::Remove(const std::string& topic, const LocalChunkInbox* inbox) {
  std::lock_guard lock(mutex_);
  auto it = inboxes_.find(topic);
  if (it == inboxes_.end()) return;
  std::erase_if(it->second, [inbox](const auto& held) { return held.get() == inbox; });
  if (it->second.empty()) inboxes_.erase(it);
}

size_t LocalChunkRouter::Route(const std::string& topic, ReadyMessage message) {
  // The inboxes are taken under the lock and pushed to outside it: a push wakes a pump, which
  // must not wait for the router to route to someone else.
  std::vector<std::shared_ptr<LocalChunkInbox>> targets;
  {
    std::lock_guard lock(mutex_);
    auto it = inboxes_.find(topic);
    if (it == inboxes_.end()) return 0;
    const std::string& job = message.chunk != nullptr ? message.chunk->job : std::string();
    for (const auto& inbox : it->second) {
      if (inbox->Accepts(job)) targets.push_back(inbox);
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    // The last inbox takes the message itself, the others a copy of it.
    targets[i]->Push(i + 1 == targets.size() ? std::move(message) : CopyForRouting(message));
  }
  return targets.size();
}

}  // namespace sluice::brokerd
