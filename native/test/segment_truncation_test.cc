// ReaderOptions::guard_truncation: a writer that truncates its segment's file under a reader's
// mapping ends that reader's reading with an error instead of the reader's process by SIGBUS
// (docs/brokerd.md, "Local producers"); WriterOptions::guard_truncation the same for a reader that
// truncates the file under its writer (docs/brokerd.md, "Security model"); and a SIGBUS of any
// other mapping is still the process's.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sluice/mapping.h"
#include "sluice/segment_reader.h"
#include "sluice/segment_writer.h"
#include "test_util.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using testing::PublishRecords;
using testing::ScopedName;
using testing::SmallWriter;

// A writer in a child process: it creates the segment, publishes one object once a reader is
// attached, truncates its file to nothing and says so on `done` (the child must not touch gtest).
pid_t TruncatingWriter(const std::string& name, int done) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  auto writer = SegmentWriter::Create(SmallWriter(name));
  if (!writer.ok() || !(*writer)->WaitForReaders(1, 10s).ok()) _exit(10);
  if (!PublishRecords(**writer, 0, 1).ok()) _exit(11);
  if (truncate(SegmentPath(name).c_str(), 0) != 0) _exit(12);
  const char byte = 1;
  _exit(write(done, &byte, 1) == 1 ? 0 : 13);
}

TEST(SegmentTruncation, AGuardedReaderOfATruncatedSegmentFailsAndLivesOn) {
  ScopedName name("truncated");
  int done[2];
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = TruncatingWriter(name.name(), done[1]);
  ASSERT_GT(child, 0);
  ReaderOptions options;
  options.open_timeout = 10s;
  options.guard_truncation = true;
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.path(), options));
  char byte = 0;
  ASSERT_EQ(read(done[0], &byte, 1), 1) << "the writer truncated its file";
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  close(done[0]);
  close(done[1]);

  EXPECT_FALSE(reader->truncated()) << "nothing was read since";
  // The object published before the truncation is gone with the file: the reader sees zeros,
  // where its lane no longer says it is attached, so it is refused as evicted.
  auto object = reader->Next(1s);
  EXPECT_RAISES(Evicted, object);
  EXPECT_TRUE(reader->truncated());
  EXPECT_RAISES(Evicted, reader->Next(0ns)) << "and goes on refusing";
  reader.reset();  // detaches from zeros
}

TEST(SegmentTruncation, AGuardedWriterOfATruncatedSegmentWritesOnAndSaysSo) {
  ScopedName name("truncated-under-writer");
  WriterOptions options = SmallWriter(name.name());
  options.guard_truncation = true;
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  ASSERT_OK(PublishRecords(*writer, 0, 1));
  EXPECT_FALSE(writer->truncated());
  // What a reader, which opens the file read-write for its lane's words, can do to its writer.
  ASSERT_EQ(truncate(name.path().c_str(), 0), 0) << std::strerror(errno);
  // Unguarded, the first store into a slot's page would end this process by SIGBUS.
  for (uint64_t first = 1; first < 9; ++first) {
    ASSERT_OK(PublishRecords(*writer, first, 1));
  }
  EXPECT_TRUE(writer->truncated());
  EXPECT_OK(writer->Close(0ns));
}

TEST(SegmentTruncation, ASigbusOfAnUnguardedMappingStillEndsTheProcess) {
  ScopedName guarded("guarded");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(guarded.name())));
  ReaderOptions options;
  options.guard_truncation = true;
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(guarded.path(), options));
  EXPECT_DEATH(
      {
        const std::string path = SegmentPath("sluice-test-unguarded-" + std::to_string(getpid()));
        const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        unlink(path.c_str());
        // Any way out but the SIGBUS's is no death: exit code 0.
        if (fd < 0 || ftruncate(fd, 4096) != 0) _exit(0);
        auto mapping = Mapping::Map(fd, 4096);
        if (!mapping.ok() || ftruncate(fd, 0) != 0) _exit(0);
        static_cast<volatile uint8_t*>(mapping->data())[0] = 1;
        _exit(0);
      },
      "");
}

}  // namespace
}  // namespace sluice
