// Writer and readers of one segment, in one process and across threads: credits, room in the
// folder, the end of a stream, and the doorbell waking parked sides. Across fork():
// segment_fork_test.cc.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "content_rule.h"
#include "sluice/layout.h"
#include "sluice/mapping.h"
#include "sluice/random_name.h"
#include "sluice/segment_reader.h"
#include "sluice/segment_writer.h"
#include "small_tmpfs.h"
#include "test_util.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using testing::Eventually;
using testing::PublishRecords;
using testing::ScopedName;
using testing::SmallTmpfs;
using testing::SmallWriter;
using testing::TakeAndVerify;

namespace h = layout::header;
namespace ln = layout::lane;

TEST(Segment, WriterToReaderInOneProcessThenCleanEnd) {
  ScopedName name("basic");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  EXPECT_EQ(writer->attached_readers(), 1u);
  content::Verifier verifier(ObjectKind::kRecords);
  for (uint64_t object = 0; object < 10; ++object) {
    ASSERT_OK(PublishRecords(*writer, object * 7, 7));
    ASSERT_OK(TakeAndVerify(*reader, verifier));
  }
  EXPECT_EQ(verifier.rows(), 70u);
  EXPECT_RAISES(TimedOut, reader->Next(0ns));
  ASSERT_OK(writer->Close(1s));
  EXPECT_RAISES(EndOfStream, reader->Next(1s));
  EXPECT_NE(access(name.path().c_str(), F_OK), 0) << "the writer unlinks the segment";
}

TEST(Segment, ObjectsPublishedBeforeCloseAreStillDelivered) {
  ScopedName name("drain");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  ASSERT_OK(PublishRecords(*writer, 0, 3));
  ASSERT_OK(PublishRecords(*writer, 3, 3));
  auto closing = std::async(std::launch::async, [&] { return writer->Close(10s); });
  content::Verifier verifier(ObjectKind::kRecords);
  EXPECT_OK(TakeAndVerify(*reader, verifier));
  EXPECT_OK(TakeAndVerify(*reader, verifier));
  EXPECT_RAISES(EndOfStream, reader->Next(1s));
  EXPECT_OK(closing.get()) << "Close returns once every slot is released";
}

TEST(Segment, FilesAreOwnerOnly) {
  ScopedName name("mode");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  struct stat info {};
  ASSERT_EQ(stat(name.path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((name.path() + ".bell").c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

// Every file in the segment's folder whose name starts with `name`.
std::vector<std::string> FilesStartingWith(const std::string& name) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string file = entry.path().filename().string();
    if (file.starts_with(name)) found.push_back(file);
  }
  std::sort(found.begin(), found.end());
  return found;
}

WriterOptions BigSlots(const std::string& path, uint32_t slot_count) {
  WriterOptions options = SmallWriter(path);
  options.slot_count = slot_count;
  options.slot_size = 4u << 20;
  options.lane_count = 1;
  return options;
}

// A sparse segment larger than its tmpfs mapped fine and killed the writer with SIGBUS at its
// first store into a page the tmpfs could not supply; its memory is reserved at creation now.
TEST(Segment, NoRoomInItsFolderFailsTheCreateAndLeavesNothing) {
  SmallTmpfs tmpfs(16);
  if (!tmpfs.skip_reason().empty()) GTEST_SKIP() << tmpfs.skip_reason();
  auto created = SegmentWriter::Create(BigSlots(tmpfs.folder() + "/too-big", 8));
  ASSERT_RAISES(NoSpace, created) << "8 × 4 MiB slots in a 16 MiB tmpfs";
  const std::string& message = created.status().message();
  EXPECT_NE(message.find("segment folder " + tmpfs.folder()), std::string::npos) << message;
  EXPECT_NE(message.find("8 slots of 4194304"), std::string::npos) << message;
  EXPECT_NE(message.find(std::strerror(ENOSPC)), std::string::npos) << message;
  EXPECT_EQ(tmpfs.Files(), std::vector<std::string>{}) << "no temporary file left";
}

TEST(Segment, ASegmentThatFitsIsReservedWholeAndTheNextFindsNoRoom) {
  SmallTmpfs tmpfs(16);
  if (!tmpfs.skip_reason().empty()) GTEST_SKIP() << tmpfs.skip_reason();
  auto first = SegmentWriter::Create(BigSlots(tmpfs.folder() + "/first", 3));
  ASSERT_OK(first);
  // Its pages are the tmpfs's already, before a byte is written: the writer cannot SIGBUS.
  struct statvfs room {};
  ASSERT_EQ(statvfs(tmpfs.folder().c_str(), &room), 0);
  EXPECT_GE((room.f_blocks - room.f_bfree) * room.f_frsize, 3ull * (4u << 20));
  // So the second, which a sparse tmpfs would have taken (nothing is written yet), finds no room.
  auto second = SegmentWriter::Create(BigSlots(tmpfs.folder() + "/second", 3));
  ASSERT_RAISES(NoSpace, second);
  auto buffer = (*first)->Acquire(1s);
  ASSERT_OK(buffer);
  std::memset(buffer->data, 0x5a, buffer->capacity);
  EXPECT_EQ(tmpfs.Files(), (std::vector<std::string>{"first", "first.bell"}));
}

TEST(Segment, AnExistingNameIsNotReplaced) {
  ScopedName name("exists");
  ASSERT_OK_AND_ASSIGN(auto first, SegmentWriter::Create(SmallWriter(name.name())));
  auto second = SegmentWriter::Create(SmallWriter(name.name()));
  EXPECT_RAISES(AlreadyExists, second);
  EXPECT_NE(second.status().message().find(name.path()), std::string::npos)
      << second.status().message();
  EXPECT_OK(SegmentReader::Open(name.name())) << "the first segment is intact";
  EXPECT_EQ(FilesStartingWith(name.name()),
            (std::vector<std::string>{name.name(), name.name() + ".bell"}))
      << "the second writer left no temporary file behind";
}

// Temporary names were NAME.tmp-PID: anyone could create that file first and make every
// writer of NAME fail. They now have a random part (docs/formats.md, "File layout").
TEST(Segment, AFileAtThePredictableTemporaryNameDoesNotBlockTheWriter) {
  ScopedName name("squatted");
  const std::string squatted = name.path() + ".tmp-" + std::to_string(getpid());
  const std::string squatted_bell = name.path() + ".bell.tmp-" + std::to_string(getpid());
  for (const std::string& path : {squatted, squatted_bell}) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0) << path;
    close(fd);
  }
  auto writer = SegmentWriter::Create(SmallWriter(name.name()));
  EXPECT_OK(writer);
  struct stat info {};
  EXPECT_EQ(stat((name.path() + ".bell").c_str(), &info), 0) << "with its doorbell";
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(stat(squatted.c_str(), &info), 0) << "the squatter's file is left alone";
  EXPECT_EQ(info.st_size, 0);
  unlink(squatted.c_str());
  unlink(squatted_bell.c_str());
}

TEST(Segment, TemporarySuffixesAreRandomHex) {
  auto one = TemporarySuffix();
  auto two = TemporarySuffix();
  ASSERT_OK(one);
  ASSERT_OK(two);
  EXPECT_NE(*one, *two);
  ASSERT_EQ(one->size(), 5u + 16u) << *one;
  EXPECT_TRUE(one->starts_with(".tmp-")) << *one;
  EXPECT_EQ(one->find_first_not_of("0123456789abcdef", 5), std::string::npos) << *one;
  ASSERT_OK_AND_ASSIGN(const std::string hex, RandomHex(3));
  EXPECT_EQ(hex.size(), 6u);
}

TEST(Segment, EveryReaderGetsEveryObjectAndTheSlotFreesAfterTheLastRelease) {
  ScopedName name("multi");
  auto options = SmallWriter(name.name());
  options.slot_count = 1;
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  ASSERT_OK_AND_ASSIGN(auto first, SegmentReader::Open(name.name()));
  ASSERT_OK_AND_ASSIGN(auto second, SegmentReader::Open(name.name()));
  EXPECT_NE(first->lane(), second->lane());
  ASSERT_OK(PublishRecords(*writer, 0, 5));

  auto a = first->Next(1s);
  auto b = second->Next(1s);
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(a->object_id, b->object_id);
  EXPECT_EQ(a->slot, b->slot);
  ASSERT_EQ(a->length, b->length);
  EXPECT_EQ(std::memcmp(a->data, b->data, a->length), 0);
  ASSERT_OK(first->Release(*a));
  EXPECT_RAISES(TimedOut, writer->Acquire(0ns)) << "the second reader still holds the only slot";
  ASSERT_OK(second->Release(*b));
  EXPECT_OK(writer->Acquire(0ns));
}

TEST(Segment, ReleasedBelowAndFreeSlotsFollowWhatIsHeld) {
  ScopedName name("released-below");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  EXPECT_EQ(writer->ReleasedBelow(), 0u);
  const uint32_t slots = writer->layout().slot_count;
  EXPECT_EQ(writer->FreeSlots(), slots);
  for (int i = 0; i < 3; ++i) ASSERT_OK(PublishRecords(*writer, i, 1));
  EXPECT_EQ(writer->ReleasedBelow(), 0u);
  EXPECT_EQ(writer->FreeSlots(), slots - 3);

  ASSERT_OK_AND_ASSIGN(auto first, reader->Next(1s));
  ASSERT_OK_AND_ASSIGN(auto second, reader->Next(1s));
  ASSERT_OK(reader->Release(second));
  EXPECT_EQ(writer->ReleasedBelow(), 0u) << "object 0 is still held";
  ASSERT_OK(reader->Release(first));
  EXPECT_EQ(writer->ReleasedBelow(), 2u);

  ASSERT_OK_AND_ASSIGN(auto third, reader->Next(1s));
  auto acquired = writer->Acquire(0ns);  // a slot being written holds no object yet
  ASSERT_OK(acquired);
  ASSERT_OK(reader->Release(third));
  EXPECT_EQ(writer->ReleasedBelow(), 3u);
  EXPECT_EQ(writer->FreeSlots(), slots - 1) << "the acquired slot";
}

TEST(Segment, ReleasingTwiceIsRefused) {
  ScopedName name("twice");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  ASSERT_OK(PublishRecords(*writer, 0, 1));
  ASSERT_OK_AND_ASSIGN(auto object, reader->Next(1s));
  ASSERT_OK(reader->Release(object));
  EXPECT_RAISES(Evicted, reader->Release(object));
}

TEST(Segment, LanesRunOut) {
  ScopedName name("lanes");
  auto options = SmallWriter(name.name());
  options.lane_count = 1;
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  EXPECT_RAISES(NoFreeLane, SegmentReader::Open(name.name()));
  reader.reset();  // leaves: the writer reclaims the lane when it looks
  EXPECT_OK(writer->WaitForReaders(0, 0ns));
  ASSERT_OK(PublishRecords(*writer, 0, 1));  // reclaims the CLOSED lane while acquiring
  EXPECT_TRUE(Eventually(
      "a reader to open the reclaimed lane", [&] { return SegmentReader::Open(name.name()).ok(); },
      5s));
}

TEST(Segment, WithoutReadersASlotIsFreeAgainAtOnce) {
  ScopedName name("nobody");
  auto options = SmallWriter(name.name());
  options.slot_count = 1;
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  for (uint64_t i = 0; i < 3; ++i) ASSERT_OK(PublishRecords(*writer, i, 1, 0ns));
}

TEST(Segment, CreditsExhaustedTheWriterWaitsThenProceedsAfterARelease) {
  ScopedName name("credits");
  auto options = SmallWriter(name.name());
  options.slot_count = 2;
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  ASSERT_OK(PublishRecords(*writer, 0, 1));
  ASSERT_OK(PublishRecords(*writer, 1, 1));
  const auto timed_out = writer->Acquire(20ms);
  EXPECT_RAISES(TimedOut, timed_out);

  ASSERT_OK_AND_ASSIGN(auto held, reader->Next(1s));
  // The writer parks (its waiting flag set), and the release, seeing the flag, rings the doorbell
  // that wakes it (docs/formats.md, "Doorbell"; doorbell_test.cc pins that a ring ends a wait).
  // How soon is not asserted: on a busy machine any bound on the wake-up flakes.
  auto acquiring = std::async(std::launch::async, [&] { return writer->Acquire(20s); });
  ASSERT_TRUE(Eventually("the writer to park", [&] {
    return testing::ReadSegmentField32(name.path(), h::kWriterWaiting) == 1;
  }));
  ASSERT_OK(reader->Release(held));
  EXPECT_OK(acquiring.get()) << "the released slot is the writer's";
  EXPECT_EQ(testing::ReadSegmentField32(name.path(), h::kWriterWaiting), 0u)
      << "the writer is no longer parked";
}

// A slot released while the writer parks is found by the park's own last look, not the loop's:
// Acquire must then hold that one slot, not take it and go on looking for another. Thousands of
// slots make the park's scan long enough for the release to land inside it, and the slot
// released is the last one the scan visits.
TEST(Segment, ASlotFreedDuringTheWritersParkIsAcquiredOnce) {
  ScopedName name("park-acquire");
  WriterOptions options = SmallWriter(name.name());
  options.slot_count = 65536;
  options.slot_size = 256;
  options.lane_count = 1;
  options.checksums = false;
  options.idle.spins = 0;  // park at the first idle step
  options.idle.yields = 0;
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  // The test's own view of writer_waiting: a load sees the writer park within nanoseconds.
  const int fd = open(name.path().c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_OK_AND_ASSIGN(auto header, Mapping::Map(fd, 4096));
  close(fd);
  std::atomic_ref<uint32_t> writer_waiting(
      *reinterpret_cast<uint32_t*>(header.data() + h::kWriterWaiting));
  std::vector<ObjectView> held;
  auto publish = [&] {
    auto slot = writer->Acquire(0ns);
    return slot.ok() && writer->Publish(EncodedObject{}).ok();
  };
  for (uint32_t i = 0; i < options.slot_count; ++i) {
    ASSERT_TRUE(publish());
    ASSERT_OK_AND_ASSIGN(const ObjectView object, reader->Next(1s));
    held.push_back(object);
  }
  for (int round = 0; round < 32; ++round) {
    SCOPED_TRACE(round);
    auto acquiring = std::async(std::launch::async, [&] { return writer->Acquire(3s); });
    // Polled without a pause: the release must land while the park's scan still runs, which
    // is microseconds after the flag is set.
    ASSERT_TRUE(Eventually(
        "the writer to park", [&] { return writer_waiting.load() == 1; }, 5s,
        std::chrono::milliseconds::zero()));
    const ObjectView newest = held.back();
    held.pop_back();
    ASSERT_OK(reader->Release(newest));
    auto acquired = acquiring.get();
    ASSERT_OK(acquired);
    EXPECT_EQ(acquired->slot, newest.slot);
    ASSERT_OK(writer->Publish(EncodedObject{}));
    ASSERT_OK_AND_ASSIGN(const ObjectView object, reader->Next(1s));
    held.push_back(object);
  }
  for (const ObjectView& object : held) ASSERT_OK(reader->Release(object));
  EXPECT_EQ(writer->FreeSlots(), options.slot_count) << "no slot stays with the writer";
  EXPECT_OK(writer->Close(1s));
}

TEST(Segment, AParkedReaderIsWokenByTheDoorbell) {
  ScopedName name("bell");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  const uint64_t lane = writer->layout().LaneOffset(reader->lane());
  // The reader parks on the doorbell (its lane's waiting flag set); the publish, seeing the flag,
  // rings it. How soon the reader wakes is not asserted: any bound flakes on a busy machine.
  auto next = std::async(std::launch::async, [&] { return reader->Next(20s); });
  ASSERT_TRUE(Eventually("the reader to park", [&] {
    return testing::ReadSegmentField32(name.path(), lane + ln::kReaderWaiting) == 1;
  }));
  ASSERT_OK(PublishRecords(*writer, 0, 1));
  ASSERT_OK_AND_ASSIGN(const ObjectView object, next.get());
  EXPECT_EQ(object.record_count, 1u) << "the object published while the reader was parked";
  EXPECT_EQ(testing::ReadSegmentField32(name.path(), lane + ln::kReaderWaiting), 0u)
      << "the reader is no longer parked";
}

TEST(Segment, AParkedReaderIsWokenToSeeTheEnd) {
  ScopedName name("bell-end");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  const uint64_t lane = writer->layout().LaneOffset(reader->lane());
  // The reader parks; Close, finding it parked, rings it awake to see the end.
  auto next = std::async(std::launch::async, [&] { return reader->Next(20s); });
  ASSERT_TRUE(Eventually("the reader to park", [&] {
    return testing::ReadSegmentField32(name.path(), lane + ln::kReaderWaiting) == 1;
  }));
  ASSERT_OK(writer->Close(1s));
  EXPECT_RAISES(EndOfStream, next.get());
}

// A reader that waits for as long as its writer is idle (kForever) ends the wait only when told
// to: Interrupt, from another thread, ends it with kTimedOut, parked on the doorbell or, without
// one, sleeping its backoff; an Interrupt before the wait ends the next one.
TEST(Segment, InterruptEndsAWaitingNextAtOnce) {
  for (const bool doorbell : {true, false}) {
    SCOPED_TRACE(doorbell ? "doorbell" : "backoff");
    ScopedName name("interrupt");
    auto options = SmallWriter(name.name());
    options.doorbell = doorbell;
    ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
    ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
    const uint64_t lane = writer->layout().LaneOffset(reader->lane());
    auto next = std::async(std::launch::async,
                           [&] { return reader->Next(SegmentReader::kForever).status(); });
    ASSERT_TRUE(Eventually("the reader to park", [&] {
      return testing::ReadSegmentField32(name.path(), lane + ln::kReaderWaiting) == 1;
    }));
    reader->Interrupt();
    ASSERT_EQ(next.wait_for(20s), std::future_status::ready) << "the wait went on";
    EXPECT_RAISES(TimedOut, next.get());

    reader->Interrupt();
    EXPECT_RAISES(TimedOut, reader->Next(SegmentReader::kForever));
    ASSERT_OK(PublishRecords(*writer, 0, 1));
    EXPECT_OK(reader->Next(SegmentReader::kForever)) << "and the one after waits for its object";
  }
}

// CPU time the calling thread spends in `wait`.
std::chrono::nanoseconds ThreadCpuTime(const std::function<void()>& wait) {
  auto now = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
  };
  const auto start = now();
  wait();
  return now() - start;
}

TEST(Segment, WaitingSidesParkInsteadOfSpinning) {
  for (const bool doorbell : {true, false}) {
    SCOPED_TRACE(doorbell ? "doorbell" : "backoff");
    ScopedName name("idle");
    auto options = SmallWriter(name.name());
    options.slot_count = 1;
    options.doorbell = doorbell;
    ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
    ReaderOptions reader_options;
    reader_options.doorbell = doorbell;
    ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name(), reader_options));
    const auto reader_cpu = ThreadCpuTime([&] { EXPECT_RAISES(TimedOut, reader->Next(300ms)); });
    ASSERT_OK(PublishRecords(*writer, 0, 1));
    const auto writer_cpu = ThreadCpuTime([&] { EXPECT_RAISES(TimedOut, writer->Acquire(300ms)); });
    // A spinning wait would burn the whole 300 ms.
    EXPECT_LT(reader_cpu, 100ms);
    EXPECT_LT(writer_cpu, 100ms);
  }
}

TEST(Segment, WithoutADoorbellParkedSidesStillProgress) {
  ScopedName name("nobell");
  auto options = SmallWriter(name.name());
  options.doorbell = false;
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  EXPECT_NE(access((name.path() + ".bell").c_str(), F_OK), 0);
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  std::thread producer([&] {
    for (uint64_t i = 0; i < 20; ++i) ASSERT_OK(PublishRecords(*writer, i, 1));
  });
  content::Verifier verifier(ObjectKind::kRecords);
  for (int i = 0; i < 20; ++i) ASSERT_OK(TakeAndVerify(*reader, verifier));
  producer.join();
}

TEST(Segment, WriterAndReaderAcrossThreadsUnderBackpressure) {
  ScopedName name("threads");
  auto options = SmallWriter(name.name());
  options.slot_count = 2;
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(options));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  std::thread producer([&] {
    for (uint64_t i = 0; i < 300; ++i) ASSERT_OK(PublishRecords(*writer, i * 3, 3));
    ASSERT_OK(writer->Close(10s));
  });
  content::Verifier verifier(ObjectKind::kRecords);
  Status status;
  while ((status = TakeAndVerify(*reader, verifier)).ok()) {
  }
  producer.join();
  EXPECT_RAISES(EndOfStream, status);
  EXPECT_EQ(verifier.rows(), 900u);
}

// The daemon's local producers release from the subscriptions' threads while the producer's thread
// waits in Next (docs/brokerd.md, "Local producers"): the release rings the writer parked for a
// slot, which ends its park rather than waiting out its end, and the reader still waiting takes
// what the writer publishes then.
TEST(Segment, AReleaseFromAnotherThreadWhileNextWaitsWakesTheWriter) {
  ScopedName name("release-thread");
  ASSERT_OK_AND_ASSIGN(auto writer, SegmentWriter::Create(SmallWriter(name.name())));
  ASSERT_OK_AND_ASSIGN(auto reader, SegmentReader::Open(name.name()));
  std::vector<ObjectView> held;
  for (uint64_t object = 0; object < writer->layout().slot_count; ++object) {
    ASSERT_OK(PublishRecords(*writer, object, 1));
    ASSERT_OK_AND_ASSIGN(auto taken, reader->Next(5s));
    held.push_back(taken);
  }
  auto waiting_reader = std::async(std::launch::async, [&] { return reader->Next(10s); });
  auto acquired = std::async(std::launch::async, [&] { return writer->Acquire(10s); });
  ASSERT_TRUE(Eventually("the writer parks for a slot", [&] {
    return testing::ReadSegmentField32(name.path(), h::kWriterWaiting) == 1;
  }));
  const uint64_t rung_before = writer->rung_parks();
  ASSERT_OK(reader->Release(held[0]));
  auto slot = acquired.get();
  ASSERT_OK(slot);
  EXPECT_GT(writer->rung_parks(), rung_before) << "the release rang the writer out of its park";

  RecordsBatchBuilder builder;
  const std::string value = "after the release";
  builder.Add(Record{0, 99, 0, std::nullopt, value, {}});
  ASSERT_OK_AND_ASSIGN(const EncodedObject encoded, builder.Finish(slot->data, slot->capacity));
  ASSERT_OK(writer->Publish(encoded));
  auto next = waiting_reader.get();
  ASSERT_OK(next);
  EXPECT_EQ(next->first_offset, 99);
}

}  // namespace
}  // namespace sluice
