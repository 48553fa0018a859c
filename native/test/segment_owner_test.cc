// ReaderOptions::owner_uid: a reader that must only open a file of one uid (the daemon opening a
// producer's segment, docs/brokerd.md, "Local producers") refuses another owner's file, a
// symbolic link and anything but a regular file, and opens the right owner's segment as usual.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "sluice/segment_reader.h"
#include "sluice/segment_writer.h"
#include "test_util.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using testing::PublishRecords;
using testing::ScopedName;
using testing::SmallWriter;

// A uid that is not the test's own (root's tests chown the segment to it).
constexpr uid_t kOtherUid = 4242;

ReaderOptions OwnedBy(uid_t uid) {
  ReaderOptions options;
  options.owner_uid = uid;
  return options;
}

TEST(SegmentOwner, OpensTheSegmentOfTheExpectedOwner) {
  ScopedName name("owner-same");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.path(), OwnedBy(geteuid())));
  ASSERT_OK(PublishRecords(*writer, 0, 3));
  ASSERT_OK_AND_ASSIGN(auto object, reader->Next(5s));
  EXPECT_EQ(object.record_count, 3u);
  ASSERT_OK(reader->Release(object));
}

TEST(SegmentOwner, RefusesAFileOfAnotherOwnerNamingBothUids) {
  ScopedName name("owner-other");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  if (geteuid() == 0) {
    ASSERT_EQ(chown(name.path().c_str(), kOtherUid, static_cast<gid_t>(-1)), 0);
  }
  // Without root the file is the test's own: expecting another uid is the same mismatch.
  const uid_t owner = geteuid() == 0 ? kOtherUid : geteuid();
  const uid_t expected = geteuid() == 0 ? geteuid() : kOtherUid;
  auto reader = SegmentReader::Open(name.path(), OwnedBy(expected));
  ASSERT_EQ(reader.status().code(), StatusCode::kInvalidArgument) << reader.status().ToString();
  EXPECT_NE(reader.status().message().find(name.path()), std::string::npos);
  EXPECT_NE(reader.status().message().find("owned by uid " + std::to_string(owner)),
            std::string::npos)
      << reader.status().message();
  EXPECT_NE(reader.status().message().find("not by uid " + std::to_string(expected)),
            std::string::npos)
      << reader.status().message();
  EXPECT_EQ(writer->attached_readers(), 0u) << "a refused reader takes no lane";
  // Unchecked, the same file opens: the refusal is the owner check's.
  ASSERT_OK(SegmentReader::Open(name.path()));
}

TEST(SegmentOwner, AcceptsAnotherUidsFileWhenThatUidIsExpected) {
  if (geteuid() != 0) GTEST_SKIP() << "chown to another uid needs root";
  ScopedName name("owner-chowned");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  ASSERT_EQ(chown(name.path().c_str(), kOtherUid, static_cast<gid_t>(-1)), 0);
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.path(), OwnedBy(kOtherUid)));
  EXPECT_EQ(writer->attached_readers(), 1u);
}

TEST(SegmentOwner, RefusesASymbolicLinkToTheOwnersSegment) {
  ScopedName name("owner-link");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  const std::string link = name.path() + ".link";
  std::filesystem::remove(link);
  std::filesystem::create_symlink(name.path(), link);
  auto reader = SegmentReader::Open(link, OwnedBy(geteuid()));
  std::filesystem::remove(link);
  ASSERT_EQ(reader.status().code(), StatusCode::kInvalidArgument) << reader.status().ToString();
  EXPECT_NE(reader.status().message().find(link + " is a symbolic link"), std::string::npos)
      << reader.status().message();
  EXPECT_EQ(writer->attached_readers(), 0u);
}

TEST(SegmentOwner, RefusesAFileThatIsNotRegular) {
  ScopedName name("owner-fifo");
  ASSERT_EQ(mkfifo(name.path().c_str(), 0600), 0);
  auto reader = SegmentReader::Open(name.path(), OwnedBy(geteuid()));
  ASSERT_EQ(reader.status().code(), StatusCode::kInvalidArgument) << reader.status().ToString();
  EXPECT_NE(reader.status().message().find(name.path() + " is not a regular file"),
            std::string::npos)
      << reader.status().message();
}

}  // namespace
}  // namespace sluice
