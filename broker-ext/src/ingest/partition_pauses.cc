#include "ingest/partition_pauses.h"

#include <memory>
#include <utility>

namespace sluice::brokerd {

PartitionPauses::PartitionPauses(rd_kafka_t* consumer, std::string topic,
                                 const std::vector<int32_t>& partitions)
    : consumer_(consumer), topic_(std::move(topic)) {
  for (int32_t partition : partitions) partitions_[partition];
}

Status PartitionPauses::SetSlotsFull(bool full) {
  slots_full_ = full;
  return Apply();
}

Status PartitionPauses::SetBlocked(int32_t partition, bool blocked) {
  partitions_[partition].blocked = blocked;
  return Apply();
}

bool PartitionPauses::blocked(int32_t partition) const {
  auto found = partitions_.find(partition);
  return found != partitions_.end() && found->second.blocked;
}

size_t PartitionPauses::paused_count() const {
  size_t count = 0;
  for (const auto& [partition, state] : partitions_) count += state.paused ? 1 : 0;
  return count;
}

Status PartitionPauses::Apply() {
  std::unique_ptr<rd_kafka_topic_partition_list_t, decltype(&rd_kafka_topic_partition_list_destroy)>
      pause(rd_kafka_topic_partition_list_new(0), &rd_kafka_topic_partition_list_destroy),
      resume(rd_kafka_topic_partition_list_new(0), &rd_kafka_topic_partition_list_destroy);
  for (const auto& [partition, state] : partitions_) {
    const bool wanted = slots_full_ || state.blocked;
    if (wanted == state.paused) continue;
    rd_kafka_topic_partition_list_add(wanted ? pause.get() : resume.get(), topic_.c_str(),
                                      partition);
  }
  for (auto [list, paused] : {std::pair{pause.get(), true}, std::pair{resume.get(), false}}) {
    if (list->cnt == 0) continue;
    const rd_kafka_resp_err_t err = consumer_ == nullptr ? RD_KAFKA_RESP_ERR_NO_ERROR
                                    : paused ? rd_kafka_pause_partitions(consumer_, list)
                                             : rd_kafka_resume_partitions(consumer_, list);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status(StatusCode::kIoError, std::string(paused ? "pause" : "resume") + " " + topic_ +
                                              ": " + rd_kafka_err2str(err));
    }
    for (int i = 0; i < list->cnt; ++i) partitions_[list->elems[i].partition].paused = paused;
  }
  return Status::OK();
}

}  // namespace sluice::brokerd
