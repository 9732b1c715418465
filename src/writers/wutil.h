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
int ptc_map_put(struct ptc_map *m, uint64_t key, uint32_t val);

/* A 64-bit mix (murmur3's finaliser).  Inline, as the lookup below: the
 * writers' hot loops look up every indirect branch's destination that is
 * not its node's last one. */
static inline uint64_t ptc_hash64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/* Value of key, or UINT32_MAX. */
static inline uint32_t ptc_map_get(const struct ptc_map *m, uint64_t key)
{
	size_t i = ptc_hash64(key) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (m->keys[i] == UINT64_MAX)
			return UINT32_MAX;
	}
}

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
/* Bytes written into z so far (uncompressed); 0 for NULL. */
uint64_t ptc_zout_size_in(const struct ptc_zout *z);
int ptc_zout_write(struct ptc_zout *z, const void *p, size_t n);
int ptc_zout_printf(struct ptc_zout *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Finish the stream and close; returns a negative error on failure, with
 * errno the system's reason when it is an output error. */
int ptc_zout_close(struct ptc_zout *z);
/* Close without finishing (error paths). */
void ptc_zout_abort(struct ptc_zout *z);
/* A suspended output's stream (ptc_zout_suspend). */
struct ptc_zsusp;
/* Suspend *z (a writer gives up its open files): close its file and free
 * its compressor, keeping in *s (made by the first suspension) what it
 * takes to go on with the same stream, so that a file suspended any
 * number of times is one gzip member / one xz stream, as readers that read
 * only one (ChampSim's) need: gzip ends the deflate data at a byte
 * boundary (an empty stored block) and keeps the member's CRC and size;
 * xz ends its blocks and keeps their sizes for the stream's index (16
 * bytes a block: one per suspension, and one per block size of data),
 * the file ending with the last block until the stream ends.  Blocked
 * gzip (ptc_zout_open_mt) ends a member, plain files are flushed.  When
 * nothing was written to *z the file is left as it was.  *z becomes
 * NULL; returns a negative error when writing failed. */
int ptc_zout_suspend(struct ptc_zout **z, struct ptc_zsusp **s);
/* Go on with the stream suspended in *s at the end of path (its file),
 * on up to threads threads (0: as ptc_zout_open, else as
 * ptc_zout_open_mt; the same kind and level as before); *z takes *s over
 * (NULL after).  A stream that never had a byte starts in the (empty)
 * file.  ptc_zout_close ends the stream; ptc_zout_suspend suspends it
 * again.  Fails (errno ENOENT) when the file does not exist. */
int ptc_zout_resume(struct ptc_zout **z, const char *path, enum ptc_zkind kind, int level, int threads,
		    struct ptc_zsusp **s);
/* Whether the file of s holds complete streams (blocked gzip, plain
 * files): then, if no data follows, nothing more is due. */
int ptc_zsusp_ended(const struct ptc_zsusp *s);
void ptc_zsusp_free(struct ptc_zsusp *s);
/* The OS error of the last failure (errno value) or 0. */
int ptc_zout_errno(const struct ptc_zout *z);

#endif
