/* A memo of TNT paths: (branch-table entry, the next TNT bits) -> the
 * branches the walker takes.
 *
 * At a conditional branch the walker's next steps depend only on where it
 * stands in a branch table and on the taken bits that follow: conditional
 * branches take one bit each, direct jumps and calls none.  So a run of
 * them is worked out once per (table, entry, bits) and afterwards replayed
 * from the memo, several branches per lookup, as the fastest Intel PT
 * decoders do.  Returns whose call is in the path go back to its
 * fall-through (a call to its own next instruction is no such call: it
 * pushes nothing for return compression).  A path stops before anything that needs more than the
 * table and a bit (a return to a caller outside it, an indirect branch, a
 * successor the table does not know, a far branch) and always ends with a
 * conditional branch or a return, so that the walker's bookkeeping after it
 * is the one those leave.  A path that would take no branch is remembered
 * as such (nsteps 0).
 *
 * Paths are never moved or freed before the memo: callers and sinks may
 * keep pointers to them (their addresses identify them).  Memory is
 * bounded: once the memo holds max_bytes, lookups that miss return NULL
 * and the walker goes on one branch at a time.
 */
#ifndef PTC_DECODERS_INTEL_PT_TNT_PATH_H
#define PTC_DECODERS_INTEL_PT_TNT_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "common/trace_event.h"
#include "images/image.h"

/* A memo's size at most.  Lookups in a memo much larger than the caches
 * cost more than stepping saves (a random walk over python3's code fills
 * 32 MiB and then ran 40% slower than one branch at a time; python3's
 * JSON round trip wants 13 MiB and was 4% slower), while the hot code of
 * xz and gzip needs 2.3 MiB.  So the walker stops using a memo once it is
 * full (ptc_path_memo_open()). */
#define PTC_PT_MEMO_BYTES ((size_t)8 << 20)

/* Bits looked up at a time: a TNT-8 packet holds at most 6. */
#define PTC_PATH_BITS 8
/* Branches in a path at most. */
#define PTC_PATH_STEPS 32

/* One branch of a path, in the table's (image) addresses. */
struct ptc_path_step {
	uint64_t ip, target;
	uint32_t insns;		/* instructions of its record; step 0's are the walker's */
	uint32_t idx;		/* its table entry (a call's return hint) */
	uint8_t kind, taken, length;
};

struct ptc_tnt_path {
	struct ptc_path path;		/* what sinks are shown (common/trace_event.h) */
	uint8_t nsteps;
	uint8_t tnt_bits;		/* TNT bits it uses (conditionals and returns) */
	uint8_t stack;			/* it has calls that push or returns */
	/* What it does to a call stack as a whole: its returns go back to
	 * its own calls, so all that stays is the pushes of the calls whose
	 * returns it has not (keep_mask: steps by bit), on top of the stack
	 * as it found it, which it leaves alone.  It pushes push_mask's
	 * steps in all and goes max_depth above where it started. */
	uint8_t max_depth;
	uint32_t push_mask, keep_mask;
	uint32_t end_idx, end_insns;	/* the walker's position after it */
	uint64_t end_ip;		/* where that block starts (image address) */
	/* (path.rec points past step[nsteps]) */
	struct ptc_path_step step[];
};

/* The memo: an open-addressing hash table of (table, entry, bits) keys
 * pointing into an arena of paths, which grows by chunks and never moves a
 * path.  Its fields are tnt_path.c's; they are here so that a lookup that
 * hits, by far the most common case, is inlined in the walker. */
struct ptc_path_slot {
	const struct ptc_tbranch *tb;	/* NULL: empty */
	uint64_t key;			/* entry << 16 | nbits << 8 | bits */
	struct ptc_tnt_path *path;
};

struct ptc_path_memo {
	struct ptc_path_slot *slots;
	size_t mask, count;
	struct ptc_path_memo_chunk *chunks;
	size_t bytes, max_bytes;
	int full;		/* it has stopped taking paths: see ptc_path_memo_open() */
};

/* A product's middle bits folded onto its low ones: the low bits alone
 * (masked) or the middle bits alone, as before, clustered the keys of one
 * table in the linear probing, and how much depended on where the heap
 * put the table (callgrind: 26M to 43M instructions of probing on xz). */
static inline size_t ptc_path_hash(const struct ptc_tbranch *tb, uint64_t key)
{
	uint64_t h = (((uint64_t)(uintptr_t)tb >> 4) ^ key) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ (h >> 29) ^ (h >> 43));
}

/* The key of entry idx's path for nbits taken bits. */
static inline uint64_t ptc_path_key(uint32_t idx, unsigned nbits, uint32_t bits)
{
	return (uint64_t)idx << 16 | nbits << 8 | bits;
}

/* A memo of at most max_bytes (0: PTC_PT_MEMO_BYTES). */
int ptc_path_memo_new(struct ptc_path_memo **out, size_t max_bytes);
void ptc_path_memo_free(struct ptc_path_memo *m);

/* The path from conditional branch idx of table tb (ntb entries) for the
 * nbits (1 to PTC_PATH_BITS) taken bits in bits, the first one in bit
 * nbits - 1.  It may use fewer bits (tnt_bits says how many).  NULL: the
 * memo is full (or out of memory) and does not know it. */
struct ptc_tnt_path *ptc_path_memo_add(struct ptc_path_memo *m, size_t slot, const struct ptc_tbranch *tb,
				       uint32_t ntb, uint32_t idx, unsigned nbits, uint32_t bits);
/* The slot of key in m's table (which must exist): the key's, or the
 * empty one its probe ends on, where it goes. */
static inline size_t ptc_path_memo_probe(const struct ptc_path_memo *m, const struct ptc_tbranch *tb, uint64_t key)
{
	const struct ptc_path_slot *slots = m->slots;
	size_t i;

	for (i = ptc_path_hash(tb, key) & m->mask; slots[i].tb; i = (i + 1) & m->mask)
		if (slots[i].tb == tb && slots[i].key == key)
			break;
	return i;
}

static inline struct ptc_tnt_path *ptc_path_memo_get(struct ptc_path_memo *m, const struct ptc_tbranch *tb,
						     uint32_t ntb, uint32_t idx, unsigned nbits, uint32_t bits)
{
	size_t i = 0;

	if (m->slots) {
		i = ptc_path_memo_probe(m, tb, ptc_path_key(idx, nbits, bits));
		if (m->slots[i].tb)
			return m->slots[i].path;
	}
	/* a miss: ptc_path_memo_add() works the path out (slot i: where the
	 * lookup ended, the key's place) */
	return ptc_path_memo_add(m, i, tb, ntb, idx, nbits, bits);
}

/* Whether the memo still takes paths: once it holds max_bytes, lookups
 * return NULL and the walker goes on one branch at a time. */
int ptc_path_memo_open(const struct ptc_path_memo *m);

/* Paths held and bytes used (statistics). */
size_t ptc_path_memo_count(const struct ptc_path_memo *m);
size_t ptc_path_memo_bytes(const struct ptc_path_memo *m);

#endif
