/* The memo of TNT paths (tnt_path.h): its arena of paths, its table's
 * growth, and working a path out. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "decoders/intel_pt/tnt_path.h"

/* The arena grows by chunks of a huge page where the memo may hold
 * several: a memo that real programs fill to a few MiB then costs a
 * page fault per 2 MiB rather than per 4 KiB (xz: 460 faults fewer, at
 * about 12 us each on this VM), and its lookups miss the TLB less.
 * Smaller memos (and the first chunk of any) take small chunks, so a
 * decoder that sees a few paths does not clear 2 MiB for them. */
#define CHUNK (256u << 10)
#define HUGE_CHUNK (2u << 20)

static uint64_t next_id;

struct ptc_path_memo_chunk {
	struct ptc_path_memo_chunk *next;
	size_t used, size;
	_Alignas(64) unsigned char mem[];	/* paths start on cache lines */
};

int ptc_path_memo_new(struct ptc_path_memo **out, size_t max_bytes)
{
	struct ptc_path_memo *m = calloc(1, sizeof(*m));

	if (!m)
		return -1;
	/* the table comes with the first path: a decoder that never sees
	 * one (libipt's query decoder, a quiet thread) costs nothing */
	m->max_bytes = max_bytes ? max_bytes : PTC_PT_MEMO_BYTES;
	*out = m;
	return 0;
}

void ptc_path_memo_free(struct ptc_path_memo *m)
{
	struct ptc_path_memo_chunk *c, *n;

	if (!m)
		return;
	for (c = m->chunks; c; c = n) {
		n = c->next;
		free(c);
	}
	free(m->slots);
	free(m);
}

int ptc_path_memo_open(const struct ptc_path_memo *m)
{
	return !m->full;
}

size_t ptc_path_memo_count(const struct ptc_path_memo *m)
{
	return m->count;
}

size_t ptc_path_memo_bytes(const struct ptc_path_memo *m)
{
	return m->bytes;
}

static void *arena_alloc(struct ptc_path_memo *m, size_t n)
{
	struct ptc_path_memo_chunk *c = m->chunks;

	n = (n + 63) & ~(size_t)63;
	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK ? n : CHUNK;
		int huge = c && m->max_bytes >= 2 * HUGE_CHUNK && m->bytes + HUGE_CHUNK <= m->max_bytes;

		if (huge)
			size = HUGE_CHUNK - sizeof(*c);
		if (m->bytes + size + sizeof(*c) > m->max_bytes)
			return NULL;
		c = aligned_alloc(huge ? HUGE_CHUNK : 64, sizeof(*c) + size);
		if (!c)
			return NULL;
#ifdef MADV_HUGEPAGE
		if (huge)
			(void)madvise(c, HUGE_CHUNK, MADV_HUGEPAGE);	/* a hint: without it, 4 KiB pages */
#endif
		c->next = m->chunks;
		c->used = 0;
		c->size = size;
		m->chunks = c;
		m->bytes += sizeof(*c) + size;
	}
	c->used += n;
	return c->mem + c->used - n;
}

/* Room for the longest path, so that a full memo is known before a path
 * is worked out for nothing. */
static int room(const struct ptc_path_memo *m)
{
	const size_t n = (sizeof(struct ptc_tnt_path) +
			  PTC_PATH_STEPS * (sizeof(struct ptc_path_step) + sizeof(struct ptc_branch)) + 63) &
			 ~(size_t)63;
	const struct ptc_path_memo_chunk *c = m->chunks;

	return (c && c->size - c->used >= n) || m->bytes + CHUNK + sizeof(*c) <= m->max_bytes;
}

static int grow(struct ptc_path_memo *m)
{
	size_t nmask = m->slots ? m->mask * 2 + 1 : 4095, i, j;
	size_t add = (nmask + 1 - (m->slots ? m->mask + 1 : 0)) * sizeof(*m->slots);
	struct ptc_path_slot *ns;

	if (m->bytes + add > m->max_bytes)
		return -1;
	ns = calloc(nmask + 1, sizeof(*ns));
	if (!ns)
		return -1;
	for (i = 0; m->slots && i <= m->mask; i++) {
		if (!m->slots[i].tb)
			continue;
		for (j = ptc_path_hash(m->slots[i].tb, m->slots[i].key) & nmask; ns[j].tb; j = (j + 1) & nmask)
			;
		ns[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = ns;
	m->mask = nmask;
	m->bytes += add;
	return 0;
}

/* The path a key names, if the memo has it. */
static struct ptc_tnt_path *memo_find(const struct ptc_path_memo *m, const struct ptc_tbranch *tb, uint64_t key)
{
	const size_t i = ptc_path_memo_probe(m, tb, key);

	return m->slots[i].tb ? m->slots[i].path : NULL;
}

/* Walk the table from conditional entry idx with the bits, as the walker
 * would one branch at a time (ptdec.c: walk()), keeping the steps up to the
 * last conditional branch or return whose successor the table knows.  A
 * return belongs in a path only when the path made its call: then it goes
 * back to the call's fall-through, the next table entry (the walker's
 * ret_position()). */
static struct ptc_tnt_path *build(struct ptc_path_memo *m, const struct ptc_tbranch *tb, uint32_t ntb,
					uint32_t idx, unsigned nbits, uint32_t bits)
{
	struct ptc_path_step st[PTC_PATH_STEPS];
	uint32_t calls[PTC_PATH_STEPS];
	uint32_t n = 0, depth = 0, used = 0, insns = 0;
	struct {
		uint32_t steps, bits, idx, insns;
		uint64_t ip;
	} keep = { 0, 0, 0, 0, 0 };
	const uint32_t idx0 = idx;
	uint32_t open_calls[PTC_PATH_STEPS], nopen = 0;	/* steps whose calls are not returned from */
	struct ptc_tnt_path *p;
	struct ptc_branch *rec;
	uint32_t i;

	_Static_assert(PTC_PATH_STEPS <= PTC_PATH_RECORDS_MAX, "a path's records fit a sink's buffer");
	while (n < PTC_PATH_STEPS && idx < ntb) {
		const struct ptc_tbranch *b = &tb[idx];
		struct ptc_path_step *s = &st[n];
		uint64_t next_ip;
		uint32_t next_idx, next_insns;

		s->ip = b->ip;
		s->target = b->target;
		s->insns = insns;
		s->idx = idx;
		s->kind = b->kind;
		s->length = b->length;
		s->taken = 1;
		if (b->kind == PTC_BR_COND) {
			int t;

			if (used == nbits)
				break;
			t = (bits >> (nbits - 1 - used)) & 1;
			if (t ? b->target_next == PTC_NO_BRANCH : !(b->fall_insns && idx + 1 < ntb))
				break;	/* the walker searches after it */
			s->taken = (uint8_t)t;
			used++;
			next_ip = t ? b->target : b->ip + b->length;
			next_insns = t ? b->target_insns : b->fall_insns;
			next_idx = t ? b->target_next : idx + 1;
		} else if (b->kind == PTC_BR_JMP || b->kind == PTC_BR_CALL) {
			if (b->target_next == PTC_NO_BRANCH)
				break;
			/* a call to its next instruction pushes nothing that a
			 * compressed return pops (ptdec.c: call_pushes()) */
			if (b->kind == PTC_BR_CALL && !(b->flags & PTC_TBF_TARGET_IS_FALL))
				calls[depth++] = idx;
			n++;
			insns = b->target_insns;
			idx = b->target_next;
			continue;
		} else if (b->kind == PTC_BR_RET && depth) {
			const struct ptc_tbranch *c = &tb[calls[depth - 1]];

			/* a taken bit, and a call whose fall-through reaches
			 * the next entry by straight-line code */
			if (used == nbits || !((bits >> (nbits - 1 - used)) & 1) ||
			    !c->fall_insns || calls[depth - 1] + 1 >= ntb)
				break;
			used++;
			depth--;
			s->target = c->ip + c->length;
			next_ip = s->target;
			next_insns = c->fall_insns;
			next_idx = calls[depth] + 1;
		} else {
			break;
		}
		n++;
		keep.steps = n;
		keep.bits = used;
		keep.ip = next_ip;
		keep.idx = next_idx;
		keep.insns = next_insns;
		insns = next_insns;
		idx = next_idx;
	}

	/* A path that uses fewer bits than it was asked with is the path of
	 * the bits it uses, whatever the others: the same path object serves
	 * every such key (xz's paths use 4.3 of up to 6 bits: the rest made
	 * copies, each worked out and noted by the writer afresh). */
	if (keep.bits < nbits) {
		p = memo_find(m, tb, ptc_path_key(idx0, keep.bits, bits >> (nbits - keep.bits)));
		if (p)
			return p;
	}
	p = arena_alloc(m, sizeof(*p) + keep.steps * (sizeof(p->step[0]) + sizeof(struct ptc_branch)));
	if (!p)
		return NULL;
	rec = (struct ptc_branch *)(void *)&p->step[keep.steps];
	p->stack = 0;
	memset(&p->path, 0, sizeof(p->path));
	p->path.rec = rec;
	/* unique in the process: a sink may remember a path by its id after
	 * its memo has gone (and its memory serves another) */
	p->path.id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
	p->nsteps = (uint8_t)keep.steps;
	p->tnt_bits = (uint8_t)keep.bits;
	p->end_idx = keep.idx;
	p->end_insns = keep.insns;
	p->end_ip = keep.ip;
	p->path.records = keep.steps;
	p->push_mask = p->keep_mask = 0;
	p->max_depth = 0;
	_Static_assert(PTC_PATH_STEPS <= 32, "a path's steps fit a mask");
	for (i = 0; i < keep.steps; i++) {
		p->step[i] = st[i];
		if (st[i].kind == PTC_BR_CALL && !(tb[st[i].idx].flags & PTC_TBF_TARGET_IS_FALL)) {
			p->stack = 1;
			p->push_mask |= 1u << i;
			open_calls[nopen++] = i;
			if (nopen > p->max_depth)
				p->max_depth = (uint8_t)nopen;
		} else if (st[i].kind == PTC_BR_RET) {
			p->stack = 1;
			nopen--;	/* (the loop above took only returns to its own calls) */
		}
		p->path.kinds += (uint64_t)1 << (9 * st[i].kind);
		p->path.not_taken += !st[i].taken;
		if (st[i].kind == PTC_BR_COND)
			p->path.taken |= (uint64_t)st[i].taken << p->path.bits++;
		if (i)
			p->path.insns += st[i].insns;
		/* its record, in the image's addresses */
		rec[i].ip = st[i].ip;
		rec[i].target = st[i].target;
		rec[i].time = 0;
		rec[i].insns = st[i].insns;
		rec[i].kind = st[i].kind;
		rec[i].taken = st[i].taken;
		rec[i].length = st[i].length;
		rec[i].flags = 0;
	}
	for (i = 0; i < nopen; i++)
		p->keep_mask |= 1u << open_calls[i];
	return p;
}

/* A miss (ptc_path_memo_get()): the path worked out and kept, slot i (the
 * empty one the lookup ended on) its key's. */
struct ptc_tnt_path *ptc_path_memo_add(struct ptc_path_memo *m, size_t i, const struct ptc_tbranch *tb,
				       uint32_t ntb, uint32_t idx, unsigned nbits, uint32_t bits)
{
	const uint64_t key = ptc_path_key(idx, nbits, bits);
	struct ptc_tnt_path *p;

	if (m->full)
		return NULL;
	/* (room for its key and the key of the bits it uses) */
	if (!m->slots || (m->count + 2) * 2 > m->mask + 1) {
		if (grow(m) < 0) {
			m->full = 1;
			return NULL;
		}
		i = ptc_path_memo_probe(m, tb, key);
	}
	if (!room(m)) {
		m->full = 1;
		return NULL;
	}
	p = build(m, tb, ntb, idx, nbits, bits);
	if (!p) {
		m->full = 1;	/* out of memory */
		return NULL;
	}
	m->slots[i].tb = tb;
	m->slots[i].key = key;
	m->slots[i].path = p;
	m->count++;
	if (p->tnt_bits < nbits) {
		/* the path under the key of the bits it uses too (build()) */
		const uint64_t used = ptc_path_key(idx, p->tnt_bits, bits >> (nbits - p->tnt_bits));

		i = ptc_path_memo_probe(m, tb, used);
		if (!m->slots[i].tb) {
			m->slots[i].tb = tb;
			m->slots[i].key = used;
			m->slots[i].path = p;
			m->count++;
		}
	}
	return p;
}
