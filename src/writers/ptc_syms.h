/* The function symbols a .ptc embeds (ptconv-trace(5), "Symbols"): what
 * the writer's symbol reader (the recording's images) said of the
 * addresses the function-level formats (xray, perfetto: calls.c) look up,
 * so that a trace converts to them without the recording or the binaries,
 * into the same files.
 *
 * The writer notes, for every address it is given (a new node's branch
 * address and its targets, a new indirect edge's destination), the
 * symbol reader's answer: a range of addresses with the same answer and
 * that answer.  A range that overlaps none noted before holds from the
 * trace's start; one that overlaps an earlier range (the mappings changed:
 * an exec, a library unloaded and another loaded there) holds from the
 * record it was met at, over the earlier ones.
 */
#ifndef PTC_WRITERS_PTC_SYMS_H
#define PTC_WRITERS_PTC_SYMS_H

#include <stddef.h>
#include <stdint.h>

#include "writers/writers.h"
#include "writers/wutil.h"

struct ptc_symw_entry {
	uint64_t from;		/* the first record it holds for */
	uint64_t lo, hi;	/* the range */
	uint64_t start;		/* the function's start, 0 none */
	uint64_t vaddr;		/* lo as an address of the image */
	uint32_t image;		/* 0 none, else index + 1 into the images */
	uint32_t name_len;
	uint64_t name;		/* offset in the names */
	int shadowed;		/* a later range overlaps it */
};

/* An address range [lo, hi). */
struct ptc_symw_range {
	uint64_t lo, hi;
};

struct ptc_symw {
	struct ptc_symw_entry *v;
	size_t n, cap;
	struct ptc_map ident;	/* hash of an answer -> its entry, probed */
	struct ptc_symw_range *cover;	/* the union of the ranges, sorted, disjoint */
	size_t ncover, capcover;
	char **images;
	size_t nimages, capimages;
	char *names;
	size_t names_len, names_cap;
	/* The ranges of the answers noted in the reader's epoch known_epoch,
	 * sorted (one epoch's answers do not overlap): an address in one has
	 * the same answer again.  Emptied when the epoch changes or an entry
	 * shadows others. */
	struct ptc_symw_range *known;
	size_t nknown, capknown;
	uint64_t known_epoch;
};

int ptc_symw_init(struct ptc_symw *s);
void ptc_symw_free(struct ptc_symw *s);

/* Note what r says of run-time address addr, met at record rec (records
 * are met in order).  0, or -ptc_err_nomem. */
int ptc_symw_note(struct ptc_symw *s, const struct ptc_symbol_reader *r, uint64_t addr, uint64_t rec);

/* The entries (s->n) in the table's order, by record and address: a
 * malloc'd copy, NULL when out of memory.  Their names are in s->names,
 * their images in s->images. */
struct ptc_symw_entry *ptc_symw_sorted(const struct ptc_symw *s);

#endif
