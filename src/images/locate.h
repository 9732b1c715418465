/* Finding the file behind a mapping the way perf does.
 *
 * Order: the build-id cache (DIR/.build-id/xx/yyyy... and, for the vDSO,
 * DIR/[vdso]/BUILDID/vdso) when a build-id is known, then the path under
 * --symfs, then the path itself.  A candidate whose build-id differs from the
 * expected one is reported as a mismatch rather than used.
 */
#ifndef PTC_IMAGES_LOCATE_H
#define PTC_IMAGES_LOCATE_H

#include <stddef.h>
#include <stdint.h>

enum ptc_locate_result {
	PTC_LOCATE_FOUND = 0,		/* *path is a file whose build-id matches (or none was expected) */
	PTC_LOCATE_MISSING = 1,		/* nothing at any place */
	PTC_LOCATE_MISMATCH = 2,	/* a file exists but its build-id differs: *path names it */
};

struct ptc_locate_options {
	const char *symfs;		/* NULL: none */
	const char *buildid_dir;	/* NULL: $HOME/.debug */
};

/* Returns an enum ptc_locate_result (or a negative ptc error code) and the
 * chosen path in path (pathlen bytes). */
int ptc_locate_image(const struct ptc_locate_options *opt, const char *filename,
		     const uint8_t *build_id, size_t build_id_size,
		     char *path, size_t pathlen);

/* Read an ELF file's NT_GNU_BUILD_ID: returns its size (up to 20 bytes
 * copied to out), 0 when it has none, <0 when the file is not readable ELF. */
int ptc_read_build_id(const char *path, uint8_t out[20]);

/* Lower-case hex of a build-id into out (2*size+1 bytes). */
void ptc_build_id_hex(const uint8_t *id, size_t size, char *out);

#endif
