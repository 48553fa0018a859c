#include "sluice/doorbell.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "listening_socket.h"
#include "test_util.h"
#include "unaccepting_socket.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

std::string BellPath(const testing::ScopedName& name) { return name.path() + ".bell"; }

// A wait that nothing but what the test awaits ends within ctest's timeout.
constexpr auto kLongerThanAnyTest = std::chrono::hours(1);

TEST(Doorbell, TheSocketIsOwnerOnly) {
  testing::ScopedName name("bell-mode");
  ASSERT_OK_AND_ASSIGN(auto server, DoorbellServer::Listen(BellPath(name), 2));
  struct stat info {};
  ASSERT_EQ(stat(BellPath(name).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST(Doorbell, ARingWakesTheWriterAndTheReader) {
  testing::ScopedName name("bell-ring");
  ASSERT_OK_AND_ASSIGN(auto server, DoorbellServer::Listen(BellPath(name), 2));
  ASSERT_OK_AND_ASSIGN(auto client, DoorbellClient::Connect(BellPath(name), 1));
  ASSERT_TRUE(client.connected());

  // Writer parked: the reader's ring ends its wait, which says so, rather than the timeout.
  auto writer_wait = std::async(std::launch::async, [&] { return server.Wait(10s); });
  client.Ring();
  EXPECT_TRUE(writer_wait.get());

  // Reader parked: the writer's ring on lane 1 ends it. A reader's wait says nothing of what
  // ended it, so it is one only the ring can end: a lost ring fails as the test's timeout.
  auto reader_wait =
      std::async(std::launch::async, [&] { return client.Wait(kLongerThanAnyTest); });
  server.Ring(1);
  EXPECT_TRUE(reader_wait.get());
}

TEST(Doorbell, TheWriterAcceptsAConnectionWhenItFirstRingsItsLane) {
  testing::ScopedName name("bell-lazy");
  ASSERT_OK_AND_ASSIGN(auto server, DoorbellServer::Listen(BellPath(name), 4));
  ASSERT_OK_AND_ASSIGN(auto client, DoorbellClient::Connect(BellPath(name), 3));
  server.Ring(3);  // no Wait before: Ring accepts the pending connection itself
  EXPECT_TRUE(client.Wait(kLongerThanAnyTest)) << "only the ring can end this wait";
}

TEST(Doorbell, AReaderSeesTheWriterHangUp) {
  testing::ScopedName name("bell-gone");
  ASSERT_OK_AND_ASSIGN(auto listening, DoorbellServer::Listen(BellPath(name), 1));
  auto server = std::make_unique<DoorbellServer>(std::move(listening));
  ASSERT_OK_AND_ASSIGN(auto client, DoorbellClient::Connect(BellPath(name), 0));
  server->Ring(0);
  server.reset();
  EXPECT_NE(access(BellPath(name).c_str(), F_OK), 0) << "the socket file is unlinked";
  // The pending ring is drained first; then end of file.
  bool connected = client.Wait(1s);
  if (connected) connected = client.Wait(1s);
  EXPECT_FALSE(connected);
  EXPECT_FALSE(client.connected());
}

TEST(Doorbell, ConnectingWithoutADoorbellFails) {
  testing::ScopedName name("bell-none");
  EXPECT_RAISES(IoError, DoorbellClient::Connect(BellPath(name), 0));
}

TEST(Doorbell, ConnectingToADoorbellThatNeverAcceptsTimesOut) {
  testing::ScopedName name("bell-full");
  testing::UnacceptingSocket full(BellPath(name));
  ASSERT_EQ(full.error(), "");
  auto client = DoorbellClient::Connect(BellPath(name), 0, 50ms);
  ASSERT_RAISES(TimedOut, client);
  EXPECT_NE(client.status().message().find("took no connection within 50 ms"), std::string::npos)
      << client.status().message();
}

TEST(Doorbell, ALaneOutOfRangeIsDropped) {
  testing::ScopedName name("bell-range");
  ASSERT_OK_AND_ASSIGN(auto server, DoorbellServer::Listen(BellPath(name), 1));
  ASSERT_OK_AND_ASSIGN(auto client, DoorbellClient::Connect(BellPath(name), 5));
  server.Wait(1s);  // accepts, reads lane 5, closes
  EXPECT_FALSE(client.Wait(5s)) << "the server hung up on a lane it does not have";
}

// A reader that does not trust the writer connects to a doorbell by its name in a folder it
// opened itself, and only to a socket of the writer's (docs/formats.md, "Doorbell").
class DoorbellInFolderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GE(folder_, 0) << std::strerror(errno); }
  void TearDown() override { close(folder_); }

  DoorbellInFolder In(const testing::ScopedName& name, uid_t owner = geteuid()) const {
    return {folder_, name.name() + ".bell", owner, BellPath(name)};
  }

  int folder_ = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
};

// Connected through /proc/self/fd/N of the descriptor checked, which reaches the socket itself.
TEST_F(DoorbellInFolderTest, ASocketOfTheOwnerRingsBothWays) {
  testing::ScopedName name("bell-in-folder");
  ASSERT_OK_AND_ASSIGN(auto server, DoorbellServer::Listen(BellPath(name), 2));
  ASSERT_OK_AND_ASSIGN(auto client, DoorbellClient::ConnectInFolder(In(name), 1));
  ASSERT_TRUE(client.connected());
  auto writer_wait = std::async(std::launch::async, [&] { server.Wait(10s); });
  client.Ring();
  EXPECT_EQ(writer_wait.wait_for(5s), std::future_status::ready) << "the writer was woken";
  auto reader_wait = std::async(std::launch::async, [&] { return client.Wait(10s); });
  server.Ring(1);
  ASSERT_EQ(reader_wait.wait_for(5s), std::future_status::ready) << "the reader was woken";
  EXPECT_TRUE(reader_wait.get());
}

TEST_F(DoorbellInFolderTest, ALinkIsNotFollowed) {
  testing::ScopedName name("bell-link");
  testing::ListeningSocket target(name.path() + ".target");
  ASSERT_EQ(target.error(), "");
  ASSERT_EQ(symlink(target.path().c_str(), BellPath(name).c_str()), 0) << std::strerror(errno);
  auto client = DoorbellClient::ConnectInFolder(In(name), 0);
  unlink(BellPath(name).c_str());
  EXPECT_RAISES(InvalidArgument, client);
  EXPECT_NE(client.status().message().find("is a symbolic link"), std::string::npos)
      << client.status().message();
  EXPECT_FALSE(target.HasAConnection()) << "the socket the link names saw no connection";
}

TEST_F(DoorbellInFolderTest, ASocketOfAnotherUidIsNotConnected) {
  testing::ScopedName name("bell-other");
  testing::ListeningSocket other(BellPath(name));
  ASSERT_EQ(other.error(), "");
  auto client = DoorbellClient::ConnectInFolder(In(name, geteuid() + 1), 0);
  EXPECT_RAISES(InvalidArgument, client);
  EXPECT_NE(client.status().message().find("is a socket of uid " + std::to_string(geteuid())),
            std::string::npos)
      << client.status().message();
  EXPECT_FALSE(other.HasAConnection());
}

TEST_F(DoorbellInFolderTest, ADoorbellThatNeverAcceptsStillTimesOut) {
  testing::ScopedName name("bell-in-folder-full");
  testing::UnacceptingSocket full(BellPath(name));
  ASSERT_EQ(full.error(), "");
  auto client = DoorbellClient::ConnectInFolder(In(name), 0, 50ms);
  ASSERT_RAISES(TimedOut, client);
  EXPECT_NE(client.status().message().find(BellPath(name) + ": the doorbell took no connection"),
            std::string::npos)
      << client.status().message();
}

}  // namespace
}  // namespace sluice
