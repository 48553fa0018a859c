// The native fetch path against librdkafka's mock cluster, a real Kafka protocol server on
// loopback: records arrive once and in order from every codec, whatever start, through broker
// outages and leader errors, from the follower a leader names and back, and from the replica on
// the daemon's own broker at once; paused partitions are not fetched. The daemon's process tests
// and the Java integration tests run the same path against the real broker.
#include "ingest/native_fetch_source.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka_mock.h>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest_util.h"

namespace sluice::brokerd {
namespace {

using namespace std::chrono_literals;
using Handle = std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)>;

constexpr int kPartitions = 4;

Handle NewProducer(std::initializer_list<std::pair<const char*, std::string>> settings) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::array<char, 512> error{};
  for (const auto& [key, value] : settings) {
    EXPECT_EQ(rd_kafka_conf_set(conf, key, value.c_str(), error.data(), error.size()),
              RD_KAFKA_CONF_OK)
        << error.data();
  }
  rd_kafka_t* handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error.data(), error.size());
  EXPECT_NE(handle, nullptr) << error.data();
  return Handle(handle, &rd_kafka_destroy);
}

std::string Value(int i) { return "value-" + std::to_string(i) + std::string(i % 200, 'x'); }

class NativeFetchSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_owner_ = NewProducer({{"test.mock.num.brokers", "2"}});
    cluster_ = rd_kafka_handle_mock_cluster(cluster_owner_.get());
    // Both brokers hold a replica of each partition, in sync in the mock's metadata.
    ASSERT_EQ(rd_kafka_mock_topic_create(cluster_, "t", kPartitions, 2),
              RD_KAFKA_RESP_ERR_NO_ERROR);
    bootstraps_ = rd_kafka_mock_cluster_bootstraps(cluster_);
    ASSERT_OK_AND_ASSIGN(session_,
                         FetchSession::Create({{"bootstrap.servers", bootstraps_}}, "", true));
  }

  // Record i goes to partition i % kPartitions, with key "k<i>" (null for every 7th), its value
  // and a header "i" (null-valued for every 5th).
  void Produce(int from, int to, const std::string& codec = "none") {
    Handle producer = NewProducer(
        {{"bootstrap.servers", bootstraps_}, {"compression.codec", codec}, {"linger.ms", "5"}});
    for (int i = from; i < to; ++i) {
      const std::string value = Value(i);
      const std::string key = "k" + std::to_string(i);
      const std::string number = std::to_string(i);
      const void* key_bytes = i % 7 == 0 ? nullptr : key.data();
      const size_t key_size = i % 7 == 0 ? 0 : key.size();
      const void* header_bytes = i % 5 == 0 ? nullptr : number.data();
      const ssize_t header_size = i % 5 == 0 ? -1 : static_cast<ssize_t>(number.size());
      ASSERT_EQ(rd_kafka_producev(producer.get(), RD_KAFKA_V_TOPIC("t"),
                                  RD_KAFKA_V_PARTITION(i % kPartitions),
                                  RD_KAFKA_V_KEY(key_bytes, key_size),
                                  RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                  RD_KAFKA_V_HEADER("i", header_bytes, header_size),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    ASSERT_EQ(rd_kafka_flush(producer.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  Result<std::unique_ptr<NativeFetchSource>> Source(const std::map<int32_t, int64_t>& starts,
                                                    const PartitionPauses& pauses,
                                                    NativeFetchSettings settings = {},
                                                    Metrics* metrics = nullptr) {
    settings.max_wait_ms = 20;
    NativeFetchSource::Cluster cluster{
        [this] { return session_->LeaderAddresses("t", 5s); },
        [this](int32_t partition) { return session_->Watermarks("t", partition, 5s); }};
    return NativeFetchSource::Create("t", starts, settings, cluster, pauses, metrics);
  }

  static std::map<int32_t, int64_t> FromBeginning() {
    std::map<int32_t, int64_t> starts;
    for (int p = 0; p < kPartitions; ++p) starts[p] = RD_KAFKA_OFFSET_BEGINNING;
    return starts;
  }

  // Offset 0 of each partition: a start that needs no broker's answer.
  static std::map<int32_t, int64_t> FromZero() {
    std::map<int32_t, int64_t> starts;
    for (int p = 0; p < kPartitions; ++p) starts[p] = 0;
    return starts;
  }

  // Every partition led by broker 1, whose leader names broker 2 as the preferred read replica
  // (the mock names it whatever rack a request gives).
  void LeadOnOneFollowOnTwo() {
    for (int p = 0; p < kPartitions; ++p) {
      ASSERT_EQ(rd_kafka_mock_partition_set_leader(cluster_, "t", p, 1),
                RD_KAFKA_RESP_ERR_NO_ERROR);
      ASSERT_EQ(rd_kafka_mock_partition_set_follower(cluster_, "t", p, 2),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
  }

  static NativeFetchSettings InRack() {
    NativeFetchSettings settings;
    settings.rack = "rack-2";
    return settings;
  }

  // The series of records received from mock broker `broker`.
  std::string RecordsFrom(int32_t broker) {
    Result<TopicLeaders> found = session_->LeaderAddresses("t", 5s);
    EXPECT_OK(found);
    return "sluice_fetch_records_total{broker=\"" + found->brokers.at(broker) + "\"}";
  }

  static std::string ReplicaOf(int partition) {
    return "sluice_fetch_replica{topic=\"t\",partition=\"" + std::to_string(partition) + "\"}";
  }

  // Polls into `out` until it holds `count` records, a poll fails or `timeout` passes.
  static void ReadInto(NativeFetchSource& source, std::vector<ReadyMessage>& out, size_t count,
                       std::chrono::milliseconds timeout = 10s) {
    Status polled;
    EXPECT_TRUE(testing::Eventually(
        std::to_string(count) + " records",
        [&] {
          if (out.size() >= count || !polled.ok()) return true;
          polled = source.Poll(50ms, out);
          return false;
        },
        timeout, 0ms))  // each poll waits up to 50 ms itself
        << out.size() << " came";
    EXPECT_OK(polled);
  }

  // The first `count` records, polled for up to 10 s.
  static std::vector<ReadyMessage> Read(NativeFetchSource& source, size_t count) {
    std::vector<ReadyMessage> out;
    ReadInto(source, out, count);
    return out;
  }

  // Every record of [from, to) once, each partition in offset order, with its fields.
  static void ExpectRecords(const std::vector<ReadyMessage>& out, int from, int to) {
    ASSERT_EQ(out.size(), static_cast<size_t>(to - from));
    std::array<int64_t, kPartitions> next{};
    for (int p = 0; p < kPartitions; ++p) next[p] = -1;
    for (const ReadyMessage& ready : out) {
      const ConsumedRecord& r = ready.record;
      ASSERT_NE(ready.owner, nullptr);
      EXPECT_EQ(r.topic, "t");
      if (next[r.partition] >= 0) {
        EXPECT_EQ(r.offset, next[r.partition]) << "in order, once";
      }
      next[r.partition] = r.offset + 1;
      ASSERT_EQ(r.headers.size(), 1u);
      ASSERT_EQ(r.headers[0].key, "i");
      // Record i is at offset i / kPartitions of its partition: every test produces from 0 on.
      const int i = static_cast<int>(r.offset) * kPartitions + r.partition;
      ASSERT_GE(i, from);
      ASSERT_LT(i, to);
      if (r.headers[0].has_value) {
        EXPECT_EQ(r.headers[0].value, std::to_string(i));
      }
      EXPECT_EQ(i % kPartitions, r.partition);
      EXPECT_EQ(r.value, Value(i));
      if (i % 7 == 0) {
        EXPECT_FALSE(r.key.has_value()) << "a null key stays null";
      } else {
        EXPECT_EQ(r.key, "k" + std::to_string(i));
      }
      EXPECT_EQ(r.headers[0].has_value, i % 5 != 0) << "a null header value stays null";
      EXPECT_GT(r.timestamp_ms, 0);
    }
  }

  Handle cluster_owner_{nullptr, &rd_kafka_destroy};
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  std::string bootstraps_;
  std::unique_ptr<FetchSession> session_;
};

TEST_F(NativeFetchSourceTest, EveryRecordArrivesOnceInPartitionOrderWithItsFields) {
  Produce(0, 2000);
  PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
  ASSERT_OK_AND_ASSIGN(auto source, Source(FromBeginning(), pauses));
  ExpectRecords(Read(*source, 2000), 0, 2000);
  EXPECT_EQ(source->stats().records, 2000u);
  EXPECT_EQ(source->lag(), 0);
}

// For a cluster check that each daemon fetched from its own host's broker only.
TEST_F(NativeFetchSourceTest, RecordsAreCountedPerBrokerAddress) {
  ASSERT_EQ(rd_kafka_mock_partition_set_leader(cluster_, "t", 0, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  for (int32_t partition = 1; partition < kPartitions; ++partition) {
    ASSERT_EQ(rd_kafka_mock_partition_set_leader(cluster_, "t", partition, 2),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  Produce(0, 1000);
  Metrics metrics;
  PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
  ASSERT_OK_AND_ASSIGN(auto source, Source(FromBeginning(), pauses, {}, &metrics));
  ExpectRecords(Read(*source, 1000), 0, 1000);
  const std::string rendered = metrics.Render();
  // 250 records a partition: one partition on broker 1, three on broker 2.
  EXPECT_NE(rendered.find(RecordsFrom(1) + " 250\n"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find(RecordsFrom(2) + " 750\n"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find(ReplicaOf(0) + " 1\n"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find(ReplicaOf(3) + " 2\n"), std::string::npos) << rendered;
}

// KIP-392: a leader that names a preferred read replica answers with no records; the follower
// serves the partition from then on, the same offsets in the same order.
TEST_F(NativeFetchSourceTest, AFollowerTheLeaderNamesServesItsPartitions) {
  LeadOnOneFollowOnTwo();
  Produce(0, 1000);
  Metrics metrics;
  PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
  ASSERT_OK_AND_ASSIGN(auto source, Source(FromBeginning(), pauses, InRack(), &metrics));
  ExpectRecords(Read(*source, 1000), 0, 1000);
  const std::string rendered = metrics.Render();
  EXPECT_NE(rendered.find(RecordsFrom(2) + " 1000\n"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find(RecordsFrom(1) + " 0\n"), std::string::npos)
      << "the leader sent no records\n"
      << rendered;
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_NE(rendered.find(ReplicaOf(p) + " 2\n"), std::string::npos) << rendered;
  }
}

// An in-sync replica on the daemon's own broker is read from the start, without the leader naming
// it first: with the leader's broker down, every record the replica holds arrives all the same.
TEST_F(NativeFetchSourceTest, AnInSyncReplicaOnTheDaemonsBrokerIsReadAtOnceWithTheLeaderDown) {
  LeadOnOneFollowOnTwo();
  Produce(0, 1000);
  ASSERT_EQ(rd_kafka_mock_broker_set_down(cluster_, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  Metrics metrics;
  PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
  NativeFetchSettings own = InRack();
  own.own_broker = 2;
  ASSERT_OK_AND_ASSIGN(auto source, Source(FromZero(), pauses, own, &metrics));
  ExpectRecords(Read(*source, 1000), 0, 1000);
  const std::string rendered = metrics.Render();
  EXPECT_NE(rendered.find(RecordsFrom(2) + " 1000\n"), std::string::npos) << rendered;
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_NE(rendered.find(ReplicaOf(p) + " 2\n"), std::string::npos) << rendered;
  }
}

// The follower goes away (and the leader stops naming it, as Kafka does once the controller
// fenced it): its partitions go back to the leader, where the next records come from.
TEST_F(NativeFetchSourceTest, AFollowerThatGoesDownSendsItsPartitionsBackToTheLeader) {
  LeadOnOneFollowOnTwo();
  Produce(0, 400);
  Metrics metrics;
  PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
  ASSERT_OK_AND_ASSIGN(auto source, Source(FromBeginning(), pauses, InRack(), &metrics));
  std::vector<ReadyMessage> out;
  ReadInto(*source, out, 400);

  ASSERT_EQ(rd_kafka_mock_broker_set_down(cluster_, 2), RD_KAFKA_RESP_ERR_NO_ERROR);
  for (int p = 0; p < kPartitions; ++p) {
    ASSERT_EQ(rd_kafka_mock_partition_set_follower(cluster_, "t", p, -1),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  Produce(400, 1000);
  ReadInto(*source, out, 1000, 20s);
  ExpectRecords(out, 0, 1000);
  const std::string rendered = metrics.Render();
  EXPECT_NE(rendered.find(RecordsFrom(2) + " 400\n"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find(RecordsFrom(1) + " 600\n"), std::string::npos) << rendered;
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_NE(rendered.find(ReplicaOf(p) + " 1\n"), std::string::npos) << rendered;
  }
}

// A follower's error is no verdict on the partition: it goes back to its leader, and nothing is
// lost or read twice. (The mock's leader names the follower again at once, rack or none; Kafka's
// names no follower to the rack-less requests the source sends for a minute after a failure.)
TEST_F(NativeFetchSourceTest, AFollowersErrorSendsItsPartitionsBackToTheLeaderLosingNothing) {
  LeadOnOneFollowOnTwo();
  Produce(0, 1000);
  PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
  NativeFetchSettings small = InRack();
  small.partition_max_bytes = 4096;  // many fetches, so the errors land mid-topic
  ASSERT_OK_AND_ASSIGN(auto source, Source(FromBeginning(), pauses, small));
  std::vector<ReadyMessage> out;
  ReadInto(*source, out, 100);
  rd_kafka_mock_broker_push_request_error_rtts(cluster_, 2, 1 /* Fetch */, 2,
                                               RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE, 0,
                                               RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION, 0);
  ReadInto(*source, out, 1000, 20s);
  ExpectRecords(out, 0, 1000);
}

// The preference is a lease: once it ends the leader is asked again, and a leader that no longer
// names the follower keeps the partition.
TEST_F(NativeFetchSourceTest, AFollowersLeaseEndsAndTheLeaderIsAskedAgain) {
  LeadOnOneFollowOnTwo();
  Produce(0, 400);
  Metrics metrics;
  PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
  NativeFetchSettings leased = InRack();
  leased.replica_lease = 200ms;
  ASSERT_OK_AND_ASSIGN(auto source, Source(FromBeginning(), pauses, leased, &metrics));
  std::vector<ReadyMessage> out;
  ReadInto(*source, out, 400);
  for (int p = 0; p < kPartitions; ++p) {
    ASSERT_EQ(rd_kafka_mock_partition_set_follower(cluster_, "t", p, -1),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  EXPECT_TRUE(testing::Eventually(
      "every partition is read from its leader again",
      [&] {
        EXPECT_OK(source->Poll(50ms, out));
        const std::string rendered = metrics.Render();
        for (int p = 0; p < kPartitions; ++p) {
          if (rendered.find(ReplicaOf(p) + " 1\n") == std::string::npos) return false;
        }
        return true;
      },
      10s, 0ms));
  Produce(400, 800);
  ReadInto(*source, out, 800);
  ExpectRecords(out, 0, 800);
}

TEST_F(NativeFetchSourceTest, BatchesOfEveryCodecAreRead) {
  int from = 0;
  for (const char* codec : {"gzip", "snappy", "lz4", "zstd"}) {
    SCOPED_TRACE(codec);
    Produce(from, from + 400, codec);
    PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
    std::map<int32_t, int64_t> starts;
    for (int p = 0; p < kPartitions; ++p) starts[p] = from / kPartitions;
    ASSERT_OK_AND_ASSIGN(auto source, Source(starts, pauses));
    std::vector<ReadyMessage> out = Read(*source, 400);
    ExpectRecords(out, from, from + 400);
    from += 400;
  }
}

TEST_F(NativeFetchSourceTest, AStartInsideABatchBeginsExactlyThereAndEndBeginsAfterTheLast) {
  Produce(0, 400);
  PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
  ASSERT_OK_AND_ASSIGN(auto inside, Source({{0, 37}}, pauses));
  std::vector<ReadyMessage> out = Read(*inside, 100 - 37);
  ASSERT_EQ(out.size(), 63u);
  EXPECT_EQ(out.front().record.offset, 37) << "records before the start, in its batch, are skipped";

  std::map<int32_t, int64_t> ends;
  for (int p = 0; p < kPartitions; ++p) ends[p] = RD_KAFKA_OFFSET_END;
  ASSERT_OK_AND_ASSIGN(auto at_end, Source(ends, pauses));
  std::vector<ReadyMessage> none;
  ASSERT_OK(at_end->Poll(100ms, none));
  EXPECT_TRUE(none.empty());
  Produce(400, 800);
  std::vector<ReadyMessage> later = Read(*at_end, 400);
  ASSERT_EQ(later.size(), 400u);
  for (const ReadyMessage& ready : later) EXPECT_GE(ready.record.offset, 100);
}

TEST_F(NativeFetchSourceTest, ABrokerOutageAndLeaderErrorsLoseAndRepeatNothing) {
  Produce(0, 1000);
  PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
  NativeFetchSettings small;
  small.partition_max_bytes = 4096;  // many fetches, so the failures land mid-topic
  ASSERT_OK_AND_ASSIGN(auto source, Source(FromBeginning(), pauses, small));
  std::vector<ReadyMessage> out;
  ASSERT_OK(source->Poll(1s, out));
  ASSERT_FALSE(out.empty());

  rd_kafka_mock_push_request_errors(cluster_, 1 /* Fetch */, 2,
                                    RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
                                    RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT);
  for (int broker = 1; broker <= 2; ++broker) {
    ASSERT_EQ(rd_kafka_mock_broker_set_down(cluster_, broker), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  for (int i = 0; i < 5; ++i) ASSERT_OK(source->Poll(50ms, out)) << "retried, not failed";
  for (int broker = 1; broker <= 2; ++broker) {
    ASSERT_EQ(rd_kafka_mock_broker_set_up(cluster_, broker), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ReadInto(*source, out, 1000, 20s);
  ExpectRecords(out, 0, 1000);
}

TEST_F(NativeFetchSourceTest, PausedPartitionsAreLeftOutOfRequests) {
  Produce(0, 400);
  PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
  ASSERT_OK(pauses.SetSlotsFull(true));
  ASSERT_OK_AND_ASSIGN(auto source, Source(FromBeginning(), pauses));
  std::vector<ReadyMessage> out;
  for (int i = 0; i < 5; ++i) ASSERT_OK(source->Poll(50ms, out));
  EXPECT_TRUE(out.empty()) << "nothing fetched while paused";
  EXPECT_EQ(pauses.paused_count(), static_cast<size_t>(kPartitions));
  ASSERT_OK(pauses.SetSlotsFull(false));
  ExpectRecords(Read(*source, 400), 0, 400);
}

TEST_F(NativeFetchSourceTest, AnOffsetBeyondTheHighWatermarkEndsTheSourceWithAClearError) {
  Produce(0, 40);
  PartitionPauses pauses(nullptr, "t", {0, 1, 2, 3});
  ASSERT_OK_AND_ASSIGN(auto source, Source({{1, 500}}, pauses));
  std::vector<ReadyMessage> out;
  Status status = Status::OK();
  for (int i = 0; i < 20 && status.ok(); ++i) status = source->Poll(50ms, out);
  EXPECT_RAISES(InvalidState, status);
  EXPECT_NE(status.message().find("offset 500 of t [1] is beyond its high watermark 10"),
            std::string::npos)
      << status.message();
}

TEST(NativeFetchSettingsTest, AreReadFromLibrdkafkasPropertyNamesAndRefuseBadValues) {
  auto settings = NativeFetchSettings::From({{"fetch.wait.max.ms", "7"},
                                             {"fetch.min.bytes", "10"},
                                             {"fetch.max.bytes", "1000000"},
                                             {"max.partition.fetch.bytes", "65536"},
                                             {"isolation.level", "read_uncommitted"},
                                             {"client.id", "me"},
                                             {"client.rack", "rack-2"},
                                             {"metadata.max.age.ms", "60000"},
                                             {"linger.ms", "5"}});
  ASSERT_OK(settings);
  EXPECT_EQ(settings->max_wait_ms, 7);
  EXPECT_EQ(settings->min_bytes, 10);
  EXPECT_EQ(settings->max_bytes, 1000000);
  EXPECT_EQ(settings->partition_max_bytes, 65536);
  EXPECT_FALSE(settings->read_committed);
  EXPECT_EQ(settings->client_id, "me");
  EXPECT_EQ(settings->rack, "rack-2");
  EXPECT_EQ(settings->replica_lease, 60s);
  EXPECT_EQ(NativeFetchSettings::From({})->rack, "") << "no rack unless set";

  auto bad = NativeFetchSettings::From({{"fetch.max.bytes", "lots"}});
  EXPECT_RAISES(InvalidArgument, bad);
  EXPECT_NE(bad.status().message().find("fetch.max.bytes = \"lots\": expected a number"),
            std::string::npos);
  auto dirty = NativeFetchSettings::From({{"isolation.level", "dirty"}});
  EXPECT_RAISES(InvalidArgument, dirty);
  EXPECT_EQ(dirty.status().message(),
            "isolation.level = dirty: read_committed or read_uncommitted");
  auto negative = NativeFetchSettings::From({{"fetch.min.bytes", "-1"}});
  EXPECT_RAISES(InvalidArgument, negative);
  EXPECT_EQ(negative.status().message(), "fetch.min.bytes = \"-1\": must not be negative");

  EXPECT_TRUE(NativeFetchSettings::Applies({{"bootstrap.servers", "x:1"}}));
  EXPECT_TRUE(NativeFetchSettings::Applies({{"security.protocol", "PLAINTEXT"}}));
  EXPECT_FALSE(NativeFetchSettings::Applies({{"security.protocol", "SSL"}}));
  EXPECT_FALSE(NativeFetchSettings::Applies({{"security.protocol", "sasl_plaintext"}}));
}

}  // namespace
}  // namespace sluice::brokerd
