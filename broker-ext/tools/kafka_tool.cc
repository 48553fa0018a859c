// sluice-kafka-tool: a bare librdkafka producer and consumer.
//
//   sluice-kafka-tool produce --bootstrap-servers B --topic T --count N [--size BYTES] [-X k=v]...
//   sluice-kafka-tool consume --bootstrap-servers B --topic T --count N [--timeout-ms MS]
//                             [--digest fnv|sum64] [--warmup W] [-X k=v]...
//
// Prints one line, "records=N bytes=B seconds=S cpu_s=C checksum=C", then for a consumer the
// steady state from its record number `--warmup` (0: the first) to its last, without connecting,
// fetching metadata or warming up: "window_records=.. window_bytes=.. window_s=..
// window_cpu_s=..". The checksum is the sum (mod 2^64) of a digest of every value, so it does not
// depend on the order in which partitions interleave, and a client in another language can compare
// what it saw: FNV-1a by default; sum64, the sum of the value's little-endian 8-byte words then of
// its tail bytes (signed), is the benchmarks' cheaper digest, the one their Java readers compute.
#include <librdkafka/rdkafka.h>

#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/sluice.h"

namespace {

using Clock = std::chrono::steady_clock;
using Handle = std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)>;
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t,
                                      decltype(&rd_kafka_topic_partition_list_destroy)>;

constexpr std::string_view kUsage =
    "usage: sluice-kafka-tool produce|consume --bootstrap-servers B --topic T --count N\n"
    "                         [--size BYTES] [--timeout-ms MS] [--digest fnv|sum64] [--warmup W]\n"
    "                         [-X librdkafka.key=value]...\n"
    "       sluice-kafka-tool --version";

struct Options {
  std::string mode;
  std::string bootstrap_servers;
  std::string topic;
  uint64_t count = 0;
  size_t size = 100;
  int timeout_ms = 60'000;
  bool sum64 = false;
  uint64_t warmup = 0;
  std::vector<std::pair<std::string, std::string>> config;
};

double CpuSeconds() {
  timespec cpu{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  return static_cast<double>(cpu.tv_sec) + static_cast<double>(cpu.tv_nsec) / 1e9;
}

struct Totals {
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t checksum = 0;
  bool sum64 = false;
  // Consumer only: from record `--warmup` to the last, the steady state without connecting and
  // fetching metadata.
  Clock::time_point first_at{};
  Clock::time_point last_at{};
  uint64_t first_records = 0;
  uint64_t first_bytes = 0;
  double first_cpu_s = 0;

  void StartWindow() {
    first_at = Clock::now();
    first_records = records;
    first_bytes = bytes;
    first_cpu_s = CpuSeconds();
  }

  void Add(std::span<const uint8_t> value) {
    checksum += sum64 ? Sum64(value) : Fnv(value);
    bytes += value.size();
    ++records;
  }

  static uint64_t Fnv(std::span<const uint8_t> value) {
    uint64_t hash = 14695981039346656037ULL;
    for (uint8_t b : value) hash = (hash ^ b) * 1099511628211ULL;
    return hash;
  }

  static uint64_t Sum64(std::span<const uint8_t> value) {
    uint64_t sum = 0;
    size_t i = 0;
    for (; i + 8 <= value.size(); i += 8) {
      uint64_t word;
      std::memcpy(&word, value.data() + i, 8);
      sum += word;
    }
    for (; i < value.size(); ++i) sum += static_cast<uint64_t>(static_cast<int8_t>(value[i]));
    return sum;
  }
};

template <typename T>
T ParseNumber(std::string_view flag, std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    throw std::invalid_argument(std::string(flag) + " wants a number, got '" + std::string(text) +
                                "'");
  }
  return value;
}

Options ParseOptions(int argc, char** argv) {
  if (argc < 2) throw std::invalid_argument("no mode given");
  Options options;
  options.mode = argv[1];
  if (options.mode != "produce" && options.mode != "consume") {
    throw std::invalid_argument("unknown mode '" + options.mode + "'");
  }
  for (int i = 2; i < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(std::string(flag) + " needs a value");
    const std::string_view value = argv[i + 1];
    if (flag == "--bootstrap-servers") {
      options.bootstrap_servers = value;
    } else if (flag == "--topic") {
      options.topic = value;
    } else if (flag == "--count") {
      options.count = ParseNumber<uint64_t>(flag, value);
    } else if (flag == "--size") {
      options.size = ParseNumber<size_t>(flag, value);
    } else if (flag == "--timeout-ms") {
      options.timeout_ms = ParseNumber<int>(flag, value);
    } else if (flag == "--warmup") {
      options.warmup = ParseNumber<uint64_t>(flag, value);
    } else if (flag == "--digest") {
      if (value != "fnv" && value != "sum64")
        throw std::invalid_argument("--digest is fnv or sum64");
      options.sum64 = value == "sum64";
    } else if (flag == "-X") {
      const auto eq = value.find('=');
      if (eq == std::string_view::npos) throw std::invalid_argument("-X wants key=value");
      options.config.emplace_back(value.substr(0, eq), value.substr(eq + 1));
    } else {
      throw std::invalid_argument("unknown option '" + std::string(flag) + "'");
    }
  }
  if (options.bootstrap_servers.empty() || options.topic.empty() || options.count == 0) {
    throw std::invalid_argument("--bootstrap-servers, --topic and a positive --count are required");
  }
  return options;
}

using Conf = std::unique_ptr<rd_kafka_conf_t, decltype(&rd_kafka_conf_destroy)>;

Conf NewConf(const Options& options, std::vector<std::pair<std::string, std::string>> defaults) {
  // User settings come last so that they override the defaults.
  defaults.emplace_back("bootstrap.servers", options.bootstrap_servers);
  defaults.insert(defaults.end(), options.config.begin(), options.config.end());
  Conf conf(rd_kafka_conf_new(), &rd_kafka_conf_destroy);
  std::array<char, 512> errstr{};
  for (const auto& [key, value] : defaults) {
    if (rd_kafka_conf_set(conf.get(), key.c_str(), value.c_str(), errstr.data(), errstr.size()) !=
        RD_KAFKA_CONF_OK) {
      throw std::invalid_argument(errstr.data());
    }
  }
  return conf;
}

Handle NewHandle(rd_kafka_type_t type, Conf conf) {
  std::array<char, 512> errstr{};
  rd_kafka_t* handle = rd_kafka_new(type, conf.get(), errstr.data(), errstr.size());
  if (handle == nullptr) throw std::runtime_error(errstr.data());
  conf.release();  // rd_kafka_new took ownership.
  return Handle(handle, &rd_kafka_destroy);
}

// Record i's value: deterministic bytes, so the consumer side can be checked by checksum.
void FillValue(uint64_t i, std::vector<uint8_t>& value) {
  for (size_t j = 0; j < value.size(); ++j) value[j] = static_cast<uint8_t>('a' + (i + j) % 26);
}

struct DeliveryFailures {
  uint64_t count = 0;
  std::string first;
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
  auto* failures = static_cast<DeliveryFailures*>(opaque);
  if (failures->count++ == 0) failures->first = rd_kafka_err2str(message->err);
}

Totals Produce(const Options& options) {
  DeliveryFailures failures;
  Conf conf = NewConf(options, {{"linger.ms", "5"}, {"batch.size", "1000000"}, {"acks", "all"}});
  rd_kafka_conf_set_dr_msg_cb(conf.get(), &OnDelivery);
  rd_kafka_conf_set_opaque(conf.get(), &failures);
  Handle producer = NewHandle(RD_KAFKA_PRODUCER, std::move(conf));

  Totals totals;
  std::vector<uint8_t> value(options.size);
  for (uint64_t i = 0; i < options.count; ++i) {
    FillValue(i, value);
    for (;;) {
      const rd_kafka_resp_err_t err =
          rd_kafka_producev(producer.get(), RD_KAFKA_V_TOPIC(options.topic.c_str()),
                            RD_KAFKA_V_VALUE(value.data(), value.size()),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        throw std::runtime_error(std::string("produce failed: ") + rd_kafka_err2str(err));
      }
      rd_kafka_poll(producer.get(), 100);  // The local queue is full: serve delivery reports.
    }
    rd_kafka_poll(producer.get(), 0);
    totals.Add(value);
  }
  if (const rd_kafka_resp_err_t err = rd_kafka_flush(producer.get(), options.timeout_ms)) {
    throw std::runtime_error(std::string("flush failed: ") + rd_kafka_err2str(err));
  }
  if (failures.count > 0) {
    throw std::runtime_error(std::to_string(failures.count) +
                             " records were not delivered, the first because: " + failures.first);
  }
  return totals;
}

PartitionList AllPartitionsFromStart(rd_kafka_t* consumer, const Options& options) {
  rd_kafka_topic_t* topic = rd_kafka_topic_new(consumer, options.topic.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(consumer, 0, topic, &metadata, options.timeout_ms);
  rd_kafka_topic_destroy(topic);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw std::runtime_error(std::string("metadata: ") + rd_kafka_err2str(err));
  }
  std::unique_ptr<const rd_kafka_metadata_t, decltype(&rd_kafka_metadata_destroy)> owned(
      metadata, &rd_kafka_metadata_destroy);
  if (metadata->topic_cnt != 1 || metadata->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw std::runtime_error("topic '" + options.topic + "' not found");
  }
  const rd_kafka_metadata_topic_t& info = metadata->topics[0];
  PartitionList list(rd_kafka_topic_partition_list_new(info.partition_cnt),
                     &rd_kafka_topic_partition_list_destroy);
  for (int i = 0; i < info.partition_cnt; ++i) {
    rd_kafka_topic_partition_list_add(list.get(), options.topic.c_str(), info.partitions[i].id)
        ->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  return list;
}

Totals Consume(const Options& options) {
  // Partitions are assigned, not subscribed: no group rebalance to wait for, nothing committed.
  Handle consumer =
      NewHandle(RD_KAFKA_CONSUMER, NewConf(options, {{"group.id", "sluice-kafka-tool"},
                                                     {"enable.auto.commit", "false"},
                                                     {"fetch.max.bytes", "52428800"},
                                                     {"queued.min.messages", "1000000"}}));
  const PartitionList partitions = AllPartitionsFromStart(consumer.get(), options);
  if (const rd_kafka_resp_err_t err = rd_kafka_assign(consumer.get(), partitions.get())) {
    throw std::runtime_error(std::string("assign: ") + rd_kafka_err2str(err));
  }
  Totals totals;
  totals.sum64 = options.sum64;
  const auto deadline = Clock::now() + std::chrono::milliseconds(options.timeout_ms);
  while (totals.records < options.count) {
    if (Clock::now() > deadline) {
      throw std::runtime_error("timed out after " + std::to_string(totals.records) + " of " +
                               std::to_string(options.count) + " records");
    }
    rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer.get(), 100);
    if (message == nullptr) continue;
    std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)> owned(
        message, &rd_kafka_message_destroy);
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error(std::string("consume: ") + rd_kafka_message_errstr(message));
    }
    if (totals.records == options.warmup) totals.StartWindow();
    totals.Add({static_cast<const uint8_t*>(message->payload), message->len});
  }
  totals.last_at = Clock::now();
  rd_kafka_consumer_close(consumer.get());
  return totals;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    std::printf("sluice %s, librdkafka %s\n", sluice_version(), rd_kafka_version_str());
    return 0;
  }
  try {
    const Options options = ParseOptions(argc, argv);
    const auto start = Clock::now();
    const Totals totals = options.mode == "produce" ? Produce(options) : Consume(options);
    const std::chrono::duration<double> elapsed = Clock::now() - start;
    const std::chrono::duration<double> window = totals.last_at - totals.first_at;
    const double cpu_s = CpuSeconds();
    std::printf(
        "records=%llu bytes=%llu seconds=%.6f cpu_s=%.6f checksum=%llu window_records=%llu "
        "window_bytes=%llu window_s=%.6f window_cpu_s=%.6f\n",
        static_cast<unsigned long long>(totals.records),
        static_cast<unsigned long long>(totals.bytes), elapsed.count(), cpu_s,
        static_cast<unsigned long long>(totals.checksum),
        static_cast<unsigned long long>(totals.records - totals.first_records),
        static_cast<unsigned long long>(totals.bytes - totals.first_bytes), window.count(),
        cpu_s - totals.first_cpu_s);
    return 0;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "sluice-kafka-tool: %s\n%s\n", e.what(), kUsage.data());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice-kafka-tool: %s\n", e.what());
    return 1;
  }
}
