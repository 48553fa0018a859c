// A segment shared with a group (docs/formats.md, "File layout"): its file and its doorbell are
// 0660 and the group's before their names appear, a reader of another uid in the group maps it,
// reads and is woken through the doorbell, and a uid outside the group cannot open it. The tests
// run as root, so a forked child can become any uid and gid.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include "sluice/doorbell.h"
#include "sluice/segment_reader.h"
#include "sluice/segment_writer.h"
#include "sluice/sluice.h"
#include "test_util.h"

namespace sluice {
namespace {

using testing::ScopedName;
using testing::SmallWriter;

// Ids nobody on a test machine uses: the group, a reader in it, and a stranger outside it.
constexpr gid_t kGroup = 54320;
constexpr uid_t kMember = 54321;
constexpr uid_t kStranger = 54322;
constexpr gid_t kStrangersGroup = 54323;

// Runs `body` in a forked child that dropped to `uid` with primary group `gid` and no
// supplementary ones; what it returns is the child's exit code (0: it did what it should).
int RunAs(uid_t uid, gid_t gid, const std::function<int()>& body) {
  const pid_t child = fork();
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(100);
    _exit(body());
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct stat Stat(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(stat(path.c_str(), &info), 0) << path << ": " << std::strerror(errno);
  return info;
}

class SegmentAccessGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to become other uids";
  }
};

TEST_F(SegmentAccessGroupTest, TheSegmentAndItsDoorbellAreTheGroups0660) {
  ScopedName name("access-group");
  WriterOptions options = SmallWriter(name.name());
  options.access_group = kGroup;
  auto writer = SegmentWriter::Create(options);
  ASSERT_OK(writer);
  for (const std::string& path : {name.path(), name.path() + ".bell"}) {
    const struct stat info = Stat(path);
    EXPECT_EQ(info.st_mode & 07777, 0660u) << path;
    EXPECT_EQ(info.st_gid, kGroup) << path;
    EXPECT_EQ(info.st_uid, geteuid()) << path;
  }
}

TEST_F(SegmentAccessGroupTest, WithoutAGroupTheFilesAreTheOwnersAlone) {
  ScopedName name("owner-only");
  auto writer = SegmentWriter::Create(SmallWriter(name.name()));
  ASSERT_OK(writer);
  for (const std::string& path : {name.path(), name.path() + ".bell"}) {
    EXPECT_EQ(Stat(path).st_mode & 07777, 0600u) << path;
  }
  EXPECT_NE(RunAs(kMember, kGroup, [&] { return SegmentReader::Open(name.path()).ok() ? 0 : 1; }),
            0)
      << "a uid of the group opened an owner-only segment";
}

TEST_F(SegmentAccessGroupTest, AMemberOfAnotherUidMapsAndReadsTheSegment) {
  ScopedName name("group-reader");
  WriterOptions options = SmallWriter(name.name());
  options.access_group = kGroup;
  auto writer = SegmentWriter::Create(options);
  ASSERT_OK(writer);
  const pid_t child = fork();
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(kGroup) != 0 || setuid(kMember) != 0) _exit(100);
    auto reader = SegmentReader::Open(name.path());
    if (!reader.ok()) _exit(1);
    auto object = (*reader)->Next(std::chrono::seconds(10));
    if (!object.ok() || object->record_count != 3) _exit(2);
    _exit((*reader)->Release(*object).ok() ? 0 : 3);
  }
  ASSERT_OK((*writer)->WaitForReaders(1, std::chrono::seconds(10)));
  ASSERT_OK(testing::PublishRecords(**writer, 0, 3));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: open, 2: next, 3: release, 100: setuid";
  EXPECT_TRUE(testing::Eventually("the child's release to reach the writer",
                                  [&] { return (*writer)->ReleasedBelow() == 1; }));
}

// A connection of the member: refused by the socket file's mode without a group (and by the
// server's uid check when the mode is opened by hand), kept and rung with one.
TEST_F(SegmentAccessGroupTest, TheDoorbellKeepsAConnectionOfAnotherUidOnlyWithAGroup) {
  enum class Bell { kOwnerOnly, kOwnerOnlyOpenedByHand, kShared };
  for (const Bell bell : {Bell::kOwnerOnly, Bell::kOwnerOnlyOpenedByHand, Bell::kShared}) {
    SCOPED_TRACE(static_cast<int>(bell));
    ScopedName name("bell");
    auto server = DoorbellServer::Listen(
        name.path(), 1, bell == Bell::kShared ? Sharing{.group = kGroup, .user = {}} : Sharing{});
    ASSERT_OK(server);
    if (bell == Bell::kOwnerOnlyOpenedByHand) {
      ASSERT_EQ(chmod(name.path().c_str(), 0666), 0);
    }
    const pid_t child = fork();
    if (child == 0) {
      if (setgroups(0, nullptr) != 0 || setgid(kGroup) != 0 || setuid(kMember) != 0) _exit(100);
      auto client = DoorbellClient::Connect(name.path(), 0);
      if (!client.ok()) _exit(1);
      // A ring is a byte; a refused connection is a hang-up.
      _exit(client->Wait(std::chrono::seconds(10)) && client->connected() ? 0 : 2);
    }
    int status = 0;
    ASSERT_TRUE(testing::Eventually("the child to exit, rung or refused", [&] {
      server->Ring(0);
      return waitpid(child, &status, WNOHANG) == child;
    }));
    ASSERT_TRUE(WIFEXITED(status));
    const int expected = bell == Bell::kOwnerOnly ? 1 : bell == Bell::kShared ? 0 : 2;
    EXPECT_EQ(WEXITSTATUS(status), expected) << "1: connect refused, 2: hung up, 0: rung";
  }
}

// One reader's uid by an ACL entry (the daemon's segment for its subscriber): that reader maps the
// segment and connects to its doorbell; a member of the file's group does neither.
TEST_F(SegmentAccessGroupTest, AReaderUidOpensTheSegmentAndItsDoorbellAndTheGroupNeither) {
  ScopedName name("reader-uid");
  WriterOptions options = SmallWriter(name.name());
  options.reader_uid = kMember;
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  const gid_t files_group = Stat(name.path()).st_gid;
  EXPECT_EQ(RunAs(kMember, kGroup,
                  [&] {
                    auto reader = SegmentReader::Open(name.path());
                    if (!reader.ok()) return 1;
                    return DoorbellClient::Connect(name.path() + ".bell", 0).ok() ? 0 : 2;
                  }),
            0)
      << "1: the segment, 2: the doorbell";
  for (const std::string& path : {name.path(), name.path() + ".bell"}) {
    EXPECT_EQ(RunAs(kStranger, files_group,
                    [&] {
                      const int fd = open(path.c_str(), O_RDONLY);
                      return fd < 0 && errno == EACCES ? 0 : 1;
                    }),
              0)
        << path;
  }
  EXPECT_EQ(RunAs(kStranger, files_group,
                  [&] {
                    auto client = DoorbellClient::Connect(name.path() + ".bell", 0);
                    return client.ok() ? 1 : 0;
                  }),
            0)
      << "the stranger connected to the doorbell";
}

TEST_F(SegmentAccessGroupTest, AUidOutsideTheGroupCannotOpenTheSegment) {
  ScopedName name("group-stranger");
  WriterOptions options = SmallWriter(name.name());
  options.access_group = kGroup;
  auto writer = SegmentWriter::Create(options);
  ASSERT_OK(writer);
  EXPECT_EQ(RunAs(kStranger, kStrangersGroup,
                  [&] {
                    const int fd = open(name.path().c_str(), O_RDONLY);
                    return fd < 0 && errno == EACCES ? 0 : 1;
                  }),
            0);
}

TEST_F(SegmentAccessGroupTest, AWriterOutsideTheGroupFailsAndLeavesNothing) {
  ScopedName name("group-not-mine");
  EXPECT_EQ(RunAs(kStranger, kStrangersGroup,
                  [&] {
                    WriterOptions options = SmallWriter(name.name());
                    options.access_group = kGroup;
                    auto writer = SegmentWriter::Create(options);
                    return !writer.ok() &&
                                   writer.status().message().find("chown") != std::string::npos
                               ? 0
                               : 1;
                  }),
            0);
  EXPECT_FALSE(std::filesystem::exists(name.path()));
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    EXPECT_EQ(entry.path().filename().string().rfind(name.name(), 0), std::string::npos)
        << entry.path();
  }
}

TEST_F(SegmentAccessGroupTest, TheCApiTakesTheGroupAndRefusesANegativeOne) {
  ScopedName name("group-c-api");
  sluice_writer_config_t config;
  sluice_writer_config_init(&config);
  EXPECT_EQ(config.access_group, -1);
  config.name = name.name().c_str();
  config.slot_count = 4;
  config.slot_size = 4096;
  config.access_group = -2;
  sluice_writer_t* writer = nullptr;
  EXPECT_EQ(sluice_writer_create(&config, &writer), SLUICE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sluice_last_error()).find("access_group"), std::string::npos);
  config.access_group = kGroup;
  ASSERT_EQ(sluice_writer_create(&config, &writer), SLUICE_OK) << sluice_last_error();
  const struct stat info = Stat(name.path());
  EXPECT_EQ(info.st_mode & 07777, 0660u);
  EXPECT_EQ(info.st_gid, kGroup);
  sluice_writer_destroy(writer);
}

}  // namespace
}  // namespace sluice
