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

#include "sluice/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version as "MAJOR.MINOR.PATCH"; a static string. */
SLUICE_EXPORT const char* sluice_version(void);

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
SLUICE_EXPORT const char* sluice_err_str(sluice_err_t err);
/* This thread's message for its last failed call; valid until its next call into libsluice. */
SLUICE_EXPORT const char* sluice_last_error(void);

typedef enum sluice_object_kind_t {
  SLUICE_KIND_RECORDS = 1,
  SLUICE_KIND_CHUNKS = 2
} sluice_object_kind_t;

/* A timeout that never expires. */
#define SLUICE_WAIT_FOREVER (-1)

/* ---- writer ---- */

typedef struct sluice_writer_s sluice_writer_t;

/* A config grows by fields appended at its end. struct_size says how much of it the caller knows:
 * sluice_writer_config_init sets it to the size this caller was compiled with, and
 * sluice_writer_create reads only that much, so a caller built against an older sluice.h keeps
 * working with a newer libsluice, whose later fields then take their defaults. A struct_size
 * smaller than struct_size and name together, or larger than this libsluice knows (a caller built
 * against a newer sluice.h), fails with SLUICE_ERR_INVALID_ARGUMENT. A field appended later starts
 * at or after the previous version's sizeof, never in its tail padding (native/README.md, "A config
 * that grows").
 */
typedef struct sluice_writer_config_s {
  size_t struct_size; /* sizeof(sluice_writer_config_t) as the caller knows it */
  const char* name;   /* /dev/shm/NAME, or a path when it starts with '/'; copied */
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

/* Sets struct_size to `struct_size` and fills the fields that lie within it with the defaults
 * (64 slots of 1 MiB, 4 lanes, 5 s, checksums, RECORDS, no access group), writing nothing beyond
 * it. Called through sluice_writer_config_init, which passes the caller's sizeof. */
SLUICE_EXPORT void sluice_writer_config_init_sized(sluice_writer_config_t* config,
                                                   size_t struct_size);
/* Fills `config` with the defaults; inline, so that struct_size is the size this caller was
 * compiled with, not the library's. */
static inline void sluice_writer_config_init(sluice_writer_config_t* config) {
  sluice_writer_config_init_sized(config, sizeof(sluice_writer_config_t));
}

/* Creates the segment (mode 0600, or 0660 with an access group; published by rename) and its
 * doorbell. */
SLUICE_EXPORT sluice_err_t sluice_writer_create(const sluice_writer_config_t* config,
                                                sluice_writer_t** writer);
/* Waits until `count` readers are attached. */
SLUICE_EXPORT sluice_err_t sluice_writer_wait_readers(sluice_writer_t* writer, uint32_t count,
                                                      int timeout_ms);
/* Takes a free slot (a credit), waiting up to timeout_ms; *buffer and *capacity give the slot's
 * memory, owned by the segment, writable until sluice_writer_publish. */
SLUICE_EXPORT sluice_err_t sluice_writer_acquire(sluice_writer_t* writer, int timeout_ms,
                                                 void** buffer, size_t* capacity);
/* Seals the acquired slot, which holds an Arrow IPC record-batch message of `length` bytes, and
 * publishes it to every attached reader; *object_id (may be NULL) receives its id. */
SLUICE_EXPORT sluice_err_t sluice_writer_publish(sluice_writer_t* writer, size_t length,
                                                 uint32_t record_count, int32_t partition,
                                                 int64_t first_offset, int64_t last_offset,
                                                 uint64_t* object_id);
/* Marks the writer CLOSED, waits up to drain_timeout_ms for every slot to be released, and
 * unlinks the segment; SLUICE_ERR_TIMED_OUT when slots were still held. */
SLUICE_EXPORT sluice_err_t sluice_writer_close(sluice_writer_t* writer, int drain_timeout_ms);
/* Closes (without waiting) if needed, and frees the handle. NULL is ignored. */
SLUICE_EXPORT void sluice_writer_destroy(sluice_writer_t* writer);

/* ---- reader ---- */

typedef struct sluice_reader_s sluice_reader_t;

/* One object taken from the reader's lane. `data` points into the shared mapping and stays valid
 * until the object is released; the last two fields identify the slot for release. libsluice
 * writes it into the caller's memory, so unlike a config it keeps its size: a field added later
 * comes with a call of its own (native/README.md, "A config that grows"). */
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
SLUICE_EXPORT sluice_err_t sluice_reader_open(const char* name, int open_timeout_ms,
                                              sluice_reader_t** reader);
/* Takes the next object, waiting up to timeout_ms. SLUICE_ERR_END_OF_STREAM after the last one
 * of a closed writer; SLUICE_ERR_WRITER_DEAD, SLUICE_ERR_EVICTED, SLUICE_ERR_CORRUPT as named. */
SLUICE_EXPORT sluice_err_t sluice_reader_next(sluice_reader_t* reader, int timeout_ms,
                                              sluice_object_t* object);
/* Gives the object's slot back. */
SLUICE_EXPORT sluice_err_t sluice_reader_release(sluice_reader_t* reader,
                                                 const sluice_object_t* object);
/* Leaves the lane; the handle then only accepts sluice_reader_destroy. */
SLUICE_EXPORT void sluice_reader_detach(sluice_reader_t* reader);
/* Detaches if needed, unmaps, and frees the handle. NULL is ignored. */
SLUICE_EXPORT void sluice_reader_destroy(sluice_reader_t* reader);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_SLUICE_H */
