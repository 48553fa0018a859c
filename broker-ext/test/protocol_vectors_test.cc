// The committed vectors under testdata/protocol/ are what the generator writes today, and every
// one decodes as manifest.txt says; the Java tests read the same files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest_util.h"
#include "protocol/codec.h"
#include "protocol/vectors.h"

namespace sluice::brokerd::protocol {
namespace {

namespace fs = std::filesystem;

const fs::path kVectors = BROKERD_PROTOCOL_VECTORS_DIR;

struct Entry {
  std::string file;
  std::map<std::string, std::string> values;  // result, then type and fields, or field
};

std::vector<uint8_t> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// manifest.txt: "[file]" opens an entry, "key=value" lines fill it, "#" lines are comments.
std::vector<Entry> Manifest() {
  std::ifstream in(kVectors / "manifest.txt");
  std::vector<Entry> entries;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.front() == '[' && line.back() == ']') {
      entries.push_back({line.substr(1, line.size() - 2), {}});
      continue;
    }
    const size_t equals = line.find('=');
    EXPECT_NE(equals, std::string::npos) << line;
    EXPECT_FALSE(entries.empty()) << line;
    if (equals == std::string::npos || entries.empty()) continue;
    entries.back().values[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return entries;
}

TEST(ProtocolVectors, TheManifestCoversEveryMessageAndTheMalformedCases) {
  std::map<std::string, std::set<std::string>> types;  // by version
  std::set<std::string> fields;
  for (const Entry& e : Manifest()) {
    if (e.values.at("result") == "ok") types[e.values.at("version")].insert(e.values.at("type"));
    if (e.values.at("result") == "error") fields.insert(e.values.at("field"));
  }
  const std::set<std::string> before_v3 = {"SUBSCRIBE", "SUBSCRIBED", "RELEASE",
                                           "HEARTBEAT", "ERROR",      "CLOSE"};
  std::set<std::string> v3 = before_v3;
  v3.insert("STREAM_GAP");
  std::set<std::string> v4 = v3;
  v4.insert({"PRODUCE", "PRODUCING"});
  EXPECT_EQ(types, (std::map<std::string, std::set<std::string>>{
                       {"1", before_v3}, {"2", before_v3}, {"3", v3}, {"4", v4}}));
  for (const char* field : {"frame_length", "version", "type", "topic", "mode", "message",
                            "partitions[1].start", "partition_count", "segment_dir", "flags",
                            "missing_to", "stream", "segment_path", "producer_id"}) {
    EXPECT_TRUE(fields.contains(field)) << field;
  }
}

TEST(ProtocolVectors, EveryVectorDecodesAsTheManifestSays) {
  const std::vector<Entry> entries = Manifest();
  ASSERT_FALSE(entries.empty());
  for (const Entry& e : entries) {
    SCOPED_TRACE(e.file);
    const std::vector<uint8_t> bytes = ReadFile(kVectors / e.file);
    ASSERT_FALSE(bytes.empty());
    auto decoded = DecodeFrame(bytes);
    if (e.values.at("result") == "error") {
      ASSERT_RAISES(InvalidArgument, decoded);
      EXPECT_EQ(decoded.status().message().rfind(e.values.at("field") + " = ", 0), 0u)
          << decoded.status().message();
      continue;
    }
    ASSERT_EQ(e.values.at("result"), "ok");
    ASSERT_OK(decoded);
    std::map<std::string, std::string> described = {{"result", "ok"}};
    for (const auto& [key, value] : vectors::Describe(*decoded)) described[key] = value;
    EXPECT_EQ(described, e.values);
    auto encoded = EncodeFrame(*decoded);
    ASSERT_OK(encoded);
    EXPECT_EQ(*encoded, bytes);
  }
}

TEST(ProtocolVectors, TheCommittedFilesAreWhatTheGeneratorWrites) {
  const fs::path fresh = fs::path(::testing::TempDir()) / "protocol-vectors";
  fs::remove_all(fresh);
  fs::create_directories(fresh);
  ASSERT_OK(vectors::WriteAll(fresh.string()));
  std::set<std::string> written;
  for (const auto& file : fs::directory_iterator(fresh)) {
    const std::string name = file.path().filename().string();
    written.insert(name);
    EXPECT_EQ(ReadFile(file.path()), ReadFile(kVectors / name))
        << name << " differs: run sluice-protocol-vectors testdata/protocol";
  }
  std::set<std::string> committed;
  for (const auto& file : fs::directory_iterator(kVectors)) {
    committed.insert(file.path().filename().string());
  }
  EXPECT_EQ(written, committed);
}

}  // namespace
}  // namespace sluice::brokerd::protocol
