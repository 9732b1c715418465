/* Internals of an image, shared by the loader (image.c) and the branch
 * table builder (branch_table.c).  Nothing outside src/images includes this.
 */
#ifndef PTC_IMAGES_IMAGE_INT_H
#define PTC_IMAGES_IMAGE_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "images/image.h"
#include "images/symtab.h"

/* One executable segment (PT_LOAD with PF_X) or the whole raw dump: the code
 * bytes the process sees at [vaddr, vaddr + size), and where in the
 * instruction-boundary bitmap its bytes start. */
struct ptc_span {
	uint64_t vaddr;
	uint64_t size;		/* bytes present in the file (p_filesz) */
	uint64_t offset;	/* file offset of vaddr (p_offset) */
	const uint8_t *bytes;
	size_t word0;		/* first 64-bit word of this span in the bitmap */
};

/* A range of addresses to decode linearly: an executable section, or a
 * whole span when the file has no section headers. */
struct ptc_region {
	uint64_t start, end;
};

/* Straight-line code found by the linear sweep: consecutive instructions
 * with no undecodable byte and no region gap between them. */
struct ptc_run {
	uint64_t start, end;
};

struct ptc_image {
	/* The execution mode the table decodes (16, 32, 64).  A table of
	 * another mode is an image of its own (ptc_image_in_mode()) that
	 * shares base's file, spans, regions, symbols and name: it owns only
	 * its table. */
	unsigned mode;
	const struct ptc_image *base;	/* NULL: this is the file's image */
	struct ptc_image *modes[3];	/* the other modes' (base only), by mode_slot() */
	pthread_mutex_t modes_lock;	/* (base only) guards building them */

	char *name;
	char *table_dir;	/* (base only) the table cache's directory, NULL none */
	int table_cached;	/* the table was read from the table cache */
	uint8_t build_id[20];
	size_t build_id_size;

	void *map;		/* the whole file, mmap'ed (ELF files) */
	size_t map_size;
	uint8_t *copy;		/* or a private copy (ptc_image_from_bytes) */

	struct ptc_span *spans;	/* sorted by vaddr, disjoint */
	size_t nspans;
	struct ptc_region *regions;	/* sorted, disjoint, each inside a span */
	size_t nregions;

	/* The instruction-boundary index: one bit per code byte, set where the
	 * linear sweep found an instruction start, and per 64-bit word the
	 * number of bits set in all words before it. */
	uint64_t *bits;
	uint32_t *rank;
	uint32_t *first_br;	/* per word: the first branch at or after the word's first byte */
	size_t nwords;		/* each array has nwords + 1 entries (a spare at the end) */

	struct ptc_run *runs;	/* sorted by start */
	size_t nruns;

	struct ptc_tbranch *br;	/* sorted by ip */
	size_t nbr;
	/* A table read from the table cache: the file, mapped read-only, which
	 * the five arrays above point into (NULL: they are the heap's). */
	void *table_map;
	size_t table_map_size;

	struct ptc_symtab syms;	/* function symbols (ELF images) */

	/* Build statistics. */
	uint64_t ninsns;	/* instructions found by the sweep */
	uint64_t bad_bytes;	/* undecodable bytes skipped (resynchronised) */
	uint64_t first_bad;	/* address of the first one, 0 if none */
};

/* Sweep every region, fill the bitmap, runs and branches, then resolve
 * targets and instruction counts; threads > 1 shares the decoding of large
 * regions with threads - 1 helpers (the same table).  Returns 0 or a
 * negative ptc error. */
int ptc_image_build_table(struct ptc_image *img, int threads, char *err, size_t errlen);

/* Free img's table (bits, rank, first_br, runs, br) and zero its counts:
 * an image with no table yet. */
void ptc_image_drop_table(struct ptc_image *img);

/* The index of mode bits in struct ptc_image's modes[], -1 for no mode. */
static inline int ptc_mode_slot(unsigned bits)
{
	return bits == 16 ? 0 : bits == 32 ? 1 : bits == 64 ? 2 : -1;
}

#endif
