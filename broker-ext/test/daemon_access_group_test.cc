// sluice.access.group in the real daemon (docs/brokerd.md, "Security model"): a process of
// another uid in the group reaches the socket through the folder the daemon made, subscribes,
// maps the segment and reads its records; without the setting it cannot connect; neither another
// member nor a uid outside the group can open a segment knowing its name; and a group the daemon
// cannot give its files stops it at start. The tests run as root, so a forked child can become
// any uid and gid.
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

#include "daemon_connection.h"
#include "sluice/segment_reader.h"

namespace sluice::brokerd {
namespace {

namespace p = protocol;

// Ids nobody on a test machine uses: the group, a reader in it, and a stranger outside it.
constexpr gid_t kGroup = 54330;
constexpr uid_t kMember = 54331;
constexpr uid_t kStranger = 54332;
constexpr gid_t kStrangersGroup = 54333;

// Who a forked child becomes: a uid, its primary gid, its supplementary gids.
struct Identity {
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;
};

// Starts `body` in a forked child that took `who`'s ids; what it returns is the child's exit code
// (0: it did what it should; 100: it could not take the ids).
pid_t SpawnAs(const Identity& who, const std::function<int()>& body) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(who.groups.size(), who.groups.data()) != 0 || ::setgid(who.gid) != 0 ||
        ::setuid(who.uid) != 0) {
      ::_exit(100);
    }
    ::_exit(body());
  }
  return child;
}

int ExitCodeOf(pid_t child) {
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int RunAs(const Identity& who, const std::function<int()>& body) {
  return ExitCodeOf(SpawnAs(who, body));
}

struct stat Stat(const std::filesystem::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path << ": " << std::strerror(errno);
  return info;
}

class DaemonAccessGroupTest : public DaemonConnectionTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to become other uids";
    DaemonConnectionTest::SetUp();
    // The segment folder is the test's: searchable by every uid, like /dev/shm.
    ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  }

  static p::Subscribe Request(const std::string& topic) {
    p::Subscribe request;
    request.slot_count = 8;
    request.slot_size = 64 * 1024;
    request.topic = topic;
    request.partitions.push_back({0, p::StartPosition::kEarliest, 0});
    return request;
  }

  // What a reader does, in the child: connect, subscribe to `topic`, map the segment and read
  // `records` records, the segment and its doorbell nothing of the group's or others'. Before
  // reading, the segment's path goes down `told` when it is given, and the child waits for a
  // byte on `go`. 0 when all went; else which step failed.
  int SubscribeAndRead(const std::string& topic, int records, int told = -1, int go = -1) const {
    const int fd = ConnectOrErrno();
    if (fd < 0) return 1;
    DaemonConnection connection(fd);
    connection.Send(1, Request(topic));
    const auto answer = connection.Receive();
    if (!answer.has_value()) return 2;
    const auto* subscribed = std::get_if<p::Subscribed>(&answer->message);
    if (subscribed == nullptr) return 3;
    const std::string segment = (dir_ / subscribed->segment_name).string();
    for (const std::string& path : {segment, segment + ".bell"}) {
      struct stat info {};
      // A doorbell whose path would not fit sun_path is not made (docs/formats.md, "Doorbell").
      if (::stat(path.c_str(), &info) != 0 && path != segment && errno == ENOENT) continue;
      if ((info.st_mode & 07) != 0 || info.st_gid == kGroup) return 7;
    }
    auto reader = SegmentReader::Open(segment);
    if (!reader.ok()) return 4;
    char byte = 0;
    if (told >= 0 &&
        (::write(told, segment.c_str(), segment.size() + 1) < 0 || ::read(go, &byte, 1) != 1)) {
      return 8;
    }
    for (int seen = 0; seen < records;) {
      auto object = (*reader)->Next(std::chrono::seconds(10));
      if (!object.ok()) return 5;
      seen += static_cast<int>(object->record_count);
      if (!(*reader)->Release(*object).ok()) return 6;
    }
    return 0;
  }

  // Runs the daemon binary as `who` with `settings` until it exits; its exit code, and what it
  // wrote in *output. Settings are parsed before anything else, so no Kafka is needed.
  int RunDaemonToExit(const Identity& who, const std::vector<std::string>& settings,
                      std::string* output) const {
    std::vector<std::string> args = {SLUICE_BROKERD_BIN,
                                     "--bootstrap-servers",
                                     "127.0.0.1:1",
                                     "--socket",
                                     socket_,
                                     "--metrics",
                                     "off"};
    for (const std::string& setting : settings) {
      args.push_back("-X");
      args.push_back(setting);
    }
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    // Made here, writable by the child whatever uid it takes.
    const std::string log_path = (dir_ / "refused.log").string();
    std::ofstream{log_path};
    EXPECT_EQ(::chmod(log_path.c_str(), 0666), 0);
    const int code = RunAs(who, [&] {
      const int log = ::open(log_path.c_str(), O_WRONLY | O_TRUNC);
      ::dup2(log, STDERR_FILENO);
      ::execv(argv[0], argv.data());
      return 127;
    });
    std::ifstream in(log_path);
    *output = {std::istreambuf_iterator<char>(in), {}};
    return code;
  }

  const Identity member_{kMember, kGroup, {}};
  const Identity stranger_{kStranger, kStrangersGroup, {}};
};

TEST_F(DaemonAccessGroupTest, AMemberOfAnotherUidConnectsSubscribesAndReadsTheSegment) {
  CreateTopic("orders", 1);
  for (int i = 0; i < 5; ++i) Produce("orders", 0, "value-" + std::to_string(i));
  // A folder the daemon creates, as the default /run/sluice is.
  socket_ = (dir_ / "run" / "brokerd.sock").string();
  StartDaemon({"-X", "sluice.access.group=" + std::to_string(kGroup), "-X",
               "sluice.allowed.uids=" + std::to_string(kMember)});

  const struct stat folder = Stat(dir_ / "run");
  EXPECT_EQ(folder.st_mode & 07777, 0710u) << "the group may reach the socket, not list it";
  EXPECT_EQ(folder.st_gid, kGroup);
  const struct stat socket = Stat(socket_);
  EXPECT_EQ(socket.st_mode & 07777, 0660u);
  EXPECT_EQ(socket.st_gid, kGroup);

  EXPECT_EQ(RunAs(member_, [&] { return SubscribeAndRead("orders", 5); }), 0)
      << "1: connect, 2: answer, 3: SUBSCRIBED, 4: open, 5: next, 6: release, 7: file mode\n"
      << Log();

  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("sluice-brokerd.") && name.ends_with(".lock")) {
      EXPECT_EQ(Stat(entry.path()).st_mode & 07777, 0600u) << "the run's lock stays the daemon's";
    }
  }
}

// The socket file's mode admits a member by its primary or a supplementary gid (the kernel checks
// all of a process' groups); SO_PEERCRED names its primary gid alone, so a grant by gid
// (sluice.allowed.gids) lets in only those whose primary gid it is.
TEST_F(DaemonAccessGroupTest, TheSocketAdmitsEveryMemberButAGidGrantSeesOnlyThePrimaryGid) {
  CreateTopic("orders", 1);
  Produce("orders", 0, "value");
  StartDaemon({"-X", "sluice.access.group=" + std::to_string(kGroup), "-X",
               "sluice.allowed.gids=" + std::to_string(kGroup)});

  EXPECT_EQ(RunAs(member_, [&] { return SubscribeAndRead("orders", 1); }), 0) << Log();
  const Identity supplementary{kMember, kStrangersGroup, {kGroup}};
  EXPECT_EQ(RunAs(supplementary,
                  [&] {
                    const int fd = ConnectOrErrno();
                    if (fd < 0) return 1;
                    DaemonConnection connection(fd);
                    return connection.ClosedByDaemon() ? 0 : 2;
                  }),
            0)
      << "1: the socket refused it, 2: the daemon kept it\n"
      << Log();
  EXPECT_NE(Log().find("gid=" + std::to_string(kStrangersGroup)), std::string::npos) << Log();
}

TEST_F(DaemonAccessGroupTest, WithoutTheSettingAnotherUidCannotConnect) {
  StartDaemon({"-X", "sluice.allowed.uids=" + std::to_string(kMember)});
  EXPECT_EQ(Stat(socket_).st_mode & 07777, 0600u);
  EXPECT_EQ(RunAs(member_, [&] { return ConnectOrErrno() == -EACCES ? 0 : 1; }), 0);
}

TEST_F(DaemonAccessGroupTest, AUidOutsideTheGroupCannotOpenASegmentKnowingItsName) {
  CreateTopic("orders", 1);
  Produce("orders", 0, "value");
  // The daemon's own uid (this test's) subscribes, so that a segment is there.
  StartDaemon({"-X", "sluice.access.group=" + std::to_string(kGroup)});
  auto connection = Connect();
  connection->Send(1, Request("orders"));
  const auto answer = connection->Receive();
  ASSERT_TRUE(answer.has_value()) << Log();
  const auto* subscribed = std::get_if<p::Subscribed>(&answer->message);
  ASSERT_NE(subscribed, nullptr) << p::NameOf(p::TypeOf(answer->message));
  const std::string segment = (dir_ / subscribed->segment_name).string();

  EXPECT_EQ(RunAs(stranger_,
                  [&] {
                    if (::open(segment.c_str(), O_RDONLY) >= 0 || errno != EACCES) return 1;
                    if (::open((segment + ".bell").c_str(), O_RDONLY) >= 0) return 2;
                    return ConnectOrErrno() == -EACCES ? 0 : 3;
                  }),
            0)
      << "1: opened the segment, 2: the doorbell, 3: connected";
}

// A subscription's segment is its subscriber's alone (an ACL entry for its uid, nothing for the
// group): another member, granted nothing, can neither map it nor truncate it under its reader.
TEST_F(DaemonAccessGroupTest, AnotherMemberCannotOpenASubscribersSegment) {
  CreateTopic("orders", 1);
  for (int i = 0; i < 5; ++i) Produce("orders", 0, "value-" + std::to_string(i));
  StartDaemon({"-X", "sluice.access.group=" + std::to_string(kGroup), "-X",
               "sluice.allowed.uids=" + std::to_string(kMember)});
  int told[2];
  int go[2];
  ASSERT_EQ(::pipe(told), 0);
  ASSERT_EQ(::pipe(go), 0);
  const pid_t reader =
      SpawnAs(member_, [&] { return SubscribeAndRead("orders", 5, told[1], go[0]); });
  ::close(told[1]);  // so that a child that ended early reads as the pipe's end
  ::close(go[0]);
  char path[4096] = {};
  ASSERT_GT(::read(told[0], path, sizeof(path) - 1), 0) << "the reader subscribed\n" << Log();
  const std::string segment = path;
  const Identity other_member{kStranger, kGroup, {}};
  EXPECT_EQ(RunAs(other_member,
                  [&] {
                    if (::open(segment.c_str(), O_RDWR) >= 0 || errno != EACCES) return 1;
                    if (::truncate(segment.c_str(), 0) == 0 || errno != EACCES) return 2;
                    if (::open((segment + ".bell").c_str(), O_RDWR) >= 0 || errno != EACCES) {
                      return 3;
                    }
                    return 0;
                  }),
            0)
      << "1: opened the segment, 2: truncated it, 3: opened the doorbell";
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  EXPECT_EQ(ExitCodeOf(reader), 0)
      << "the subscriber: 1: connect, 2: answer, 3: SUBSCRIBED, 4: open, 5: next, 6: release, "
         "7: file mode, 8: pipes\n"
      << Log();
  ::close(told[0]);
  ::close(go[1]);
}

TEST_F(DaemonAccessGroupTest, ANameNoGroupHasStopsTheStart) {
  std::string output;
  EXPECT_EQ(RunDaemonToExit({0, 0, {}}, {"sluice.access.group=no-such-sluice-group"}, &output), 2);
  EXPECT_NE(output.find("sluice.access.group = \"no-such-sluice-group\": no such group"),
            std::string::npos)
      << output;
}

TEST_F(DaemonAccessGroupTest, AGroupTheDaemonIsNotAMemberOfStopsTheStart) {
  const std::string group = std::to_string(kGroup);
  std::string output;
  EXPECT_EQ(RunDaemonToExit(stranger_, {"sluice.access.group=" + group}, &output), 2);
  EXPECT_NE(output.find("sluice.access.group = \"" + group + "\": sluice-brokerd runs as uid " +
                        std::to_string(kStranger) + ", which is not a member of gid " + group),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace sluice::brokerd
