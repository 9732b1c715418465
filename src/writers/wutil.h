/* Small helpers shared by the writers: growable arrays, an integer hash
 * map, and buffered compressed output (gzip, xz). */
#ifndef PTC_WRITERS_WUTIL_H
#define PTC_WRITERS_WUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Open-addressing map from a 64-bit key (never UINT64_MAX) to a u32. */
struct ptc_map {
	uint64_t *keys;
	uint32_t *vals;
	size_t mask, n;
};

int ptc_map_init(struct ptc_map *m);
void ptc_map_free(struct ptc_map *m);
/* Value of key, or UINT32_MAX. */
uint32_t ptc_map_get(const struct ptc_map *m, uint64_t key);
int ptc_map_put(struct ptc_map *m, uint64_t key, uint32_t val);
uint64_t ptc_hash64(uint64_t x);

/* Compressed output file. */
enum ptc_zkind { PTC_Z_NONE, PTC_Z_GZIP, PTC_Z_XZ };

struct ptc_zout;

/* Create path (O_EXCL is not used: outputs are overwritten). */
int ptc_zout_open(struct ptc_zout **z, const char *path, enum ptc_zkind kind, int level);
/* Create path for output compressed on up to threads threads (>= 1), in
 * bytes that depend only on the input, kind and level, never on threads:
 * xz through liblzma's multi-threaded encoder with a block size fixed by
 * the preset; gzip as independent 4 MiB blocks, one gzip member each
 * (every gzip reader reads them as one stream).  Both differ from the
 * single-stream bytes of ptc_zout_open.  Memory: up to about three xz
 * blocks per thread (130 MiB at preset 3), or 2 * threads gzip blocks in
 * and out (16 MiB per thread), touched as data comes; at most 8 threads. */
int ptc_zout_open_mt(struct ptc_zout **z, const char *path, enum ptc_zkind kind, int level,
		     int threads);
/* Append to an existing file as a new gzip member / xz stream; fails
 * (errno ENOENT) when the file does not exist. */
int ptc_zout_append(struct ptc_zout **z, const char *path, enum ptc_zkind kind, int level);
/* The same for the bytes of ptc_zout_open_mt: appending to a file the
 * stream(s) that ptc_zout_open_mt would have written to an empty one. */
int ptc_zout_append_mt(struct ptc_zout **z, const char *path, enum ptc_zkind kind, int level,
		       int threads);
/* Bytes written into z so far (uncompressed); 0 for NULL. */
uint64_t ptc_zout_size_in(const struct ptc_zout *z);
int ptc_zout_write(struct ptc_zout *z, const void *p, size_t n);
int ptc_zout_printf(struct ptc_zout *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Finish the stream and close; returns a negative error on failure, with
 * errno the system's reason when it is an output error. */
int ptc_zout_close(struct ptc_zout *z);
/* Close without finishing (error paths). */
void ptc_zout_abort(struct ptc_zout *z);
/* Suspend *z (a writer gives up its open files): finish it, so that the
 * file ends in a complete gzip member / xz stream, or, when nothing was
 * written to it, drop it (nothing of it reached the file) and set *fresh:
 * if no data follows, the empty stream is still due.  *z becomes NULL;
 * returns a negative error when finishing failed. */
int ptc_zout_suspend(struct ptc_zout **z, int *fresh);
/* The OS error of the last failure (errno value) or 0. */
int ptc_zout_errno(const struct ptc_zout *z);

#endif
