// The pump's own logic (batching, slot-size limits, pausing, commit positions) against
// librdkafka's in-process mock cluster, so it runs without a broker. The daemon's integration
// tests run the same code against the real Kafka broker.
#include "ingest/object_pump.h"

#include <arrow/api.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafka_mock.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest_util.h"
#include "ingest/local_chunk_router.h"
#include "ordering/chunk_sequencer.h"
#include "sluice/schemas.h"
#include "sluice/segment_reader.h"

namespace sluice::brokerd {
namespace {

using namespace std::chrono_literals;
using Handle = std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)>;

constexpr int kPartitions = 4;

rd_kafka_conf_t* Conf(std::initializer_list<std::pair<const char*, const char*>> settings) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::array<char, 512> error{};
  for (const auto& [key, value] : settings) {
    EXPECT_EQ(rd_kafka_conf_set(conf, key, value, error.data(), error.size()), RD_KAFKA_CONF_OK)
        << error.data();
  }
  return conf;
}

Handle NewHandle(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  std::array<char, 512> error{};
  rd_kafka_t* handle = rd_kafka_new(type, conf, error.data(), error.size());
  EXPECT_NE(handle, nullptr) << error.data();
  return Handle(handle, &rd_kafka_destroy);
}

std::string Value(int i, size_t size) {
  std::string value(size, ' ');
  for (size_t j = 0; j < size; ++j) value[j] = static_cast<char>('a' + (i + j) % 26);
  return value;
}

class ObjectPumpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    producer_ = NewHandle(RD_KAFKA_PRODUCER, Conf({{"test.mock.num.brokers", "1"}}));
    rd_kafka_mock_cluster_t* cluster = rd_kafka_handle_mock_cluster(producer_.get());
    ASSERT_EQ(rd_kafka_mock_topic_create(cluster, "t", kPartitions, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
    consumer_ = NewHandle(RD_KAFKA_CONSUMER,
                          Conf({{"bootstrap.servers", rd_kafka_mock_cluster_bootstraps(cluster)},
                                {"group.id", "pump-test"},
                                {"enable.auto.commit", "false"},
                                // Each resume waits out a fetch long poll; keep it short.
                                {"fetch.wait.max.ms", "10"}}));
    rd_kafka_poll_set_consumer(consumer_.get());
    queue_ = rd_kafka_queue_new(consumer_.get());
    for (int p = 0; p < kPartitions; ++p) {
      rd_kafka_queue_t* partition_queue = rd_kafka_queue_get_partition(consumer_.get(), "t", p);
      ASSERT_NE(partition_queue, nullptr);
      rd_kafka_queue_forward(partition_queue, queue_);
      rd_kafka_queue_destroy(partition_queue);
    }
    rd_kafka_topic_partition_list_t* partitions = rd_kafka_topic_partition_list_new(kPartitions);
    for (int p = 0; p < kPartitions; ++p) {
      rd_kafka_topic_partition_list_add(partitions, "t", p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    ASSERT_EQ(rd_kafka_assign(consumer_.get(), partitions), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(partitions);
    name_ = "pump-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  void Produce(int count, size_t size) {
    for (int i = 0; i < count; ++i) {
      const std::string value = Value(i, size);
      const std::string key = "k" + std::to_string(i);
      const int64_t seq = i;
      ASSERT_EQ(rd_kafka_producev(producer_.get(), RD_KAFKA_V_TOPIC("t"),
                                  RD_KAFKA_V_PARTITION(i % kPartitions),
                                  RD_KAFKA_V_KEY(key.data(), key.size()),
                                  RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                  RD_KAFKA_V_HEADER("seq", &seq, sizeof(seq)),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    ASSERT_EQ(rd_kafka_flush(producer_.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  Result<std::unique_ptr<SegmentWriter>> Writer(uint32_t slots, uint64_t slot_size,
                                                ObjectKind kind = ObjectKind::kRecords) {
    WriterOptions options;
    options.name = name_;
    options.kind = kind;
    options.slot_count = slots;
    options.slot_size = slot_size;
    options.lane_count = 1;
    return SegmentWriter::Create(options);
  }

  void TearDown() override {
    if (queue_ != nullptr) rd_kafka_queue_destroy(queue_);
  }

  // The pump and what it works with, for one segment.
  struct Rig {
    Rig(rd_kafka_t* consumer, rd_kafka_queue_t* queue, SegmentWriter& writer)
        : source(queue),
          pauses(consumer, "t", {0, 1, 2, 3}),
          pump(source, writer, ObjectKind::kRecords, tracker, pauses, {}) {}
    QueueSource source;
    CommitTracker tracker;
    PartitionPauses pauses;
    ObjectPump pump;
  };

  std::unique_ptr<Rig> Pump(SegmentWriter& writer) {
    return std::make_unique<Rig>(consumer_.get(), queue_, writer);
  }

  Handle producer_{nullptr, &rd_kafka_destroy};
  Handle consumer_{nullptr, &rd_kafka_destroy};
  rd_kafka_queue_t* queue_ = nullptr;
  std::string name_;
};

TEST_F(ObjectPumpTest, EveryRecordArrivesOnceInPartitionOrderWithKeysAndHeaders) {
  constexpr int kRecords = 5000;
  Produce(kRecords, 100);
  ASSERT_OK_AND_ASSIGN(auto writer, Writer(8, 64 * 1024));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name_));
  auto rig = Pump(*writer);
  ObjectPump& pump = rig->pump;

  std::atomic<bool> done{false};
  std::thread pumping([&] {
    while (!done) ASSERT_OK(pump.RunFor(50ms));
  });
  std::array<int64_t, kPartitions> next_offset{};
  int seen = 0;
  while (seen < kRecords) {
    auto object = reader->Next(10s);
    ASSERT_OK(object);
    auto batch = DecodeObject(*object, RecordsSchema());
    ASSERT_OK(batch);
    auto partition = std::static_pointer_cast<arrow::Int32Array>((*batch)->column(0));
    auto offset = std::static_pointer_cast<arrow::Int64Array>((*batch)->column(1));
    auto key = std::static_pointer_cast<arrow::BinaryArray>((*batch)->column(3));
    auto value = std::static_pointer_cast<arrow::BinaryArray>((*batch)->column(4));
    auto headers = std::static_pointer_cast<arrow::ListArray>((*batch)->column(5));
    for (int64_t row = 0; row < (*batch)->num_rows(); ++row, ++seen) {
      const int p = partition->Value(row);
      ASSERT_EQ(offset->Value(row), next_offset[p]++) << "partition " << p << " in order, once";
      const int i = static_cast<int>(offset->Value(row)) * kPartitions + p;
      ASSERT_EQ(key->GetView(row), "k" + std::to_string(i));
      ASSERT_EQ(value->GetView(row), Value(i, 100));
      ASSERT_EQ(headers->value_length(row), 1);
    }
    ASSERT_OK(reader->Release(*object));
  }
  done = true;
  pumping.join();
  EXPECT_EQ(pump.stats().records, static_cast<uint64_t>(kRecords));
  EXPECT_LT(pump.stats().objects, static_cast<uint64_t>(kRecords) / 10) << "records are batched";

  ASSERT_OK_AND_ASSIGN(const auto held_back, pump.TakeCommittable(0));
  for (const PartitionOffset& po : held_back) {
    EXPECT_LT(po.offset, kRecords / kPartitions) << "the watermark holds back later objects";
  }
  ASSERT_OK_AND_ASSIGN(auto committable, pump.TakeCommittable(UINT64_MAX));
  ASSERT_EQ(committable.size(), static_cast<size_t>(kPartitions));
  for (const PartitionOffset& po : committable) {
    EXPECT_EQ(po.offset, kRecords / kPartitions) << "partition " << po.partition;
  }
}

TEST_F(ObjectPumpTest, FullSlotsPauseThePartitionsAndAReleaseResumesThem) {
  Produce(400, 1000);
  // A handful of records per object, two objects in flight.
  ASSERT_OK_AND_ASSIGN(auto writer, Writer(2, 8192));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name_));
  auto rig = Pump(*writer);
  ObjectPump& pump = rig->pump;

  for (int i = 0; i < 40 && !pump.paused(); ++i) ASSERT_OK(pump.RunFor(50ms));
  ASSERT_TRUE(pump.paused()) << "both slots are held, so fetching stopped";
  const uint64_t published = pump.stats().objects;
  EXPECT_EQ(published, 2u);
  ASSERT_OK_AND_ASSIGN(const auto starts, pump.TakeCommittable(UINT64_MAX));
  EXPECT_TRUE(starts.size() <= static_cast<size_t>(kPartitions));
  ASSERT_OK_AND_ASSIGN(const auto unmoved, pump.TakeCommittable(UINT64_MAX));
  for (const PartitionOffset& po : unmoved) EXPECT_EQ(po.offset, 0);

  ASSERT_OK_AND_ASSIGN(auto first, reader->Next(1s));
  std::array<int64_t, kPartitions> next_offset{};
  int seen = 0;
  auto check = [&](const ObjectView& object) {
    ASSERT_OK_AND_ASSIGN(auto batch, DecodeObject(object, RecordsSchema()));
    auto partition = std::static_pointer_cast<arrow::Int32Array>(batch->column(0));
    auto offset = std::static_pointer_cast<arrow::Int64Array>(batch->column(1));
    for (int64_t row = 0; row < batch->num_rows(); ++row, ++seen) {
      ASSERT_EQ(offset->Value(row), next_offset[partition->Value(row)]++) << "once, in order";
    }
  };
  check(first);
  ASSERT_OK(reader->Release(first));
  ASSERT_OK(pump.RunFor(100ms));
  EXPECT_GT(pump.stats().objects, published) << "the freed slot was used";
  EXPECT_GE(pump.stats().pauses, 1u);

  // Pausing and resuming lose no record and repeat none.
  std::atomic<bool> done{false};
  std::thread pumping([&] {
    while (!done) ASSERT_OK(pump.RunFor(20ms));
  });
  while (seen < 400) {
    auto object = reader->Next(10s);
    ASSERT_OK(object);
    check(*object);
    ASSERT_OK(reader->Release(*object));
  }
  done = true;
  pumping.join();
  EXPECT_EQ(seen, 400);
}

TEST_F(ObjectPumpTest, WithNoReaderAttachedThePumpWaitsInsteadOfPublishingToNobody) {
  constexpr int kRecords = 400;
  Produce(kRecords, 1000);
  ASSERT_OK_AND_ASSIGN(auto writer, Writer(2, 8192));
  auto rig = Pump(*writer);
  ObjectPump& pump = rig->pump;
  {
    ASSERT_OK_AND_ASSIGN(auto leaving, SegmentReader::Open(name_));
    for (int i = 0; i < 40 && !pump.paused(); ++i) ASSERT_OK(pump.RunFor(50ms));
    ASSERT_TRUE(pump.paused()) << "the reader holds both slots";
  }  // it leaves without reading: its slots come back, and nobody is attached
  const PumpStats left = pump.stats();
  for (int i = 0; i < 10; ++i) ASSERT_OK(pump.RunFor(50ms));
  EXPECT_EQ(pump.stats().objects, left.objects) << "an object now would reach nobody";
  EXPECT_TRUE(pump.paused());

  // The next reader gets every record after the ones the first reader left with.
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name_));
  std::atomic<bool> done{false};
  std::thread pumping([&] {
    while (!done) ASSERT_OK(pump.RunFor(20ms));
  });
  uint64_t seen = 0;
  while (seen < kRecords - left.records) {
    auto object = reader->Next(10s);
    ASSERT_OK(object);
    ASSERT_OK_AND_ASSIGN(auto batch, DecodeObject(*object, RecordsSchema()));
    seen += static_cast<uint64_t>(batch->num_rows());
    ASSERT_OK(reader->Release(*object));
  }
  done = true;
  pumping.join();
  EXPECT_EQ(seen + left.records, static_cast<uint64_t>(kRecords));
  EXPECT_EQ(pump.stats().records, static_cast<uint64_t>(kRecords));
}

// Hands out `burst` messages in one poll, then polls the queue as usual: what a sequencer does
// when a late chunk releases the early ones it held.
class BurstSource final : public MessageSource {
 public:
  BurstSource(rd_kafka_queue_t* queue, size_t burst) : queue_(queue) {
    EXPECT_TRUE(testing::Eventually(
        "a burst of " + std::to_string(burst) + " messages",
        [&] {
          if (burst_.size() >= burst) return true;
          EXPECT_OK(queue_.Poll(100ms, burst_));
          return false;
        },
        10s, 0ms))  // each poll waits up to 100 ms itself
        << burst_.size() << " came";
  }
  size_t burst_size() const { return burst_.size(); }
  Status Poll(std::chrono::milliseconds timeout, std::vector<ReadyMessage>& out) override {
    if (burst_.empty()) return queue_.Poll(timeout, out);
    for (ReadyMessage& ready : burst_) out.push_back(std::move(ready));
    burst_.clear();
    return Status::OK();
  }
  const SourceStats& stats() const override { return queue_.stats(); }
  bool takes_offsets() const override { return false; }

 private:
  QueueSource queue_;
  std::vector<ReadyMessage> burst_;
};

TEST_F(ObjectPumpTest, MessagesReadyForManyObjectsArePublishedWithoutWaitingForMore) {
  constexpr int kRecords = 400;
  Produce(kRecords, 1000);
  // A handful of records per object, room for all of them.
  ASSERT_OK_AND_ASSIGN(auto writer, Writer(64, 8192));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name_));
  BurstSource source(queue_, kRecords);
  ASSERT_EQ(source.burst_size(), static_cast<size_t>(kRecords));
  CommitTracker tracker;
  PartitionPauses pauses(consumer_.get(), "t", {0, 1, 2, 3});
  ObjectPump::Options options;
  // The topic has nothing more, so a poll waits this long: had the pump polled between two
  // objects, its run would end after the first.
  options.poll_timeout = 2000ms;
  ObjectPump pump(source, *writer, ObjectKind::kRecords, tracker, pauses, options);

  ASSERT_OK(pump.RunFor(300ms));
  EXPECT_EQ(pump.stats().records, static_cast<uint64_t>(kRecords));
  EXPECT_GT(pump.stats().objects, 10u);
}

// Hands out each batch of (partition, offset) records in one poll, and nothing in the poll after
// it, which waits out its timeout as a quiet topic does: the pump publishes each batch alone.
class ScriptedSource final : public MessageSource {
 public:
  explicit ScriptedSource(std::vector<std::vector<std::pair<int32_t, int64_t>>> batches)
      : batches_(std::move(batches)) {}
  Status Poll(std::chrono::milliseconds timeout, std::vector<ReadyMessage>& out) override {
    if (quiet_ || next_ == batches_.size()) {
      quiet_ = false;
      std::this_thread::sleep_for(timeout);  // the wait of a poll that finds nothing
      return Status::OK();
    }
    for (const auto& [partition, offset] : batches_[next_]) {
      ReadyMessage ready;
      ready.record.topic = "t";
      ready.record.partition = partition;
      ready.record.offset = offset;
      ready.record.value = "v";
      out.push_back(std::move(ready));
    }
    ++next_;
    quiet_ = true;
    return Status::OK();
  }
  const SourceStats& stats() const override { return stats_; }
  bool takes_offsets() const override { return false; }

 private:
  std::vector<std::vector<std::pair<int32_t, int64_t>>> batches_;
  size_t next_ = 0;
  bool quiet_ = false;
  SourceStats stats_;
};

// docs/formats.md, "Slot descriptor": first and last offsets are one partition's range, or -1
// with the partition when the object spans partitions.
TEST_F(ObjectPumpTest, TheDescriptorsOffsetsAreOnePartitionsRangeOrNone) {
  ASSERT_OK_AND_ASSIGN(auto writer, Writer(8, 64 * 1024));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name_));
  ScriptedSource source({{{2, 10}, {2, 11}, {2, 14}}, {{0, 5}, {0, 6}, {1, 700}, {1, 701}}});
  CommitTracker tracker;
  PartitionPauses pauses(consumer_.get(), "t", {0, 1, 2, 3});
  ObjectPump pump(source, *writer, ObjectKind::kRecords, tracker, pauses, {});
  for (int round = 0; round < 100 && pump.stats().objects < 2; ++round) {
    ASSERT_OK(pump.RunFor(20ms));
  }
  ASSERT_EQ(pump.stats().objects, 2u);

  ASSERT_OK_AND_ASSIGN(auto single, reader->Next(1s));
  EXPECT_EQ(single.record_count, 3u);
  EXPECT_EQ(single.partition, 2);
  EXPECT_EQ(single.first_offset, 10);
  EXPECT_EQ(single.last_offset, 14);
  ASSERT_OK_AND_ASSIGN(auto spanning, reader->Next(1s));
  EXPECT_EQ(spanning.record_count, 4u);
  EXPECT_EQ(spanning.partition, -1);
  EXPECT_EQ(spanning.first_offset, -1) << "not partition 0's 5";
  EXPECT_EQ(spanning.last_offset, -1) << "not partition 1's 701";
  // The rows still say where each record came from.
  ASSERT_OK_AND_ASSIGN(auto batch, DecodeObject(spanning, RecordsSchema()));
  auto partition = std::static_pointer_cast<arrow::Int32Array>(batch->column(0));
  auto offset = std::static_pointer_cast<arrow::Int64Array>(batch->column(1));
  EXPECT_EQ(partition->Value(2), 1);
  EXPECT_EQ(offset->Value(2), 700);
}

TEST_F(ObjectPumpTest, ARecordLargerThanASlotIsAClearErrorNamingIt) {
  Produce(1, 10000);
  ASSERT_OK_AND_ASSIGN(auto writer, Writer(2, 4096));
  auto rig = Pump(*writer);
  ObjectPump& pump = rig->pump;
  Status status = Status::OK();
  for (int i = 0; i < 40 && status.ok(); ++i) status = pump.RunFor(50ms);
  EXPECT_RAISES(TooLarge, status);
  EXPECT_NE(status.message().find("t [0] at offset 0"), std::string::npos) << status.message();
  ASSERT_OK_AND_ASSIGN(const auto committable, pump.TakeCommittable(UINT64_MAX));
  EXPECT_TRUE(committable.empty()) << "nothing past the record is committed";
}

// docs/brokerd.md, "Local producers": a local chunk has no offset, so an object of local chunks
// has none in its descriptor and gives the commit tracker nothing to settle when released.
TEST_F(ObjectPumpTest, AnObjectOfLocalChunksHasNoOffsetsAndCommitsNothing) {
  ASSERT_OK_AND_ASSIGN(auto writer, Writer(8, 64 * 1024, ObjectKind::kChunks));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name_));
  QueueSource fetched(queue_);
  CommitTracker tracker;
  PartitionPauses pauses(consumer_.get(), "t", {0, 1, 2, 3});
  Counter malformed, duplicates, dead_letters, gaps;
  ChunkSequencer::Options options;
  options.local_chunks =
      std::make_shared<LocalChunkInbox>("", [queue = queue_] { rd_kafka_queue_yield(queue); });
  ChunkSequencer sequencer(fetched, tracker, pauses, nullptr,
                           SequencerCounters{malformed, duplicates, dead_letters, gaps}, options);
  ObjectPump pump(sequencer, *writer, ObjectKind::kChunks, tracker, pauses, {});
  auto slot = std::make_shared<const std::string>("local payload");
  for (uint64_t seq = 0; seq < 3; ++seq) {
    ReadyMessage chunk;
    chunk.record.topic = "t";
    chunk.record.partition = -1;
    chunk.record.offset = -1;
    chunk.record.value = std::string_view(*slot);
    chunk.owner = slot;
    chunk.chunk = std::make_unique<const ChunkId>(ChunkId{"job", "s", seq, false});
    chunk.local_producer = 7;
    options.local_chunks->Push(std::move(chunk));
  }
  for (int round = 0; round < 100 && pump.stats().records < 3; ++round) {
    ASSERT_OK(pump.RunFor(20ms));
  }
  ASSERT_EQ(pump.stats().records, 3u);

  ASSERT_OK_AND_ASSIGN(auto object, reader->Next(1s));
  EXPECT_EQ(object.record_count, 3u);
  EXPECT_EQ(object.partition, -1);
  EXPECT_EQ(object.first_offset, -1);
  EXPECT_EQ(object.last_offset, -1);
  ASSERT_OK_AND_ASSIGN(auto batch, DecodeObject(object, ChunksSchema()));
  auto payload = std::static_pointer_cast<arrow::BinaryArray>(batch->GetColumnByName("payload"));
  EXPECT_EQ(payload->GetView(2), "local payload");
  ASSERT_OK(reader->Release(object));
  ASSERT_OK_AND_ASSIGN(const auto committable, pump.TakeCommittable(object.object_id));
  EXPECT_TRUE(committable.empty()) << "no partition has an offset to commit";
  EXPECT_EQ(slot.use_count(), 1) << "the producer's slot goes back once its object is out";
}

}  // namespace
}  // namespace sluice::brokerd
