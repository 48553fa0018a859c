/* libsluice: the C API of Sluice's shared-memory object store.
 *
 * Conventions, after librdkafka: opaque handles, functions return sluice_err_t, the caller
 * owns what a *_new / *_create returns and frees it with the matching *_destroy. */
#ifndef SLUICE_SLUICE_H
#define SLUICE_SLUICE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version as "MAJOR.MINOR.PATCH"; a static string. */
const char* sluice_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_SLUICE_H */
