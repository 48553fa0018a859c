// Proves that Debian's librdkafka links and works: a consumer handle is created from a
// configuration and destroyed, and a bad configuration is refused with a clear error.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <array>
#include <string>

namespace {

TEST(RdKafkaHandle, ConsumerIsCreatedAndDestroyed) {
  std::array<char, 512> errstr{};
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  ASSERT_EQ(
      rd_kafka_conf_set(conf, "bootstrap.servers", "127.0.0.1:9", errstr.data(), errstr.size()),
      RD_KAFKA_CONF_OK);
  ASSERT_EQ(rd_kafka_conf_set(conf, "group.id", "sluice-test", errstr.data(), errstr.size()),
            RD_KAFKA_CONF_OK);

  // rd_kafka_new takes ownership of conf on success.
  rd_kafka_t* consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr.data(), errstr.size());
  ASSERT_NE(consumer, nullptr) << errstr.data();
  EXPECT_EQ(rd_kafka_type(consumer), RD_KAFKA_CONSUMER);
  EXPECT_NE(std::string(rd_kafka_name(consumer)), "");
  EXPECT_GE(rd_kafka_version(), 0x02000000) << rd_kafka_version_str();

  EXPECT_EQ(rd_kafka_consumer_close(consumer), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(consumer);
}

TEST(RdKafkaHandle, UnknownPropertyIsRefusedWithAClearError) {
  std::array<char, 512> errstr{};
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  EXPECT_EQ(rd_kafka_conf_set(conf, "no.such.property", "1", errstr.data(), errstr.size()),
            RD_KAFKA_CONF_UNKNOWN);
  EXPECT_NE(std::string(errstr.data()).find("no.such.property"), std::string::npos)
      << errstr.data();
  rd_kafka_conf_destroy(conf);
}

}  // namespace
