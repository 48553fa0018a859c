// Which of a subscription's partitions should stop fetching, and why: all of them while the
// readers hold every slot, single ones while their next chunk waits for room in the reorder
// window. A partition fetches again only when no reason holds. With a librdkafka consumer the
// pauses are applied to it; the native fetch path asks `paused` before each request.
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sluice/status.h"

namespace sluice::brokerd {

class PartitionPauses {
 public:
  // `consumer` null: nothing to apply pauses to (the native fetch path).
  PartitionPauses(rd_kafka_t* consumer, std::string topic, const std::vector<int32_t>& partitions);

  Status SetSlotsFull(bool full);
  Status SetBlocked(int32_t partition, bool blocked);

  bool slots_full() const { return slots_full_; }
  bool blocked(int32_t partition) const;
  bool paused(int32_t partition) const { return slots_full_ || blocked(partition); }
  size_t paused_count() const;

 private:
  struct State {
    bool blocked = false;
    bool paused = false;  // as last applied
  };
  Status Apply();

  rd_kafka_t* consumer_;
  std::string topic_;
  bool slots_full_ = false;
  std::map<int32_t, State> partitions_;
};

}  // namespace sluice::brokerd
