// Writer and readers of one segment in different processes, across fork(): a reader in a child,
// a reader or a writer that dies, a reader stopped until it is evicted. The forked child, a copy of
// the threaded test process, allocates and starts threads of its own (a reader's heartbeat), which
// the sanitizers cannot follow: this program runs in the plain build only (native/CMakeLists.txt).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include "content_rule.h"
#include "sluice/segment_reader.h"
#include "sluice/segment_writer.h"
#include "test_util.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using testing::PublishRecords;
using testing::ScopedName;
using testing::SmallWriter;
using testing::TakeAndVerify;

// Runs `child` in a forked process, whose exit code it gives (the child must not touch gtest).
pid_t Spawn(const std::function<int()>& child) {
  const pid_t pid = fork();
  if (pid == 0) _exit(child());
  return pid;
}

int WaitChild(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(Segment, WriterAndReaderAcrossFork) {
  ScopedName name("fork");
  auto options = SmallWriter(name.name());
  options.slot_count = 3;
  const pid_t pid = Spawn([&] {
    ReaderOptions reader_options;
    reader_options.open_timeout = 10s;
    auto reader = SegmentReader::Open(name.name(), reader_options);
    if (!reader.ok()) return 10;
    content::Verifier verifier(ObjectKind::kRecords);
    Status status;
    while ((status = TakeAndVerify(**reader, verifier)).ok()) {
    }
    return status.code() == StatusCode::kEndOfStream && verifier.rows() == 1000 ? 0 : 11;
  });
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  ASSERT_OK(writer->WaitForReaders(1, 10s));
  for (uint64_t i = 0; i < 100; ++i) ASSERT_OK(PublishRecords(*writer, i * 10, 10));
  EXPECT_OK(writer->Close(10s));
  EXPECT_EQ(WaitChild(pid), 0);
}

TEST(Segment, ADeadReadersSlotsAreReclaimedAndOtherLanesAreUnaffected) {
  ScopedName name("deadreader");
  auto options = SmallWriter(name.name());
  options.slot_count = 2;
  options.liveness_timeout = 200ms;
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  ASSERT_OK_AND_ASSIGN(auto survivor, SegmentReader::Open(name.name()));
  int took[2];
  ASSERT_EQ(pipe(took), 0);
  const pid_t pid = Spawn([&] {
    auto reader = SegmentReader::Open(name.name());
    if (!reader.ok()) return 10;
    char byte = 1;
    if (write(took[1], &byte, 1) != 1) return 11;
    // Taken, never released: the process dies holding it, without detaching.
    _exit((*reader)->Next(5s).ok() ? 0 : 12);
  });
  char byte = 0;
  ASSERT_EQ(read(took[0], &byte, 1), 1);
  ASSERT_OK(PublishRecords(*writer, 0, 1));
  ASSERT_OK(PublishRecords(*writer, 1, 1));
  EXPECT_EQ(WaitChild(pid), 0);
  content::Verifier verifier(ObjectKind::kRecords);
  ASSERT_OK(TakeAndVerify(*survivor, verifier));
  ASSERT_OK(TakeAndVerify(*survivor, verifier));
  // Both slots are held by the dead reader's lane until its heartbeat goes stale.
  EXPECT_RAISES(TimedOut, writer->Acquire(0ns));
  ASSERT_OK(PublishRecords(*writer, 2, 1, 5s));
  EXPECT_EQ(writer->attached_readers(), 1u);
  ASSERT_OK(TakeAndVerify(*survivor, verifier));
  EXPECT_EQ(verifier.rows(), 3u);
  close(took[0]);
  close(took[1]);
}

TEST(Segment, ADeadWriterIsDetectedAfterItsObjectsAreRead) {
  ScopedName name("deadwriter");
  const pid_t pid = Spawn([&] {
    auto options = SmallWriter(name.name());
    options.liveness_timeout = 200ms;
    auto writer = SegmentWriter::Create(options);
    if (!writer.ok() || !(*writer)->WaitForReaders(1, 10s).ok()) return 10;
    if (!PublishRecords(**writer, 0, 2).ok() || !PublishRecords(**writer, 2, 2).ok()) return 11;
    _exit(0);  // dies without closing: the heartbeat stops, the file stays
  });
  ReaderOptions reader_options;
  reader_options.open_timeout = 10s;
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name(), reader_options));
  ASSERT_EQ(WaitChild(pid), 0);
  content::Verifier verifier(ObjectKind::kRecords);
  ASSERT_OK(TakeAndVerify(*reader, verifier));
  ASSERT_OK(TakeAndVerify(*reader, verifier));
  const auto next = reader->Next(5s);
  EXPECT_RAISES(WriterDead, next);
}

TEST(Segment, AnEvictedReaderFindsOut) {
  ScopedName name("evicted");
  auto options = SmallWriter(name.name());
  options.slot_count = 1;
  options.liveness_timeout = 200ms;
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  int took[2];
  int go[2];
  ASSERT_EQ(pipe(took), 0);
  ASSERT_EQ(pipe(go), 0);
  const pid_t pid = Spawn([&] {
    auto reader = SegmentReader::Open(name.name());
    if (!reader.ok()) return 10;
    auto object = (*reader)->Next(5s);
    char byte = 1;
    if (!object.ok() || write(took[1], &byte, 1) != 1) return 11;
    if (read(go[0], &byte, 1) != 1) return 12;
    // Stopped meanwhile, its heartbeat went stale and the writer took the lane back.
    const bool release_refused = (*reader)->Release(*object).code() == StatusCode::kEvicted;
    const bool next_refused = (*reader)->Next(0ns).status().code() == StatusCode::kEvicted;
    return release_refused && next_refused ? 0 : 13;
  });
  ASSERT_OK(writer->WaitForReaders(1, 10s));
  ASSERT_OK(PublishRecords(*writer, 0, 1));
  char byte = 0;
  ASSERT_EQ(read(took[0], &byte, 1), 1);
  kill(pid, SIGSTOP);
  EXPECT_OK(writer->Acquire(5s)) << "the stopped reader's slot was reclaimed";
  kill(pid, SIGCONT);
  ASSERT_EQ(write(go[1], &byte, 1), 1);
  EXPECT_EQ(WaitChild(pid), 0);
  for (int fd : {took[0], took[1], go[0], go[1]}) close(fd);
}

}  // namespace
}  // namespace sluice
