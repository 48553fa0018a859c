/* libsluice: the C API of Sluice's shared-memory object store (docs/formats.md "Segment").
 *
 * Conventions, after librdkafka: opaque handles; functions return sluice_err_t; on failure
 * sluice_last_error() gives this thread's text of what failed, naming the field and its value
 * for a corrupt segment. The caller owns what *_create / *_open returns and frees it with the
 * matching *_destroy. A handle is used from one thread at a time. */
#ifndef SLUICE_SLUICE_H
#define SLUICE_SLUICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version as "MAJOR.MINOR.PATCH"; a static string. */
const char* sluice_version(void);

typedef enum sluice_err_t {
  SLUICE_OK = 0,
  SLUICE_ERR_INVALID_ARGUMENT = 1,
  SLUICE_ERR_IO = 2,      /* a system call failed */
  SLUICE_ERR_CORRUPT = 3, /* the segment breaks the format */
  SLUICE_ERR_TIMED_OUT = 4,
  SLUICE_ERR_END_OF_STREAM = 5, /* the writer closed and every object was taken */
  SLUICE_ERR_WRITER_DEAD = 6,
  SLUICE_ERR_EVICTED = 7, /* the writer took this reader's lane back */
  SLUICE_ERR_NO_FREE_LANE = 8,
  SLUICE_ERR_TOO_LARGE = 9, /* an object larger than a slot */
  SLUICE_ERR_INVALID_STATE = 10,
  SLUICE_ERR_ALREADY_EXISTS = 11, /* a file is in the way of the segment's name */
  SLUICE_ERR_NO_SPACE = 12        /* the segment's folder has no room for its memory */
} sluice_err_t;

/* A static description of the code. */
const char* sluice_err_str(sluice_err_t err);
/* This thread's message for its last failed call; valid until its next call into libsluice. */
const char* sluice_last_error(void);

typedef enum sluice_object_kind_t {
  SLUICE_KIND_RECORDS = 1,
  SLUICE_KIND_CHUNKS = 2
} sluice_object_kind_t;

/* A timeout that never expires. */
#define SLUICE_WAIT_FOREVER (-1)

/* ---- writer ---- */

typedef struct sluice_writer_s sluice_writer_t;

typedef struct sluice_writer_config_s {
  const char* name; /* /dev/shm/NAME, or a path when it starts with '/'; copied */
  sluice_object_kind_t kind;
  uint32_t slot_count;
  uint64_t slot_size;  /* a multiple of 64, at least 256 */
  uint32_t lane_count; /* readers that can attach at once, 1-31 */
  uint64_t liveness_timeout_ms;
  int checksums; /* nonzero: a CRC32C with every slot */
  /* -1: only the writer's uid may open the segment and its doorbell (mode 0600); a gid: that
   * group may too (mode 0660), and the writer must be a member of it, or root. */
  int64_t access_group;
} sluice_writer_config_t;

/* Fills `config` with the defaults (64 slots of 1 MiB, 4 lanes, 5 s, checksums, RECORDS, no
 * access group). */
void sluice_writer_config_init(sluice_writer_config_t* config);

/* Creates the segment (mode 0600, or 0660 with an access group; published by rename) and its
 * doorbell. */
sluice_err_t sluice_writer_create(const sluice_writer_config_t* config, sluice_writer_t** writer);
/* Waits until `count` readers are attached. */
sluice_err_t sluice_writer_wait_readers(sluice_writer_t* writer, uint32_t count, int timeout_ms);
/* Takes a free slot (a credit), waiting up to timeout_ms; *buffer and *capacity give the slot's
 * memory, owned by the segment, writable until sluice_writer_publish. */
sluice_err_t sluice_writer_acquire(sluice_writer_t* writer, int timeout_ms, void** buffer,
                                   size_t* capacity);
/* Seals the acquired slot, which holds an Arrow IPC record-batch message of `length` bytes, and
 * publishes it to every attached reader; *object_id (may be NULL) receives its id. */
sluice_err_t sluice_writer_publish(sluice_writer_t* writer, size_t length, uint32_t record_count,
                                   int32_t partition, int64_t first_offset, int64_t last_offset,
                                   uint64_t* object_id);
/* Marks the writer CLOSED, waits up to drain_timeout_ms for every slot to be released, and
 * unlinks the segment; SLUICE_ERR_TIMED_OUT when slots were still held. */
sluice_err_t sluice_writer_close(sluice_writer_t* writer, int drain_timeout_ms);
/* Closes (without waiting) if needed, and frees the handle. NULL is ignored. */
void sluice_writer_destroy(sluice_writer_t* writer);

/* ---- reader ---- */

typedef struct sluice_reader_s sluice_reader_t;

/* One object taken from the reader's lane. `data` points into the shared mapping and stays valid
 * until the object is released; the last two fields identify the slot for release. */
typedef struct sluice_object_s {
  const uint8_t* data; /* the Arrow IPC encapsulated RecordBatch message */
  size_t length;
  uint64_t object_id;
  uint32_t record_count;
  int32_t partition;
  int64_t first_offset;
  int64_t last_offset;
  uint32_t slot;
  uint32_t generation;
} sluice_object_t;

/* Opens /dev/shm/NAME (or the path NAME), waiting up to open_timeout_ms for it to appear,
 * validates its header, attaches to a free lane and connects to the doorbell. */
sluice_err_t sluice_reader_open(const char* name, int open_timeout_ms, sluice_reader_t** reader);
/* Takes the next object, waiting up to timeout_ms. SLUICE_ERR_END_OF_STREAM after the last one
 * of a closed writer; SLUICE_ERR_WRITER_DEAD, SLUICE_ERR_EVICTED, SLUICE_ERR_CORRUPT as named. */
sluice_err_t sluice_reader_next(sluice_reader_t* reader, int timeout_ms, sluice_object_t* object);
/* Gives the object's slot back. */
sluice_err_t sluice_reader_release(sluice_reader_t* reader, const sluice_object_t* object);
/* Leaves the lane; the handle then only accepts sluice_reader_destroy. */
void sluice_reader_detach(sluice_reader_t* reader);
/* Detaches if needed, unmaps, and frees the handle. NULL is ignored. */
void sluice_reader_destroy(sluice_reader_t* reader);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_SLUICE_H */
