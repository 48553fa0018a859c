// A local producer: a process on the daemon's host that hands the daemon its own segment of
// CHUNKS objects with PRODUCE, so that its chunks skip the broker (docs/brokerd.md, "Local
// producers"). The daemon is the segment's reader: a thread takes each object, checks it, and
// routes one ReadyMessage per chunk row, viewing the payload in the producer's slot, to the
// CHUNK_STREAMS subscriptions of the PRODUCE's topic.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "daemon/metrics.h"
#include "ingest/local_chunk_router.h"
#include "sluice/segment_reader.h"
#include "sluice/status.h"

namespace sluice::brokerd {

// How producer segments are named in the segment folder: the prefix, then 16 random hex digits
// (the Java client's LocalChunkChannel.SEGMENT_PREFIX, docs/sluice-sink.md).
inline constexpr std::string_view kProducerSegmentPrefix = "sluice-produce-";

// The daemon-wide series of local producers (docs/brokerd.md, "Metrics").
struct LocalProducerCounters {
  Counter& chunks;     // sluice_local_chunks_total: chunk rows taken from producer segments
  Counter& bytes;      // sluice_local_bytes_total: their payload bytes
  Counter& unrouted;   // sluice_local_chunks_unrouted_total: taken, but no subscription wanted them
  Counter& malformed;  // sluice_local_objects_malformed_total: producers that broke the format
  Gauge& producers;    // sluice_local_producers: producers attached now
};

// Registers the series above in `metrics`.
LocalProducerCounters LocalProducerMetrics(Metrics& metrics);

// At start-up: removes from `segment_dir` the producer segments (kProducerSegmentPrefix) whose
// writer is gone, a heartbeat older than the segment's liveness timeout, and their doorbells,
// logging stale_producer_segment_removed or stale_producer_segment_kept. A producer killed while
// no daemon read its segment, or while the daemon was down, leaves them to nobody else.
void RemoveDeadProducerSegments(const std::string& segment_dir);

class LocalProducer {
 public:
  // Called once, from the producer's thread, when an object of the segment is malformed or the
  // segment breaks: the message names the producer, the segment, the object and what is wrong.
  using OnFailure = std::function<void(const std::string& message)>;

  // Opens `segment_path`, which must be `segment_dir` (the segment folder), a slash and a name of
  // [A-Za-z0-9._-], by that name in the folder without following a link; checks it is a regular
  // file of `owner_uid` and a CHUNKS segment of the CHUNKS schema, attaches a lane and starts
  // taking objects. kInvalidArgument names the path and what is wrong, except that a file the
  // peer may not hand over (missing, another's, no regular file, a link) is refused in one and
  // the same words, the difference logged only (producer_segment_refused); kNoFreeLane when
  // every lane is taken.
  static Result<std::unique_ptr<LocalProducer>> Start(uint64_t id, const std::string& segment_path,
                                                      uid_t owner_uid, std::string topic,
                                                      std::string segment_dir,
                                                      LocalChunkRouter& router,
                                                      LocalProducerCounters counters,
                                                      OnFailure on_failure);
  ~LocalProducer();  // Stop()
  LocalProducer(const LocalProducer&) = delete;
  LocalProducer& operator=(const LocalProducer&) = delete;

  // Takes the objects already published, routes them, and stops. The lane is left when the last
  // routed chunk is gone (its subscriptions took or dropped it); until then the slots stay held.
  void Stop();
  // Stop, then removes the segment and its doorbell as a dead writer's: the producer's connection
  // ended, which is what a killed producer's end looks like first, long before its heartbeat is
  // stale (docs/brokerd.md, "Local producers").
  void StopAfterItsConnectionEnded();
  // The thread ended by itself: the writer closed the segment or died (after its objects were
  // taken, and its file removed), or the producer failed (OnFailure was called).
  bool ended() const { return ended_.load(std::memory_order_acquire); }
  uint64_t id() const { return id_; }
  const std::string& topic() const;

 private:
  struct Attachment;
  LocalProducer(uint64_t id, std::shared_ptr<Attachment> attachment, LocalChunkRouter& router,
                LocalProducerCounters counters, OnFailure on_failure);
  void Run();
  // Removes the segment file of a writer that died (or whose connection ended: `cause`), if its
  // name in the segment folder still names the file mapped, then its doorbell
  // socket if it is one of the producer's user; logs dead_producer_segment_removed or
  // dead_producer_segment_kept with the reason (and dead_producer_doorbell_kept when the socket
  // stays). Once only.
  void RemoveDeadWritersSegment(const char* cause);
  // Routes every chunk row of the object (kCorrupt, routing none, when it is malformed).
  Status RouteObject(const ObjectView& object);

  const uint64_t id_;
  // The reader and what the routed chunks view besides the slot: shared with every chunk.
  std::shared_ptr<Attachment> attachment_;
  LocalChunkRouter& router_;
  LocalProducerCounters counters_;
  OnFailure on_failure_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> ended_{false};
  bool segment_removed_ = false;  // by the thread while it runs, by the caller once it is joined
  std::thread thread_;
};

}  // namespace sluice::brokerd
