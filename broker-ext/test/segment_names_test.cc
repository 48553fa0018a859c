// Segment names (daemon/segment_names.h): random and fresh per segment, a file in the way passed
// over, and the files of gone daemons, this PID's earlier runs included, told from live ones.
#include "daemon/segment_names.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "gtest_util.h"
#include "sluice/random_name.h"

namespace sluice::brokerd {
namespace {

// Hands out the given hex strings in order, whatever the size asked.
SegmentNames::RandomSource Script(std::deque<std::string> values) {
  return [values = std::move(values)](size_t) mutable -> Result<std::string> {
    if (values.empty()) return Status::InvalidState("the script ran out");
    std::string next = values.front();
    values.pop_front();
    return next;
  };
}

class SegmentNamesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("segment-names-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Touch(const std::string& name, const std::string& content = "") const {
    std::ofstream(dir_ / name) << content;
  }

  std::set<std::string> Left() const {
    std::set<std::string> left;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      left.insert(entry.path().filename().string());
    }
    return left;
  }

  // Holds `name`'s lock as a live daemon holds its run's, until the descriptor is closed.
  int HoldLock(const std::string& name) const {
    const int fd = ::open((dir_ / name).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    return fd;
  }

  std::filesystem::path dir_;
};

TEST_F(SegmentNamesTest, NamesArePidRunAndAFreshRandomPart) {
  auto names = SegmentNames::ForThisRun();
  ASSERT_OK(names);
  const std::string prefix =
      "sluice-brokerd." + std::to_string(getpid()) + "." + names->run() + ".";
  EXPECT_EQ(names->run().size(), 8u);
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK_AND_ASSIGN(const std::string name, names->Next());
    ASSERT_TRUE(name.starts_with(prefix)) << name;
    const std::string random = name.substr(prefix.size());
    EXPECT_EQ(random.size(), 16u) << name;
    EXPECT_EQ(random.find_first_not_of("0123456789abcdef"), std::string::npos) << name;
    seen.insert(name);
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_NE(SegmentNames::ForThisRun()->run(), names->run()) << "another run, another token";
}

// The daemon warns when doorbells cannot be bound in its segment folder: sun_path is 108 bytes.
TEST_F(SegmentNamesTest, TheLongestPathIsTheDoorbellsTemporaryName) {
  ASSERT_OK_AND_ASSIGN(auto names,
                       SegmentNames::Create(4242, Script({"0badf00d", "0123456789abcdef"})));
  ASSERT_OK_AND_ASSIGN(const std::string name, names.Next());
  ASSERT_OK_AND_ASSIGN(const std::string suffix, TemporarySuffix());
  const std::string bell_temporary = "/dev/shm/" + name + ".bell" + suffix;
  EXPECT_EQ(names.LongestPathIn("/dev/shm"), bell_temporary.size()) << bell_temporary;
}

TEST_F(SegmentNamesTest, AFileInTheWayOfANameIsPassedOverAndLeftAlone) {
  ASSERT_OK_AND_ASSIGN(
      auto names, SegmentNames::Create(4242, Script({"0badf00d", "aaaaaaaaaaaaaaaa",
                                                     "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"})));
  const std::string taken = "sluice-brokerd.4242.0badf00d.aaaaaaaaaaaaaaaa";
  Touch(taken, "someone else's");
  WriterOptions options;
  options.slot_count = 2;
  options.slot_size = 4096;
  options.lane_count = 1;
  auto created = CreateSegment(options, dir_.string(), names);
  ASSERT_OK(created);
  EXPECT_EQ(created->name, "sluice-brokerd.4242.0badf00d.bbbbbbbbbbbbbbbb");
  EXPECT_TRUE(std::filesystem::exists(dir_ / created->name));
  std::ifstream in(dir_ / taken);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "someone else's");
}

TEST_F(SegmentNamesTest, NamesTakenOverAndOverGiveUpWithTheError) {
  std::deque<std::string> script = {"0badf00d"};
  for (int i = 0; i < 20; ++i) script.push_back("aaaaaaaaaaaaaaaa");
  ASSERT_OK_AND_ASSIGN(auto names, SegmentNames::Create(4242, Script(script)));
  Touch("sluice-brokerd.4242.0badf00d.aaaaaaaaaaaaaaaa");
  WriterOptions options;
  options.slot_count = 2;
  options.slot_size = 4096;
  auto created = CreateSegment(options, dir_.string(), names);
  EXPECT_RAISES(AlreadyExists, created);
  EXPECT_NE(created.status().message().find("aaaaaaaaaaaaaaaa"), std::string::npos)
      << created.status().message();
}

TEST_F(SegmentNamesTest, FilesOfGoneDaemonsAndOfThisPidsEarlierRunsAreTold) {
  ASSERT_OK_AND_ASSIGN(auto names, SegmentNames::Create(100, Script({"0000run1"})));
  auto running = [](pid_t pid) { return pid == 100 || pid == 200; };
  // This daemon's own files.
  EXPECT_FALSE(names.LeftByAGoneDaemon("sluice-brokerd.100.0000run1.0123456789abcdef", running));
  EXPECT_FALSE(
      names.LeftByAGoneDaemon("sluice-brokerd.100.0000run1.0123456789abcdef.bell", running));
  // Its PID's earlier run (a restart in a container gets the same PID), any kind of file, and the
  // names daemons gave before runs were named.
  EXPECT_TRUE(names.LeftByAGoneDaemon("sluice-brokerd.100.0000run0.0123456789abcdef", running));
  EXPECT_TRUE(names.LeftByAGoneDaemon(
      "sluice-brokerd.100.0000run0.0123456789abcdef.tmp-00112233aabbccdd", running));
  EXPECT_TRUE(names.LeftByAGoneDaemon(
      "sluice-brokerd.100.0000run0.0123456789abcdef.bell.tmp-00112233aabbccdd", running));
  EXPECT_TRUE(names.LeftByAGoneDaemon("sluice-brokerd.100.7", running));
  // Another daemon that runs, and one that does not.
  EXPECT_FALSE(names.LeftByAGoneDaemon("sluice-brokerd.200.0000run9.0123456789abcdef", running));
  EXPECT_TRUE(names.LeftByAGoneDaemon("sluice-brokerd.300.0000run9.0123456789abcdef", running));
  EXPECT_TRUE(names.LeftByAGoneDaemon("sluice-brokerd.300.7.bell", running));
  // Not a daemon's: other programs' files, and names without a PID.
  EXPECT_FALSE(names.LeftByAGoneDaemon("orders", running));
  EXPECT_FALSE(names.LeftByAGoneDaemon("sluice-brokerd.", running));
  EXPECT_FALSE(names.LeftByAGoneDaemon("sluice-brokerd.x1.0000run0.00", running));
  EXPECT_FALSE(names.LeftByAGoneDaemon("sluice-brokerd.0.0000run0.00", running));
  EXPECT_FALSE(names.LeftByAGoneDaemon("sluice-brokerd.300", running));
}

TEST_F(SegmentNamesTest, RemoveLeftoversRemovesOnlyGoneDaemonsFiles) {
  ASSERT_OK_AND_ASSIGN(auto names,
                       SegmentNames::Create(getpid(), Script({"0000run1", "cccccccccccccccc"})));
  const std::string pid = std::to_string(getpid());
  const std::string mine = "sluice-brokerd." + pid + ".0000run1.0123456789abcdef";
  const std::string earlier_run = "sluice-brokerd." + pid + ".0000run0.0123456789abcdef";
  // PIDs are at most 2^22 on Linux: this one never runs.
  const std::string gone = "sluice-brokerd.99999999.0000run0.0123456789abcdef";
  const std::string other_program = "orders";
  for (const auto& name : {mine, earlier_run, earlier_run + ".bell", gone, other_program}) {
    Touch(name);
  }
  names.RemoveLeftovers(dir_.string());
  const std::string own_lock = "sluice-brokerd." + pid + ".0000run1.lock";
  EXPECT_EQ(Left(), (std::set<std::string>{mine, other_program, own_lock}))
      << "this run took its lock first";
}

// Containers sharing one /dev/shm: a live daemon's PID may not exist in this PID namespace, or be
// this daemon's own. Its held lock keeps its files; a run whose lock nobody holds is gone.
TEST_F(SegmentNamesTest, ARunWhoseLockIsHeldIsKeptWhateverItsPidAndOneWithoutAHolderRemoved) {
  ASSERT_OK_AND_ASSIGN(auto names,
                       SegmentNames::Create(getpid(), Script({"0000run1", "cccccccccccccccc"})));
  const std::string pid = std::to_string(getpid());
  // PIDs are at most 2^22 on Linux: these never run here.
  const std::string elsewhere = "sluice-brokerd.99999999.0000run7";
  const std::string same_pid_elsewhere = "sluice-brokerd." + pid + ".0000run8";
  const std::string gone = "sluice-brokerd.99999998.0000run9";
  const int live_lock = HoldLock(elsewhere + ".lock");
  const int same_pid_lock = HoldLock(same_pid_elsewhere + ".lock");
  Touch(gone + ".lock");
  const std::set<std::string> kept = {
      elsewhere + ".lock",
      elsewhere + ".0123456789abcdef",
      elsewhere + ".0123456789abcdef.bell",
      same_pid_elsewhere + ".lock",
      same_pid_elsewhere + ".0123456789abcdef",
      same_pid_elsewhere + ".0123456789abcdef.tmp-00112233aabbccdd"};
  for (const std::string& name : kept) Touch(name);
  for (const std::string& name : {gone + ".0123456789abcdef", gone + ".0123456789abcdef.bell",
                                  gone + ".fedcba9876543210.tmp-00112233aabbccdd"}) {
    Touch(name);
  }

  names.RemoveLeftovers(dir_.string());
  const std::string own_lock = "sluice-brokerd." + pid + ".0000run1.lock";
  std::set<std::string> expected = kept;
  expected.insert(own_lock);
  EXPECT_EQ(Left(), expected) << "the live runs' files stay, the gone run's go, its lock file too";

  // Once its holder is gone, the run is too.
  ::close(live_lock);
  ::close(same_pid_lock);
  names.RemoveLeftovers(dir_.string());
  EXPECT_EQ(Left(), std::set<std::string>{own_lock});
}

TEST_F(SegmentNamesTest, TheFirstSegmentTakesTheRunsLockWhichKeepsItsFilesUntilTheNamesEnd) {
  ASSERT_OK_AND_ASSIGN(
      auto names,
      SegmentNames::Create(99999999, Script({"0000run1", "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"})));
  WriterOptions options;
  options.slot_count = 2;
  options.slot_size = 4096;
  options.lane_count = 1;
  auto created = CreateSegment(options, dir_.string(), names);
  ASSERT_OK(created);
  const std::string lock = "sluice-brokerd.99999999.0000run1.lock";
  struct stat info {};
  ASSERT_EQ(::stat((dir_ / lock).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u) << "owner-only";
  EXPECT_EQ(Left(), (std::set<std::string>{lock, created->name}))
      << "the lock file was made under a name of its own and linked into place";

  // Another daemon, in a PID namespace where 99999999 does not run, leaves them alone.
  ASSERT_OK_AND_ASSIGN(auto other,
                       SegmentNames::Create(getpid(), Script({"0000run2", "cccccccccccccccc"})));
  other.RemoveLeftovers(dir_.string());
  EXPECT_TRUE(std::filesystem::exists(dir_ / created->name));

  created->writer.reset();
  ASSERT_OK_AND_ASSIGN(names, SegmentNames::Create(getpid(), Script({"0000run3"})));
  EXPECT_FALSE(std::filesystem::exists(dir_ / lock)) << "the names' end removes the lock file";
}

TEST_F(SegmentNamesTest, ALockFileInTheWayFailsTheSegmentNamingIt) {
  ASSERT_OK_AND_ASSIGN(
      auto names,
      SegmentNames::Create(4242, Script({"0000run1", "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"})));
  Touch("sluice-brokerd.4242.0000run1.lock", "someone else's");
  WriterOptions options;
  options.slot_count = 2;
  options.slot_size = 4096;
  auto created = CreateSegment(options, dir_.string(), names);
  EXPECT_RAISES(AlreadyExists, created);
  EXPECT_NE(created.status().message().find("sluice-brokerd.4242.0000run1.lock exists"),
            std::string::npos)
      << created.status().message();
  EXPECT_EQ(Left(), std::set<std::string>{"sluice-brokerd.4242.0000run1.lock"})
      << "nothing else was made";
}

}  // namespace
}  // namespace sluice::brokerd
