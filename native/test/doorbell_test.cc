#include "sluice/doorbell.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "test_util.h"
#include "unaccepting_socket.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string BellPath(const testing::ScopedName& name) { return name.path() + ".bell"; }

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

  // Writer parked: the reader's ring ends its wait well before the timeout.
  auto start = Clock::now();
  auto writer_wait = std::async(std::launch::async, [&] { server.Wait(10s); });
  client.Ring();
  writer_wait.get();
  EXPECT_LT(Clock::now() - start, 5s);

  // Reader parked: the writer's ring on lane 1 ends it.
  start = Clock::now();
  auto reader_wait = std::async(std::launch::async, [&] { return client.Wait(10s); });
  server.Ring(1);
  EXPECT_TRUE(reader_wait.get());
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST(Doorbell, TheWriterAcceptsAConnectionWhenItFirstRingsItsLane) {
  testing::ScopedName name("bell-lazy");
  ASSERT_OK_AND_ASSIGN(auto server, DoorbellServer::Listen(BellPath(name), 4));
  ASSERT_OK_AND_ASSIGN(auto client, DoorbellClient::Connect(BellPath(name), 3));
  server.Ring(3);  // no Wait before: Ring accepts the pending connection itself
  const auto start = Clock::now();
  EXPECT_TRUE(client.Wait(10s));
  EXPECT_LT(Clock::now() - start, 5s);
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
  EXPECT_EQ(DoorbellClient::Connect(BellPath(name), 0).status().code(), StatusCode::kIoError);
}

TEST(Doorbell, ConnectingToADoorbellThatNeverAcceptsTimesOut) {
  testing::ScopedName name("bell-full");
  testing::UnacceptingSocket full(BellPath(name));
  ASSERT_EQ(full.error(), "");
  auto client = DoorbellClient::Connect(BellPath(name), 0, 50ms);
  ASSERT_EQ(client.status().code(), StatusCode::kTimedOut) << client.status().ToString();
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

}  // namespace
}  // namespace sluice
