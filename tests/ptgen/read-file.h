/* ptgen_read_file: a whole file in memory, for the small reference tools
 * of the tests (ptblk, ptqry-rate); exits with status 2 when it cannot. */
#ifndef PTGEN_READ_FILE_H
#define PTGEN_READ_FILE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static inline uint8_t *ptgen_read_file(const char *tool, const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;

	if (!f || fstat(fileno(f), &st)) {
		fprintf(stderr, "%s: %s: %s\n", tool, path, strerror(errno));
		exit(2);
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		fprintf(stderr, "%s: %s: read failed\n", tool, path);
		exit(2);
	}
	fclose(f);
	*size = (size_t)st.st_size;
	return buf;
}

#endif
