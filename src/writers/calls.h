/* Function-level calls and returns of one thread, for the formats that
 * write them (xray, perfetto): a thread's branches turned into function
 * enters and exits by the rules of ptconv-formats(5), "xray" (calls,
 * returns compressed or not, tail calls, longjmp and exceptions, signal
 * handlers, losses), with the functions named by the images' symbols.
 *
 * The tracker keeps a stack of frames (function, return address) and
 * tells its sink of each enter and exit, in order, with a time that never
 * goes back.  Functions are numbered per thread in the order met, in a
 * table (struct ptc_funcs) that the format may keep after the tracker
 * goes.
 */
#ifndef PTC_WRITERS_CALLS_H
#define PTC_WRITERS_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "common/trace_event.h"
#include "writers/writers.h"
#include "writers/wutil.h"

/* A function a thread met: the symbol's entry, or (no symbol) the address
 * a call went to. */
struct ptc_func {
	uint64_t start;
	uint64_t vaddr;		/* start as an address of its image */
	char *name;		/* NULL: no symbol */
	char *image;		/* NULL: in no known image */
	uint32_t id;		/* the format's (xray: its id in the log) */
};

struct ptc_funcs {
	struct ptc_func *v;	/* by the thread's numbers */
	size_t n, cap;
};

void ptc_funcs_free(struct ptc_funcs *f);

/* A function's name for people: its symbol's; without one IMAGE+0xVADDR
 * (IMAGE the file's base name, VADDR the address in it), or 0xADDRESS. */
void ptc_func_name(const struct ptc_func *f, char *name, size_t size);

/* The same, C++ names demangled by the C++ runtime. */
void ptc_func_demangled_name(const struct ptc_func *f, char *name, size_t size);

/* How a frame is left. */
enum ptc_calls_how {
	PTC_CALLS_EXIT,		/* a return, or unwound by one (longjmp, an exception) */
	PTC_CALLS_TAIL,		/* a tail call replaces it (an enter follows) */
	PTC_CALLS_LOST,		/* a gap: what happened there is unknown */
};

struct ptc_calls_sink {
	/* fn entered at time; depth: frames below it */
	int (*enter)(void *ctx, uint32_t fn, size_t depth, uint64_t time);
	/* the frame of fn at depth left at time */
	int (*leave)(void *ctx, uint32_t fn, size_t depth, uint64_t time, enum ptc_calls_how how);
	void *ctx;
};

struct ptc_calls_frame {
	uint32_t fn;		/* the thread's function number */
	uint64_t ret;		/* where its return goes, 0 when unknown */
};

struct ptc_calls {
	struct ptc_funcs *fns;
	const struct ptc_symbol_reader *sym;
	struct ptc_calls_sink sink;
	uint32_t max_fns;	/* function numbers stay below */
	int untimed;		/* the clock counts instructions */
	uint64_t insns;		/* instructions so far */
	uint64_t last;		/* the last time given to the sink */
	uint64_t latest;	/* the latest branch time */
	struct ptc_calls_frame *st;
	size_t depth, capst;
	struct ptc_map ids;	/* hash of start -> function number, probed */
	struct ptc_symbol cache[4];
	unsigned ncache, next_cache;
	/* call targets met, direct-mapped: their function (gen: the
	 * mappings they were met in, counted by forget_symbols()) */
	struct {
		uint64_t addr;
		uint32_t gen, fn;
	} targets[1024];
	uint32_t gen;
};

/* Set up k to number functions into fns (below max_fns) and to name them
 * with sym (NULL: by address); untimed: the recording has no timing
 * packets, times are the instructions the thread executed so far.
 * 0 or -ptc_err_nomem. */
int ptc_calls_init(struct ptc_calls *k, struct ptc_funcs *fns, const struct ptc_symbol_reader *sym,
		   uint32_t max_fns, int untimed, const struct ptc_calls_sink *sink);
void ptc_calls_fini(struct ptc_calls *k);

/* The branches' enters and exits, given to the sink.  0, the sink's
 * error, or -ptc_err_nomem (out of memory or function numbers). */
int ptc_calls_branches(struct ptc_calls *k, const struct ptc_branch *b, size_t n);

/* A loss at time (perf ns): every open frame is left there, the innermost
 * first (PTC_CALLS_LOST), and the returns after it that would have left
 * them leave nothing. */
int ptc_calls_gap(struct ptc_calls *k, uint64_t time);

/* The time of an event at perf time time (a gap's): time, raised to the
 * last one given; in an untimed recording the instructions so far. */
static inline uint64_t ptc_calls_time(const struct ptc_calls *k, uint64_t time)
{
	if (k->untimed)
		return k->insns;
	return time > k->last ? time : k->last;
}

/* The time of the trace so far: its latest branch's, or in an untimed
 * recording the instructions so far. */
static inline uint64_t ptc_calls_now(const struct ptc_calls *k)
{
	if (k->untimed)
		return k->insns;
	return k->latest > k->last ? k->latest : k->last;
}

#endif
