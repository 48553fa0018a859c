// The C API end to end: writer and reader through handles, and errors as codes plus text.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <deque>
#include <filesystem>
#include <string>

#include "content_rule.h"
#include "sluice/sluice.h"
#include "test_util.h"

namespace sluice {
namespace {

TEST(CApi, WriteReadReleaseAndEnd) {
  testing::ScopedName name("c-api");
  sluice_writer_config_t config;
  sluice_writer_config_init(&config);
  EXPECT_EQ(config.slot_count, 64u);
  config.name = name.name().c_str();
  config.slot_count = 2;
  config.slot_size = 8192;
  sluice_writer_t* writer = nullptr;
  ASSERT_EQ(sluice_writer_create(&config, &writer), SLUICE_OK) << sluice_last_error();
  sluice_reader_t* reader = nullptr;
  ASSERT_EQ(sluice_reader_open(config.name, 1000, &reader), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_writer_wait_readers(writer, 1, 0), SLUICE_OK);

  void* buffer = nullptr;
  size_t capacity = 0;
  ASSERT_EQ(sluice_writer_acquire(writer, 1000, &buffer, &capacity), SLUICE_OK);
  EXPECT_EQ(capacity, 8192u);
  ChunksBatchBuilder builder;
  builder.Add({"job-1", "s0", 0, true, "payload"});
  ASSERT_OK_AND_ASSIGN(auto encoded, builder.Finish(static_cast<uint8_t*>(buffer), capacity));
  uint64_t id = 99;
  ASSERT_EQ(sluice_writer_publish(writer, encoded.length, 1, 7, 10, 10, &id), SLUICE_OK);
  EXPECT_EQ(id, 0u);

  sluice_object_t object;
  ASSERT_EQ(sluice_reader_next(reader, 1000, &object), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(object.object_id, 0u);
  EXPECT_EQ(object.length, encoded.length);
  EXPECT_EQ(object.record_count, 1u);
  EXPECT_EQ(object.partition, 7);
  EXPECT_EQ(object.first_offset, 10);
  EXPECT_EQ(object.last_offset, 10);
  EXPECT_EQ(std::memcmp(object.data, buffer, object.length), 0);
  EXPECT_EQ(sluice_reader_next(reader, 0, &object), SLUICE_ERR_TIMED_OUT);
  ASSERT_EQ(sluice_reader_release(reader, &object), SLUICE_OK);
  EXPECT_EQ(sluice_reader_release(reader, &object), SLUICE_ERR_EVICTED);

  ASSERT_EQ(sluice_writer_close(writer, 1000), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_reader_next(reader, 1000, &object), SLUICE_ERR_END_OF_STREAM);
  sluice_reader_destroy(reader);
  sluice_writer_destroy(writer);
}

TEST(CApi, ErrorsComeWithCodesAndText) {
  sluice_reader_t* reader = nullptr;
  EXPECT_EQ(sluice_reader_open("sluice-test-no-such-segment", 0, &reader), SLUICE_ERR_IO);
  EXPECT_NE(std::string(sluice_last_error()).find("sluice-test-no-such-segment"),
            std::string::npos);
  EXPECT_EQ(sluice_reader_open(nullptr, 0, &reader), SLUICE_ERR_INVALID_ARGUMENT);

  testing::ScopedName name("c-api-corrupt");
  std::filesystem::copy_file(SLUICE_TESTDATA_DIR "/bad-magic.seg", name.path());
  EXPECT_EQ(sluice_reader_open(name.name().c_str(), 0, &reader), SLUICE_ERR_CORRUPT);
  EXPECT_NE(std::string(sluice_last_error()).find("magic"), std::string::npos);

  sluice_writer_config_t config;
  sluice_writer_config_init(&config);
  config.name = "sluice-test-bad-config";
  config.lane_count = 40;
  sluice_writer_t* writer = nullptr;
  EXPECT_EQ(sluice_writer_create(&config, &writer), SLUICE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("lane_count = 40"), std::string::npos);
}

// A caller built against an older sluice.h passes the smaller struct it knows (sluice.h, "A config
// grows"): what lies past its end is not read, and those fields take their defaults. Here that is
// an access group create would refuse.
TEST(CApi, AnOlderCallersConfigIsReadOnlyAsFarAsItsSize) {
  testing::ScopedName name("c-api-old-config");
  sluice_writer_config_t config;
  sluice_writer_config_init(&config);
  config.name = name.name().c_str();
  config.slot_count = 2;
  config.slot_size = 8192;
  config.access_group = -5;
  config.struct_size = offsetof(sluice_writer_config_t, access_group);
  sluice_writer_t* writer = nullptr;
  ASSERT_EQ(sluice_writer_create(&config, &writer), SLUICE_OK) << sluice_last_error();
  struct stat info {};
  ASSERT_EQ(stat(name.path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0600u) << "no access group, the default";
  sluice_writer_destroy(writer);
}

// sluice_writer_config_init passes the caller's sizeof: the library, whose struct may have grown
// since, fills only that much.
TEST(CApi, ConfigInitWritesNothingPastTheCallersSize) {
  sluice_writer_config_t config;
  std::memset(&config, 0xAB, sizeof(config));
  sluice_writer_config_t untouched = config;
  sluice_writer_config_init_sized(&config, offsetof(sluice_writer_config_t, access_group));
  EXPECT_EQ(config.struct_size, offsetof(sluice_writer_config_t, access_group));
  EXPECT_EQ(config.slot_count, 64u);
  EXPECT_EQ(config.checksums, 1);
  EXPECT_EQ(config.access_group, untouched.access_group);

  sluice_writer_config_init(&config);
  EXPECT_EQ(config.struct_size, sizeof(sluice_writer_config_t));
  EXPECT_EQ(config.access_group, -1);
}

TEST(CApi, AConfigOfAnUnknownSizeIsRefusedNamingWhatToDo) {
  testing::ScopedName name("c-api-sized-config");
  sluice_writer_config_t config;
  sluice_writer_config_init(&config);
  config.name = name.name().c_str();
  sluice_writer_t* writer = nullptr;

  config.struct_size = sizeof(sluice_writer_config_t) + 8;
  EXPECT_EQ(sluice_writer_create(&config, &writer), SLUICE_ERR_INVALID_ARGUMENT);
  const std::string larger = sluice_last_error();
  EXPECT_NE(larger.find("struct_size = " + std::to_string(sizeof(sluice_writer_config_t) + 8)),
            std::string::npos)
      << larger;
  EXPECT_NE(larger.find("newer sluice.h"), std::string::npos) << larger;

  config.struct_size = 0;
  EXPECT_EQ(sluice_writer_create(&config, &writer), SLUICE_ERR_INVALID_ARGUMENT);
  const std::string smaller = sluice_last_error();
  EXPECT_NE(smaller.find("struct_size = 0"), std::string::npos) << smaller;
  EXPECT_NE(smaller.find("sluice_writer_config_init"), std::string::npos) << smaller;

  EXPECT_EQ(writer, nullptr);
  EXPECT_FALSE(std::filesystem::exists(name.path()));
}

TEST(CApi, EveryCodeHasADescription) {
  for (int code = SLUICE_OK; code <= SLUICE_ERR_NO_SPACE; ++code) {
    EXPECT_STRNE(sluice_err_str(static_cast<sluice_err_t>(code)), "unknown error") << code;
  }
}

}  // namespace
}  // namespace sluice
