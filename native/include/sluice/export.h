/* SLUICE_EXPORT: what libsluice lets other binaries link to.
 *
 * libsluice is built with hidden visibility (native/CMakeLists.txt; docs/architecture.md,
 * "libsluice exports only what its headers mark"): a function or class of the library is reachable
 * from another binary only when its declaration in include/sluice/ carries this mark, and a check
 * of the built library (native/test/check_exports.py) fails when the two disagree. The C API of
 * sluice.h is the stable surface; the C++ classes are exported for the daemon and the tools, built
 * with the same compiler and headers. C and C++ headers both include this one; C++ takes the
 * standard attribute form, which g++ accepts beside [[nodiscard]] where it rejects __attribute__.
 */
#ifndef SLUICE_EXPORT_H
#define SLUICE_EXPORT_H

#if defined(__cplusplus)
#define SLUICE_EXPORT [[gnu::visibility("default")]]
#elif defined(__GNUC__)
#define SLUICE_EXPORT __attribute__((visibility("default")))
#else
#define SLUICE_EXPORT
#endif

#endif /* SLUICE_EXPORT_H */
