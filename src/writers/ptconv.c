/* ptconv's own trace format (-f ptconv), writer side.  See ptconv-trace(5).
 *
 * The static part (nodes = distinct blocks ending in a branch, edges = their
 * distinct destinations with the node that followed first) is kept apart
 * from the dynamic part, which only holds what the static part cannot
 * predict: a bit per conditional branch, a slot number per indirect branch,
 * and a sparse list of events (prediction misses, time changes, gaps).
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/bytes.h"
#include "writers/fmt.h"
#include "writers/insn.h"
#include "writers/ptc_format.h"
#include "writers/ptc_syms.h"
#include "writers/wutil.h"

/* A node as the record loop reads it: one cache line (the array is
 * allocated 64-byte aligned) with the fields a record is compared with
 * and, per way out of the node, the edge taken and the node that followed
 * it, so that predicting the next record is one memory access, not a walk
 * through the edge table. */
struct node {
	uint64_t start, ip;
	uint64_t dest;		/* direct: the target; indirect: the destination of
				 * edge[0] (0 before the first) */
	uint64_t tail;		/* what a predicted record holds from insns on (TAIL) */
	uint32_t insns, mru_slot;
	uint32_t edge[2];	/* conditional: fall-through, taken; direct: [0]; indirect: [0]
				 * the edge used last; PTCF_NO_NODE none */
	uint32_t succ[2];	/* edges[edge[i]].succ */
	uint8_t kind, length;
};

/* The rest of a node: its code bytes and its edge list. */
struct node_more {
	uint64_t code_off;
	uint32_t code_len;
	uint32_t first_edge, last_edge, n_edges;
};

struct edge {
	uint64_t dest;
	uint32_t succ;
	uint32_t next;		/* next edge of the same node */
	uint32_t node, slot;	/* whose edge it is, and which */
};

/* The indirect edges by (node, destination), with what the record loops
 * want of an edge (its slot and its successor) in the entry itself: a
 * lookup reads one cache line.  (A generic map of a hash key to the edge,
 * then the edge to check it, read three: the key, the value and the edge;
 * on the random walk, whose returns have thousands of destinations, the
 * lookups took a quarter of the conversion's time.) */
struct edge_entry {
	uint64_t dest;
	uint32_t node;		/* PTCF_NO_NODE: an empty entry */
	uint32_t edge, slot, succ;	/* edges[edge]'s slot and succ */
	uint64_t ip;		/* the node's branch: the entry's place is a hash of
				 * (ip, dest), which a record names before its node
				 * is known, so the loop can fetch it ahead
				 * (EDGE_PREFETCH) */
};

struct edge_index {
	struct edge_entry *e;
	uint32_t mask, n;
};

struct buf {
	uint8_t *p;
	size_t len, cap;
};

/* A chunk to compress and write: its bytes as stored, and what the chunk
 * index says of it.  With cfg->jobs another thread compresses it while
 * the writer goes on with the next chunk (pending until collect_chunk()
 * writes it); the chunks go to the file in order, one in flight. */
struct chunk_job {
	struct ptc_job job;	/* first: chunk_compress() casts */
	ZSTD_CCtx *zc;		/* the writer's, lent */
	int level;
	struct buf raw, z;	/* the chunk; compressed (room for bound bytes) */
	size_t bound, zlen;	/* ZSTD_compressBound(); ZSTD_compressCCtx()'s return */
	uint64_t first_record, first_insn;
	uint32_t records;
	int pending;
};

struct ptcw {
	struct ptc_wctx *c;
	const struct ptc_writer_config *cfg;
	FILE *f;
	char path[4096];
	char tmp[4096];		/* written under this name until complete */
	int level;
	uint32_t chunk_records;
	uint32_t pid, tid;
	int32_t cpu;
	char comm[64];

	struct node *nodes;
	struct node_more *more;
	uint32_t n_nodes, cap_nodes;
	uint32_t *hash;
	uint32_t hash_mask;
	struct edge *edges;
	uint32_t n_edges, cap_edges;
	struct edge_index edge_of;	/* (node, destination) -> indirect edge */
	struct buf code, strings, gaps, chunks;
	uint64_t n_gaps;
	struct ptc_symw syms;	/* the function symbols of the executed code */

	/* stream state */
	uint64_t next_start;	/* start of the next block, 0 unknown */
	uint32_t pred_edge;	/* edge of the previous record, NO_NODE after a gap/chunk start */
	uint32_t pred_node;	/* its node (edges[pred_edge].node, whose line the
				 * record loop would otherwise fetch again) */
	uint64_t time;		/* time of the previous record in this chunk */
	uint64_t records, branches, insns;
	uint64_t code_missing;
	uint64_t tail_insns;	/* after the last branch (ptc_writer_tail) */
	uint64_t tail_start, tail_end;	/* their code */
	struct node_more tail;

	/* current chunk */
	struct buf bits, slots, events;
	uint32_t c_records, c_bitn, last_ev;
	uint64_t c_first_record, c_first_insn;
	uint64_t file_off;	/* where the next chunk goes */
	ZSTD_CCtx *zc;		/* created by the first compression, freed by a suspension */
	struct chunk_job cj;	/* the last chunk, compressed or being compressed */
	struct ptc_job end_job;	/* end_file(), on another thread (ptcw_finish()) */

	uint32_t serial;	/* never 0, never another writer's (path notes) */

	/* Encoding ahead (ptc_ahead_enc): a live writer counts the changes of
	 * its tables (a snapshot is good while the count stays) and keeps
	 * no notes once encoders write theirs in the same paths; an encoder
	 * reads its snapshot's tables, and what they cannot say fails. */
	uint64_t version;
	struct ptc_ahead_tables *tables;	/* the last snapshot, a reference */
	uint64_t tables_records, tables_version;	/* when it looked whether to take one */
	unsigned note_off;	/* its notes in a path's scratch: at note_off */
	int ahead;		/* this is an encoder's */
	int ahead_first;	/* its first record: node and time are the splice's */
	uint32_t first_node;
	uint64_t first_time;
};

/* Paths (struct ptc_path): a run of records that the decoder marks as
 * one it has given before.  What the record loop did with a path's
 * records, when it predicted them all, is noted in the path's scratch: the
 * same path from the same node (the first record's, whichever edge led
 * there), with the same first record, is the same records, so the loop
 * does the same at once, as long as the returns in it have the last
 * destinations they had (the loop updates them, and the next record's
 * prediction depends on them).  Two notes per path: the same branch can
 * begin blocks at two places.  (Notes keyed by the edge into the first
 * node were worked out again whenever a third edge led there: on xz, a
 * path taken one by one at 75,000 of 1.9 million marks.) */
struct path_seen {
	uint64_t ip0;		/* the first record's ip */
	uint64_t next_start;	/* the block start after */
	uint64_t slots;		/* the slot bytes, the first in the low byte */
	uint32_t first;		/* the first record's node; PTCF_NO_NODE: unused */
	uint32_t to_node;	/* the last record's node and way out */
	uint32_t ind_node[2], ind_edge[2];	/* the indirect records' nodes and those nodes' last edges */
	uint32_t insns0;	/* the first record's instructions */
	uint32_t start_back;	/* its block's start, this far before ip0 */
	uint8_t to_way, slots_len;	/* slot bytes it adds (returns), at most 8 */
	uint8_t n_ind;		/* indirect records (returns), at most 2 */
} __attribute__((packed, aligned(4)));	/* 60 bytes: a note of two in two cache lines */

struct path_note {
	uint32_t owner;		/* the writer's serial (an address can serve again) */
	uint32_t next;		/* the note to replace next */
	struct path_seen e[2];
};

/* Where a writer keeps its notes in a path's scratch: the first half, two
 * cache lines.  Its encoders ahead (ptc_ahead_enc), which write theirs on
 * other threads while the writer writes its own, keep theirs in the second
 * half, lines of their own.  (With one entry each in half of 192 bytes, a
 * loop entered from two places made them work a path out again at every
 * entry: at -j 2 on xz, take_new_path() ran 3.7 times the instructions of
 * -j 1.) */
#define NOTE_HALF 128
_Static_assert(sizeof(struct path_note) <= NOTE_HALF && 2 * NOTE_HALF <= sizeof(((struct ptc_path *)0)->scratch),
	       "a note fits half a scratch");

static uint32_t writer_serial;

/* The ZSTD context, taken on first use (from the writers' pool): a writer
 * that is suspended (ptcw_suspend) or done gives it back. */
static ZSTD_CCtx *cctx(struct ptcw *w)
{
	if (!w->zc)
		w->zc = ptc_writer_pool_take_zc(w->cfg->pool);
	return w->zc;
}

/* Reopen the file of a suspended writer, to write from file_off on (the
 * header and the chunks before are already there; the header is written
 * again at the end). */
static int resume(struct ptcw *w)
{
	if (w->f)
		return 0;
	w->f = fopen(w->tmp, "r+b");
	if (!w->f)
		return ptc_wfail(w->c, ptc_err_io, "%s: reopen: %s", w->tmp, strerror(errno));
	if (fseeko(w->f, (off_t)w->file_off, SEEK_SET) < 0) {
		int e = errno;
		fclose(w->f);
		w->f = NULL;
		return ptc_wfail(w->c, ptc_err_io, "%s: seek to %" PRIu64 ": %s", w->path,
				 w->file_off, strerror(e));
	}
	return 0;
}

static void buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static int buf_grow(struct buf *b, size_t add)
{
	size_t cap;
	uint8_t *p;

	if (b->len + add <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + add)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ptc_err_nomem;
	b->p = p;
	b->cap = cap;
	return 0;
}

static int buf_put(struct buf *b, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (buf_grow(b, n) < 0)
		return -ptc_err_nomem;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

/* (written in place: the static part is millions of small numbers, each
 * a call to memcpy() when copied) */
static int buf_varint(struct buf *b, uint64_t v)
{
	if (buf_grow(b, 10) < 0)
		return -ptc_err_nomem;
	b->len = (size_t)(ptc_put_varint(b->p + b->len, v) - b->p);
	return 0;
}

static int is_indirect(uint8_t kind)
{
	return kind == PTC_BR_JMP_IND || kind == PTC_BR_CALL_IND ||
	       kind == PTC_BR_RET || kind == PTC_BR_FAR || kind >= PTC_BR_KIND_NR;
}

/* A record's insns, kind, taken, length and flags as one number, taken
 * left out: the record loop compares a record with its node's in one go. */
#define TAIL_OFF offsetof(struct ptc_branch, insns)
_Static_assert(offsetof(struct ptc_branch, flags) == TAIL_OFF + 7 && sizeof(struct ptc_branch) == TAIL_OFF + 8,
	       "insns..flags are the record's last 8 bytes");

static inline uint64_t tail_of(const struct ptc_branch *b)
{
	uint64_t v;

	memcpy(&v, (const char *)b + TAIL_OFF, sizeof(v));
	return v;
}

/* Where taken is in a tail (tail_of()). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define TAKEN_SHIFT (8 * (7 - (offsetof(struct ptc_branch, taken) - TAIL_OFF)))
#else
#define TAKEN_SHIFT (8 * (offsetof(struct ptc_branch, taken) - TAIL_OFF))
#endif

/* Are two tails the same but for taken?  (Rotated so that taken is the
 * low byte, which the shift drops: no 64-bit mask to keep in a register
 * of the record loop.) */
static inline int same_tail(uint64_t a, uint64_t b)
{
	const uint64_t x = a ^ b;

	return !((x >> TAKEN_SHIFT | x << (64 - TAKEN_SHIFT)) >> 8);
}

/* The node's identity: indirect nodes have no target. */
static inline uint64_t node_target(const struct node *n)
{
	return is_indirect(n->kind) ? 0 : n->dest;
}

static uint64_t node_hash(uint64_t start, uint64_t ip, uint64_t target, uint32_t insns,
			  uint8_t kind, uint8_t length)
{
	return ptc_hash64(start * 31 + ptc_hash64(ip) + target * 7 + ((uint64_t)insns << 16) +
		   ((uint64_t)kind << 8) + length);
}

static inline size_t edge_hash(uint64_t ip, uint64_t dest)
{
	return (size_t)ptc_hash64(dest ^ (ip << 24) ^ (ip >> 40));
}

/* An empty index of mask + 1 entries (a power of 2, at least 2). */
static int edge_index_init(struct edge_index *x, uint32_t mask)
{
	uint32_t i;

	x->mask = mask;
	x->n = 0;
	x->e = aligned_alloc(64, ((size_t)mask + 1) * sizeof(*x->e));
	if (!x->e)
		return -ptc_err_nomem;
	for (i = 0; i <= mask; i++)
		x->e[i].node = PTCF_NO_NODE;
	return 0;
}

/* The entry of (node, dest), or the empty one where it would go (ip: the
 * node's). */
static inline struct edge_entry *edge_entry_at(const struct edge_index *x, uint32_t node, uint64_t ip,
					       uint64_t dest)
{
	size_t i = edge_hash(ip, dest) & x->mask;

	while (x->e[i].node != PTCF_NO_NODE && (x->e[i].node != node || x->e[i].dest != dest))
		i = (i + 1) & x->mask;
	return &x->e[i];
}

/* The entry of node id's edge to dest, NULL when it has none. */
static inline const struct edge_entry *find_edge(const struct ptcw *w, uint32_t id, uint64_t dest)
{
	const struct edge_entry *x = edge_entry_at(&w->edge_of, id, w->nodes[id].ip, dest);

	return x->node == PTCF_NO_NODE ? NULL : x;
}

/* Index edge e (an indirect node's). */
static int index_edge(struct ptcw *w, uint32_t e)
{
	struct edge_index *x = &w->edge_of;
	struct edge_entry *ent;

	if (((size_t)x->n + 1) * 4 > ((size_t)x->mask + 1) * 3) {
		struct edge_index y;
		uint32_t i;

		if (x->mask >= UINT32_MAX / 2 || edge_index_init(&y, x->mask * 2 + 1) < 0)
			return -ptc_err_nomem;
		for (i = 0; i <= x->mask; i++)
			if (x->e[i].node != PTCF_NO_NODE)
				*edge_entry_at(&y, x->e[i].node, x->e[i].ip, x->e[i].dest) = x->e[i];
		y.n = x->n;
		free(x->e);
		*x = y;
	}
	ent = edge_entry_at(x, w->edges[e].node, w->nodes[w->edges[e].node].ip, w->edges[e].dest);
	ent->dest = w->edges[e].dest;
	ent->node = w->edges[e].node;
	ent->ip = w->nodes[w->edges[e].node].ip;
	ent->edge = e;
	ent->slot = w->edges[e].slot;
	ent->succ = w->edges[e].succ;
	x->n++;
	return 0;
}

static int new_edge(struct ptcw *w, uint32_t node, uint64_t dest, uint32_t *id)
{
	struct node_more *n = &w->more[node];
	struct edge *e;

	if (w->n_edges == w->cap_edges) {
		uint32_t cap = w->cap_edges ? w->cap_edges * 2 : 1024;
		e = realloc(w->edges, (size_t)cap * sizeof(*e));
		if (!e)
			return -ptc_err_nomem;
		w->edges = e;
		w->cap_edges = cap;
	}
	*id = w->n_edges++;
	w->version++;
	e = &w->edges[*id];
	e->dest = dest;
	e->succ = PTCF_NO_NODE;
	e->next = PTCF_NO_NODE;
	e->node = node;
	e->slot = n->n_edges;
	if (n->n_edges)
		w->edges[n->last_edge].next = *id;
	else
		n->first_edge = *id;
	n->last_edge = *id;
	n->n_edges++;
	return 0;
}

static int rehash(struct ptcw *w)
{
	uint32_t size = (w->hash_mask + 1) * 2, i;
	uint32_t *h = malloc((size_t)size * sizeof(*h));

	if (!h)
		return -ptc_err_nomem;
	memset(h, 0xff, (size_t)size * sizeof(*h));
	for (i = 0; i < w->n_nodes; i++) {
		struct node *n = &w->nodes[i];
		uint64_t k = node_hash(n->start, n->ip, node_target(n), n->insns, n->kind, n->length);
		while (h[k & (size - 1)] != PTCF_NO_NODE)
			k++;
		h[k & (size - 1)] = i;
	}
	free(w->hash);
	w->hash = h;
	w->hash_mask = size - 1;
	return 0;
}

/* The code bytes [start, end) of a block, into the code blob. */
static void embed_code(struct ptcw *w, uint64_t start, uint64_t end, struct node_more *n)
{
	uint64_t len;
	size_t got;

	n->code_off = w->code.len;
	n->code_len = 0;
	if (!start || start >= end)
		return;
	len = end - start;
	if (len > (16u << 20) || !w->cfg->code || !w->cfg->code->read) {
		w->code_missing++;
		return;
	}
	if (buf_grow(&w->code, len) < 0)
		return;
	got = w->cfg->code->read(w->cfg->code->ctx, start, w->code.p + w->code.len, len);
	if (got != len) {
		if (w->code_missing++ < 8)
			ptc_wwarn(w->c, "%s: code bytes of block 0x%" PRIx64 "-0x%" PRIx64
				  " not available: not embedded", w->path, start, end);
		return;
	}
	n->code_len = (uint32_t)len;
	w->code.len += len;
}

/* Room for one more node: the hot array is grown by copying into a new
 * 64-byte aligned one (realloc() keeps only malloc's alignment). */
static int grow_nodes(struct ptcw *w)
{
	uint32_t cap = w->cap_nodes ? w->cap_nodes * 2 : 1024;
	struct node *n = aligned_alloc(64, (size_t)cap * sizeof(*n));
	struct node_more *m;

	if (!n)
		return -ptc_err_nomem;
	m = realloc(w->more, (size_t)cap * sizeof(*m));
	if (!m) {
		free(n);
		return -ptc_err_nomem;
	}
	if (w->n_nodes)
		memcpy(n, w->nodes, (size_t)w->n_nodes * sizeof(*n));
	free(w->nodes);
	w->nodes = n;
	w->more = m;
	w->cap_nodes = cap;
	return 0;
}

/* edges[e].succ changed: so do its mirrors in its node and, for an
 * indirect node's edge, in the index. */
static void mirror_succ(struct ptcw *w, uint32_t e)
{
	struct node *n = &w->nodes[w->edges[e].node];

	if (n->edge[0] == e)
		n->succ[0] = w->edges[e].succ;
	if (n->edge[1] == e)
		n->succ[1] = w->edges[e].succ;
	if (is_indirect(n->kind))
		edge_entry_at(&w->edge_of, w->edges[e].node, n->ip, w->edges[e].dest)->succ = w->edges[e].succ;
}

/* Is n the node of branch b reached from start? */
static inline int node_is(const struct node *n, const struct ptc_branch *b, uint64_t start)
{
	uint64_t target = is_indirect(b->kind) ? 0 : b->target;

	return n->ip == b->ip && n->start == start && node_target(n) == target &&
	       n->insns == b->insns && n->kind == b->kind && n->length == b->length;
}

static int find_node(struct ptcw *w, const struct ptc_branch *b, uint64_t start, uint32_t *id)
{
	uint64_t target = is_indirect(b->kind) ? 0 : b->target;
	uint64_t k = node_hash(start, b->ip, target, b->insns, b->kind, b->length);
	struct node *n;
	int err;

	for (;; k++) {
		uint32_t i = w->hash[k & w->hash_mask];
		if (i == PTCF_NO_NODE)
			break;
		if (node_is(&w->nodes[i], b, start)) {
			*id = i;
			return 0;
		}
	}
	if (w->ahead)
		return -ptc_err_mismatch;	/* a node its snapshot has not */
	w->version++;
	if (w->n_nodes == PTCF_NO_NODE - 1)
		return ptc_wfail(w->c, ptc_err_overflow, "%s: too many distinct branches", w->path);
	if (w->n_nodes == w->cap_nodes && (err = grow_nodes(w)) < 0)
		return err;
	*id = w->n_nodes;
	w->hash[k & w->hash_mask] = w->n_nodes++;
	n = &w->nodes[*id];
	memset(n, 0, sizeof(*n));
	memset(&w->more[*id], 0, sizeof(w->more[*id]));
	n->start = start;
	n->ip = b->ip;
	n->dest = target;
	n->insns = b->insns;
	n->kind = b->kind;
	n->length = b->length;
	{
		struct ptc_branch t;
		memset(&t, 0, sizeof(t));
		t.insns = b->insns;
		t.kind = b->kind;
		t.length = b->length;
		n->tail = tail_of(&t);
	}
	n->edge[0] = n->edge[1] = PTCF_NO_NODE;
	n->succ[0] = n->succ[1] = PTCF_NO_NODE;
	embed_code(w, start, start <= b->ip ? b->ip + b->length : 0, &w->more[*id]);
	/* the addresses the function-level formats look up (calls.c): the
	 * branch's, and where a direct one goes */
	if ((err = ptc_symw_note(&w->syms, w->cfg->symbols, b->ip, w->records)) < 0 ||
	    (!is_indirect(b->kind) && b->target &&
	     (err = ptc_symw_note(&w->syms, w->cfg->symbols, b->target, w->records)) < 0))
		return err;
	if (b->kind == PTC_BR_COND) {
		if ((err = new_edge(w, *id, b->ip + b->length, &n->edge[0])) < 0 ||
		    (err = new_edge(w, *id, b->target, &n->edge[1])) < 0)
			return err;
	} else if (!is_indirect(b->kind)) {
		if ((err = new_edge(w, *id, b->target, &n->edge[0])) < 0)
			return err;
	}
	if (w->n_nodes * 2 > w->hash_mask)
		return rehash(w);
	return 0;
}

/* An event of record rec of the chunk (events are in record order). */
static int event_at(struct ptcw *w, uint32_t rec, uint8_t type)
{

	int err = buf_varint(&w->events, rec - w->last_ev);

	w->last_ev = rec;
	if (!err)
		err = buf_put(&w->events, &type, 1);
	return err;
}

static int event(struct ptcw *w, uint8_t type)
{
	return event_at(w, w->c_records, type);
}

/* Room for one time_event() that then cannot fail. */
#define TIME_EVENT_ROOM 32

/* Record rec of the chunk has time t, the one before it w->time. */
static int time_event(struct ptcw *w, uint32_t rec, uint64_t t)
{
	int err;

	if ((err = event_at(w, rec, PTCF_EV_TIME)) < 0 || (err = buf_varint(&w->events, ptc_zigzag(t - w->time))) < 0)
		return err;
	w->time = t;
	return 0;
}

static int chunk_compress(struct ptc_job *job)
{
	struct chunk_job *j = (struct chunk_job *)job;

	j->zlen = ZSTD_compressCCtx(j->zc, j->z.p, j->bound, j->raw.p, j->raw.len, j->level);
	return 0;	/* (write_chunk() tells a failure) */
}

/* Compressed chunk j to the file at file_off, and to the chunk index. */
static int write_chunk(struct ptcw *w, struct chunk_job *j)
{
	uint8_t ent[PTCF_CHUNK_SIZE];

	j->pending = 0;
	if (ZSTD_isError(j->zlen))
		return ptc_wfail(w->c, ptc_err_internal, "%s: zstd: %s", w->path, ZSTD_getErrorName(j->zlen));
	if (fwrite(j->z.p, 1, j->zlen, w->f) != j->zlen)
		return ptc_wfail(w->c, ptc_err_io, "%s: write: %s", w->path, strerror(errno));
	memset(ent, 0, sizeof(ent));
	ptc_put64(ent, w->file_off);
	ptc_put64(ent + 8, j->zlen);
	ptc_put64(ent + 16, j->first_record);
	ptc_put64(ent + 24, j->first_insn);
	ptc_put32(ent + 32, j->records);
	ptc_put32(ent + 36, (uint32_t)j->raw.len);
	w->file_off += j->zlen;
	return buf_put(&w->chunks, ent, sizeof(ent));
}

/* The chunk compressing on another thread, once it is done, to the file. */
static int collect_chunk(struct ptcw *w)
{
	if (!w->cj.pending)
		return 0;
	w->cfg->jobs->wait(w->cfg->jobs->ctx, &w->cj.job);
	return write_chunk(w, &w->cj);
}

/* The records since the last chunk become one: compressed here and
 * written, or handed to cfg->jobs (written by the next collect_chunk()). */
static int flush_chunk(struct ptcw *w)
{
	struct chunk_job *j = &w->cj;
	uint8_t head[PTCF_C_HEAD];
	int err;

	if (!w->c_records)
		return 0;
	if ((err = collect_chunk(w)) < 0)
		return err;
	ptc_put32(head, w->c_records);
	ptc_put32(head + 4, (uint32_t)w->bits.len);
	ptc_put32(head + 8, (uint32_t)w->slots.len);
	ptc_put32(head + 12, (uint32_t)w->events.len);
	if (sizeof(head) + w->bits.len + w->slots.len + w->events.len > PTCF_MAX_CHUNK_RAW)
		return ptc_wfail(w->c, ptc_err_overflow, "%s: chunk too large", w->path);
	j->raw.len = 0;
	if ((err = buf_put(&j->raw, head, sizeof(head))) < 0 || (err = buf_put(&j->raw, w->bits.p, w->bits.len)) < 0 ||
	    (err = buf_put(&j->raw, w->slots.p, w->slots.len)) < 0 ||
	    (err = buf_put(&j->raw, w->events.p, w->events.len)) < 0)
		return err;
	j->bound = ZSTD_compressBound(j->raw.len);
	j->z.len = 0;
	if (buf_grow(&j->z, j->bound) < 0 || !cctx(w))
		return -ptc_err_nomem;
	j->zc = w->zc;
	j->level = w->level;
	j->first_record = w->c_first_record;
	j->first_insn = w->c_first_insn;
	j->records = w->c_records;
	w->bits.len = w->slots.len = w->events.len = 0;
	w->c_records = w->c_bitn = w->last_ev = 0;
	w->c_first_record = w->records;
	w->c_first_insn = w->insns;
	w->pred_edge = PTCF_NO_NODE;
	w->time = 0;
	if (w->cfg->jobs) {
		j->job.run = chunk_compress;
		j->pending = 1;
		w->cfg->jobs->submit(w->cfg->jobs->ctx, &j->job);
		return 0;
	}
	chunk_compress(&j->job);
	return write_chunk(w, j);
}

static int start_record(struct ptcw *w)
{
	if (w->c_records == w->chunk_records)
		return flush_chunk(w);
	return 0;
}

/* The node that followed the previous record's edge before (NO_NODE:
 * none yet).  An encoder has no edge table: a node's ways mirror their
 * edges' (mirror_succ()), and an indirect node's way 0 is the edge it
 * took last, the previous record's. */
static inline uint32_t pred_succ(const struct ptcw *w)
{
	const struct node *n;

	if (w->edges)
		return w->edges[w->pred_edge].succ;
	n = &w->nodes[w->pred_node];
	return n->edge[0] == w->pred_edge ? n->succ[0] : n->succ[1];
}

/* Edge e was followed by node id for the first time. */
static void set_succ(struct ptcw *w, uint32_t e, uint32_t id)
{
	w->edges[e].succ = id;
	mirror_succ(w, e);
	w->version++;
}

static int put_branch(struct ptcw *w, const struct ptc_branch *b)
{
	uint32_t id = 0, slot = 0, e;
	struct node *n;
	int err;

	if ((err = start_record(w)) < 0)
		return err;
	/* Most records are the static successor of the previous one: compare
	 * with that node before hashing. */
	if (w->pred_edge != PTCF_NO_NODE && (id = pred_succ(w)) != PTCF_NO_NODE &&
	    node_is(&w->nodes[id], b, w->next_start)) {
		/* found */
	} else if ((err = find_node(w, b, w->next_start, &id)) < 0) {
		return err;
	}
	n = &w->nodes[id];
	/* (an encoder fails before it writes anything of the record) */
	if (w->ahead && ((!w->ahead_first && (w->pred_edge == PTCF_NO_NODE || pred_succ(w) == PTCF_NO_NODE)) ||
			 (is_indirect(b->kind) && (n->edge[0] == PTCF_NO_NODE || n->dest != b->target) &&
			  !find_edge(w, id, b->target))))
		return -ptc_err_mismatch;
	if (w->ahead_first) {
		/* what the splice writes for it, after the records before */
		w->ahead_first = 0;
		w->first_node = id;
		w->first_time = b->time;
		w->time = b->time;
	} else {
		/* Does the static successor predict this node? */
		if (w->pred_edge == PTCF_NO_NODE || pred_succ(w) != id) {
			if (w->pred_edge != PTCF_NO_NODE && pred_succ(w) == PTCF_NO_NODE) {
				set_succ(w, w->pred_edge, id);
			} else {
				if ((err = event(w, PTCF_EV_NODE)) < 0 ||
				    (err = buf_varint(&w->events, id)) < 0)
					return err;
			}
		}
		if (b->time != w->time && (err = time_event(w, w->c_records, b->time)) < 0)
			return err;
	}
	if (b->flags) {
		if ((err = event(w, PTCF_EV_FLAGS)) < 0 || (err = buf_put(&w->events, &b->flags, 1)) < 0)
			return err;
	}
	if (b->kind == PTC_BR_COND) {
		slot = b->taken ? 1 : 0;
		if (!(w->c_bitn & 7)) {
			uint8_t z = 0;
			if ((err = buf_put(&w->bits, &z, 1)) < 0)
				return err;
		}
		w->bits.p[w->bits.len - 1] |= (uint8_t)(slot << (w->c_bitn & 7));
		w->c_bitn++;
		e = n->edge[slot];
	} else {
		if (b->taken != 1) {
			if ((err = event(w, PTCF_EV_TAKEN)) < 0 ||
			    (err = buf_put(&w->events, &b->taken, 1)) < 0)
				return err;
		}
		if (!is_indirect(b->kind)) {
			e = n->edge[0];
		} else {
			if (n->edge[0] != PTCF_NO_NODE && n->dest == b->target) {
				e = n->edge[0];
				slot = n->mru_slot;
			} else {
				const struct edge_entry *x = find_edge(w, id, b->target);
				uint32_t succ;

				if (x) {
					e = x->edge;
					slot = x->slot;
					succ = x->succ;
				} else {
					if ((err = new_edge(w, id, b->target, &e)) < 0 ||
					    (err = index_edge(w, e)) < 0)
						return err;
					/* (a return's destination is never looked up) */
					if (b->kind != PTC_BR_RET && b->target &&
					    (err = ptc_symw_note(&w->syms, w->cfg->symbols, b->target, w->records)) < 0)
						return err;
					n = &w->nodes[id];
					slot = w->edges[e].slot;
					succ = w->edges[e].succ;
				}
				n->edge[0] = e;
				n->succ[0] = succ;
				n->dest = b->target;
				n->mru_slot = slot;
			}
			if ((err = buf_varint(&w->slots, slot)) < 0)
				return err;
		}
	}
	w->pred_edge = e;
	w->pred_node = id;
	w->c_records++;
	w->records++;
	w->branches++;
	w->insns += b->insns;
	w->next_start = ptc_branch_dest(b);
	return 0;
}

/* How many records ahead put_predicted() fetches the edge index's entry
 * for an indirect branch: enough to hide a memory access (where there are
 * many destinations, as on the random walk, the index does not fit the
 * cache), while the entry's line is still there when the record comes. */
#define EDGE_PREFETCH 8
/* ...when the index is larger than a core's cache (entries; below, its
 * lines are there already, and the hash would be work for nothing) */
#define EDGE_PREFETCH_MIN (1u << 15)

/* Where the record loops stand in a sparse batch (struct ptc_path): entry
 * i of b[0, n), m[j] the first of the nm marks at or after it, and the
 * records of a path whose note did not do (x[xi, xn)), taken before
 * entry i. */
struct cursor {
	const struct ptc_branch *b;
	size_t i, n;
	const struct ptc_path_mark *m;
	size_t j, nm;
	uint32_t xi, xn;
	struct ptc_branch x[PTC_PATH_RECORDS_MAX];
};

/* The state of put_predicted()'s loop, which the compiler keeps in
 * registers (the functions that take it are inlined): where the stream
 * stands in the static part, and the taken bits not yet stored. */
struct lane {
	const uint32_t *succp;	/* the previous record's node's succ[way out] */
	uint32_t nrec;		/* records taken */
	uint32_t nacc;		/* bits in acc: fewer than 32 between records */
	uint64_t acc;		/* taken bits to store at bitp, the first in bit 0 */
	uint8_t *bitp;
	uint8_t *slots;		/* where the next slot goes */
	uint64_t start;		/* the next record's block start */
	uint64_t insns, time;
};

static inline const uint32_t *lane_at(const struct node *nodes, uint32_t id, uint32_t way)
{
	return &nodes[id].succ[way];
}

/* The lane's node, and its way out in *way. */
static inline uint32_t lane_node(const struct lane *s, const struct node *nodes, uint32_t *way)
{
	const size_t off = (size_t)((const char *)s->succp - (const char *)nodes);

	*way = (uint32_t)((off % sizeof(struct node) - offsetof(struct node, succ)) / sizeof(uint32_t));
	return (uint32_t)(off / sizeof(struct node));
}

/* Store acc's bits a word at a time (little-endian bit order: bit k of
 * the chunk is bit k % 8 of byte k / 8), instead of OR-ing each one into
 * memory that first had to be zeroed. */
static inline void lane_spill(struct lane *s)
{
	if (s->nacc >= 32) {
		ptc_put32(s->bitp, (uint32_t)s->acc);
		s->bitp += 4;
		s->acc >>= 32;
		s->nacc -= 32;
	}
}

/* The chunk's taken bits so far. */
static inline uint32_t lane_bits(const struct lane *s, const uint8_t *bits)
{
	return (uint32_t)(s->bitp - bits) * 8 + s->nacc;
}

/* Take record r if the static part predicts it: its node's branch with
 * the same instructions (flags 0) and the target it has (direct) or one it
 * had (indirect).  Returns the node, PTCF_NO_NODE when it needs
 * put_branch() (s unchanged). */
static inline __attribute__((always_inline)) uint32_t take_record(struct ptcw *w, struct node *nodes,
								  struct lane *s, const struct ptc_branch *r)
{
	const uint32_t id = *s->succp;
	struct node *nd;
	uint32_t way = 0;

	if (id == PTCF_NO_NODE)
		return PTCF_NO_NODE;
	nd = &nodes[id];
	if (r->ip != nd->ip || s->start != nd->start || !same_tail(tail_of(r), nd->tail))
		return PTCF_NO_NODE;
	/* a new time: its event, with room made before anything changes */
	if (r->time != s->time && buf_grow(&w->events, TIME_EVENT_ROOM) < 0)
		return PTCF_NO_NODE;
	/* (r's kind is the node's: the tails are the same) */
	if (r->kind == PTC_BR_COND) {
		if (r->target != nd->dest)
			return PTCF_NO_NODE;
		way = r->taken != 0;
		s->acc |= (uint64_t)way << s->nacc;
		s->nacc++;
		s->start = way ? r->target : r->ip + r->length;
	} else if (r->taken != 1) {
		return PTCF_NO_NODE;
	} else if (r->kind == PTC_BR_JMP || r->kind == PTC_BR_CALL) {
		if (r->target != nd->dest)
			return PTCF_NO_NODE;
		s->start = r->target;
	} else if ((r->kind == PTC_BR_JMP_IND || r->kind == PTC_BR_CALL_IND || r->kind == PTC_BR_RET) &&
		   nd->edge[0] != PTCF_NO_NODE) {
		uint32_t v = nd->mru_slot;

		if (r->target != nd->dest) {
			/* another destination it had before */
			const struct edge_entry *xe = find_edge(w, id, r->target);

			if (!xe)
				return PTCF_NO_NODE;	/* a new one: put_branch() */
			v = xe->slot;
			nd->edge[0] = xe->edge;
			nd->succ[0] = xe->succ;
			nd->dest = r->target;
			nd->mru_slot = v;
		}
		/* (ptc_put_varint() by hand: through the call, the compiler
		 * kept the lane's slot pointer less well, and xz -j 1 took
		 * 4.7M more instructions) */
		while (v >= 0x80) {
			*s->slots++ = (uint8_t)(v | 0x80);
			v >>= 7;
		}
		*s->slots++ = (uint8_t)v;
		s->start = r->target;
	} else {
		return PTCF_NO_NODE;	/* a far branch */
	}
	if (r->time != s->time) {
		(void)time_event(w, w->c_records + s->nrec, r->time);	/* room made above */
		s->time = r->time;
	}
	s->succp = lane_at(nodes, id, way);
	s->insns += r->insns;
	s->nrec++;
	return id;
}

/* The returns of the path noted in e went to other places since it was
 * noted: send them where they went in it, as take_record() would have
 * done taking its records (a return's slot is its destination's, whatever
 * the last one was, so the slot bytes noted stay true).  (1) The writer's
 * edge table says where; an encoder ahead has none, and takes the records
 * one by one instead (0). */
static __attribute__((noinline)) int take_noted_dests(struct ptcw *w, const struct path_seen *e)
{
	uint32_t k;

	if (!w->edges)
		return 0;
	for (k = 0; k < e->n_ind; k++) {
		struct node *nd = &w->nodes[e->ind_node[k]];
		const struct edge *ed = &w->edges[e->ind_edge[k]];

		nd->edge[0] = e->ind_edge[k];
		nd->succ[0] = ed->succ;
		nd->dest = ed->dest;
		nd->mru_slot = ed->slot;
	}
	return 1;
}

/* Take path mp, whose first record is r, at once if the loop noted it
 * before from the same node (1), with the same first record; 0 when it did
 * not; -1 when the time event could not be made. */
static inline __attribute__((always_inline)) int take_seen_path(struct ptcw *w, const struct node *nodes,
								struct lane *s, const struct ptc_path *mp,
								const struct ptc_branch *r)
{
	const struct path_note *note = (const struct path_note *)(mp->scratch + w->note_off);
	const uint32_t n0 = *s->succp;
	const struct path_seen *e = &note->e[note->e[0].first != n0];

	/* (n0 is PTCF_NO_NODE after a way not taken before: no note is) */
	if (note->owner != w->serial || r->flags || n0 == PTCF_NO_NODE)
		return 0;
	if (e->first != n0 || e->ip0 != r->ip || r->ip - s->start != e->start_back || e->insns0 != r->insns)
		return 0;
	if (((e->n_ind >= 1 && nodes[e->ind_node[0]].edge[0] != e->ind_edge[0]) ||
	     (e->n_ind >= 2 && nodes[e->ind_node[1]].edge[0] != e->ind_edge[1])) &&
	    !take_noted_dests(w, e))
		return 0;
	if (r->time != s->time) {
		if (time_event(w, w->c_records + s->nrec, r->time) < 0)
			return -1;
		s->time = r->time;
	}
	_Static_assert(PTC_PATH_RECORDS_MAX <= 32, "a path's bits and acc's fit a word");
	s->acc |= mp->taken << s->nacc;
	s->nacc += mp->bits;
	ptc_put64(s->slots, e->slots);	/* (8 bytes to spare) */
	s->slots += e->slots_len;
	s->succp = lane_at(nodes, e->to_node, e->to_way);
	s->start = e->next_start;
	s->insns += r->insns + mp->insns;
	s->nrec += mp->records;
	return 1;
}

/* Take the records of path p in cur->x one by one; when all of them are
 * taken, note what they did in the path's scratch, for take_seen_path().
 * cur->xi: the first record not taken. */
static __attribute__((noinline)) void take_new_path(struct ptcw *w, struct lane *s, struct cursor *cur,
						    struct ptc_path *p, const uint8_t *bits)
{
	struct node *nodes = w->nodes;
	struct path_note *note = (struct path_note *)(p->scratch + w->note_off);
	struct path_seen *e;
	const uint32_t first = *s->succp, bits0 = lane_bits(s, bits);
	const uint64_t start0 = s->start;
	const uint8_t *slots0 = s->slots;
	uint32_t nind = 0, ind_node[2] = { 0, 0 }, ind_edge[2] = { 0, 0 };
	size_t k, ns;
	uint32_t way;

	while (cur->xi < cur->xn) {
		const struct ptc_branch *r = &cur->x[cur->xi];
		const uint32_t id = take_record(w, nodes, s, r);

		if (id == PTCF_NO_NODE)
			return;
		cur->xi++;
		lane_spill(s);
		/* (a far branch is never taken here: indirect is a slot's) */
		if (is_indirect(r->kind) && nind < 3) {
			if (nind < 2) {
				ind_node[nind] = id;
				ind_edge[nind] = nodes[id].edge[0];
			}
			nind++;
		}
	}
	ns = (size_t)(s->slots - slots0);
	if (lane_bits(s, bits) - bits0 != p->bits || ns > 8 || nind > 2 || cur->x[0].ip - start0 > UINT32_MAX)
		return;
	if (note->owner != w->serial) {
		note->owner = w->serial;
		note->next = 0;
		note->e[0].first = PTCF_NO_NODE;
		note->e[1].first = PTCF_NO_NODE;
	}
	e = &note->e[note->next];
	note->next ^= 1;
	e->first = first;
	e->to_node = lane_node(s, nodes, &way);
	e->to_way = (uint8_t)way;
	e->slots_len = (uint8_t)ns;
	e->n_ind = (uint8_t)nind;
	memcpy(e->ind_node, ind_node, sizeof(e->ind_node));
	memcpy(e->ind_edge, ind_edge, sizeof(e->ind_edge));
	e->insns0 = cur->x[0].insns;
	e->ip0 = cur->x[0].ip;
	e->start_back = (uint32_t)(cur->x[0].ip - start0);
	e->next_start = s->start;
	e->slots = 0;
	for (k = 0; k < ns; k++)
		e->slots |= (uint64_t)slots0[k] << (8 * k);
}

/* put_branch() for the records that need nothing but the static part's
 * prediction: the previous record's way out names this record's node, the
 * time and flags are unchanged, and the branch is conditional, direct, or
 * indirect to its node's last destination.  Most records are such; their
 * state stays in registers here.  Records from the cursor on: returns how
 * many it took (0: the next needs put_branch()).
 *
 * A path that the loop noted before from the same edge is taken at once;
 * another one's records are made (ptc_path_records()) and taken one by
 * one, and noted if the loop takes them all. */
static size_t put_predicted(struct ptcw *w, struct cursor *cur)
{
	struct node *nodes = w->nodes;
	const struct ptc_branch *r = cur->b + cur->i, *end = cur->b + cur->n, *fetch_end;
	const struct ptc_path_mark *mk = cur->m + cur->j, *const mk_end = cur->m + cur->nm;
	const struct ptc_branch *mark = mk < mk_end ? cur->b + mk->at : NULL;
	uint32_t limit = w->chunk_records - w->c_records, bitn, pn, way;
	struct lane s;

	if (w->pred_edge == PTCF_NO_NODE)
		return 0;
	/* the previous record's node and the way it left it */
	pn = w->pred_node;
	way = nodes[pn].edge[0] == w->pred_edge ? 0 : 1;
	if (nodes[pn].edge[way] != w->pred_edge)
		return 0;
	if (limit > 4096)
		limit = 4096;	/* bounds the room reserved below */
	/* Room for a bit per record and 8 bytes more (the last bits are
	 * stored with one 64-bit store); for a slot per record (5 bytes at
	 * most), and 8 more: a path's slot bytes go in with one. */
	if (buf_grow(&w->bits, limit / 8 + 2 + 8) < 0 || buf_grow(&w->slots, (size_t)limit * 5 + 8) < 0)
		return 0;
	s.succp = lane_at(nodes, pn, way);
	s.nrec = 0;
	s.bitp = w->bits.p + (w->c_bitn >> 3);
	s.nacc = w->c_bitn & 7;
	s.acc = s.nacc ? s.bitp[0] & ((1u << s.nacc) - 1) : 0;
	s.slots = w->slots.p + w->slots.len;
	s.start = w->next_start;
	s.insns = 0;
	s.time = w->time;
	/* the rest of a path that put_branch() began */
	while (cur->xi < cur->xn && s.nrec < limit) {
		if (take_record(w, nodes, &s, &cur->x[cur->xi]) == PTCF_NO_NODE)
			break;
		cur->xi++;
		lane_spill(&s);
	}
	if (cur->xi < cur->xn)
		end = r;	/* (those first) */
	/* records before fetch_end have one EDGE_PREFETCH ahead to fetch for */
	fetch_end = w->edge_of.mask >= EDGE_PREFETCH_MIN && end - r > EDGE_PREFETCH ? end - EDGE_PREFETCH : r;
	while (r < end && s.nrec < limit) {
		if (r < fetch_end && is_indirect(r[EDGE_PREFETCH].kind))
			__builtin_prefetch(&w->edge_of.e[edge_hash(r[EDGE_PREFETCH].ip, r[EDGE_PREFETCH].target) &
							 w->edge_of.mask]);
		if (r == mark) {
			struct ptc_path *mp = mk->path;
			int seen;
			struct lane t;

			if (s.nrec + mp->records > limit)
				break;
			mark = ++mk < mk_end ? cur->b + mk->at : NULL;
			seen = take_seen_path(w, nodes, &s, mp, r);
			if (seen > 0) {
				r++;
				lane_spill(&s);
				continue;
			}
			ptc_path_records(cur->x, mp, r++);
			cur->xi = 0;
			cur->xn = mp->records;
			if (seen < 0)
				break;	/* (taken one by one instead) */
			/* its records one by one (t: so that s stays in registers) */
			t = s;
			take_new_path(w, &t, cur, mp, w->bits.p);
			s = t;
			if (cur->xi < cur->xn)
				break;
			continue;
		}
		if (take_record(w, nodes, &s, r) == PTCF_NO_NODE)
			break;
		r++;
		lane_spill(&s);
	}
	ptc_put64(s.bitp, s.acc);	/* (8 bytes to spare) */
	bitn = lane_bits(&s, w->bits.p);
	pn = lane_node(&s, nodes, &way);
	cur->i = (size_t)(r - cur->b);
	cur->j = (size_t)(mk - cur->m);
	w->bits.len = (bitn + 7) >> 3;
	w->slots.len = (size_t)(s.slots - w->slots.p);
	w->c_bitn = bitn;
	w->pred_edge = nodes[pn].edge[way];
	w->pred_node = pn;
	w->next_start = s.start;
	w->time = s.time;
	w->c_records += s.nrec;
	w->records += s.nrec;
	w->branches += s.nrec;
	w->insns += s.insns;
	return s.nrec;
}

static int ptcw_paths(void *st, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm)
{
	struct ptcw *w = st;
	struct cursor cur;
	int err;

	if (n && !w->ahead && (err = resume(w)) < 0)
		return err;
	cur.b = b;
	cur.i = 0;
	cur.n = n;
	cur.m = m;
	cur.j = 0;
	cur.nm = nm;
	cur.xi = cur.xn = 0;
	while (cur.xi < cur.xn || cur.i < cur.n) {
		const struct ptc_branch *r;

		if (put_predicted(w, &cur))
			continue;
		/* the next record by itself */
		if (cur.xi == cur.xn && cur.j < nm && m[cur.j].at == cur.i) {
			ptc_path_records(cur.x, m[cur.j].path, &b[cur.i]);
			cur.xi = 0;
			cur.xn = m[cur.j].path->records;
			cur.i++;
			cur.j++;
		}
		r = cur.xi < cur.xn ? &cur.x[cur.xi++] : &b[cur.i++];
		if ((err = put_branch(w, r)) < 0)
			return err;
	}
	return 0;
}

static int ptcw_branches(void *st, const struct ptc_branch *b, size_t n)
{
	return ptcw_paths(st, b, n, NULL, 0);
}

static int ptcw_gap(void *st, const struct ptc_gap *g)
{
	struct ptcw *w = st;
	uint8_t ent[PTCF_GAP_SIZE];
	size_t dlen = g->detail ? strlen(g->detail) : 0;
	int err;

	if ((err = resume(w)) < 0 || (err = start_record(w)) < 0)
		return err;
	memset(ent, 0, sizeof(ent));
	ent[0] = g->cause;
	ptc_put64(ent + 8, g->aux_offset);
	ptc_put64(ent + 16, g->resume_offset);
	ptc_put64(ent + 24, g->time);
	ptc_put64(ent + 32, g->ip);
	ptc_put64(ent + 40, g->resume_ip);
	ptc_put64(ent + 48, g->lost_branches);
	ptc_put64(ent + 56, g->lost_bytes);
	ptc_put32(ent + 64, (uint32_t)w->strings.len);
	ptc_put32(ent + 68, (uint32_t)dlen);
	if ((err = buf_put(&w->gaps, ent, sizeof(ent))) < 0 ||
	    (err = buf_put(&w->strings, g->detail ? g->detail : "", dlen)) < 0)
		return err;
	if ((err = event(w, PTCF_EV_GAP)) < 0 || (err = buf_varint(&w->events, w->n_gaps)) < 0)
		return err;
	w->n_gaps++;
	w->c_records++;
	w->records++;
	w->pred_edge = PTCF_NO_NODE;
	w->next_start = g->resume_ip;
	return 0;
}

/* The nodes' start addresses, as ptcf_start_map_* read them. */
#define NODE_STARTS(w) (w)->nodes, sizeof(*(w)->nodes), offsetof(struct node, start)

/* A block to sort by address, longest first: the key itself, not a
 * node number into a table that a comparator would have to reach through
 * a global (writers of several threads finish at once with -j). */
struct block_key {
	uint64_t start, code_off;
	uint32_t code_len, node;
};

/* The byte d (0: least significant) of the key k-th of the sort: the
 * length, longest first (d < 4), then the address (d >= 4). */
static unsigned block_digit(const struct block_key *b, unsigned d)
{
	return d < 4 ? (unsigned)(~b->code_len >> (8 * d)) & 0xff : (unsigned)(b->start >> (8 * (d - 4))) & 0xff;
}

/* Sort n blocks by address, longest first, then by node: a stable radix
 * sort of the length and address bytes (the blocks come in node order;
 * digits that are the same in every block are passed over).  A python3
 * run's 41 threads spent 183M instructions in qsort() here, 5% of the
 * conversion.  0 or -ptc_err_nomem. */
static int sort_blocks(struct block_key *v, size_t n)
{
	struct block_key *tmp = malloc((n ? n : 1) * sizeof(*tmp)), *from = v, *to = tmp;
	size_t count[256], i, k, sum;
	unsigned d;

	if (!tmp)
		return -ptc_err_nomem;
	for (d = 0; d < 12; d++) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[block_digit(&from[i], d)]++;
		if (n && count[block_digit(&from[0], d)] == n)
			continue;	/* one value: nothing moves */
		for (k = 0, sum = 0; k < 256; k++) {
			size_t c = count[k];

			count[k] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			to[count[block_digit(&from[i], d)]++] = from[i];
		from = to;
		to = from == v ? tmp : v;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(tmp);
	return 0;
}

/* The code bytes of the blocks as spans: blocks sorted by address, merged
 * where they overlap or touch with the same bytes (code that changed
 * between two blocks, e.g. after an exec, starts a new span). */
static int code_spans(struct ptcw *w, struct buf *table, struct buf *code, uint32_t *n_spans)
{
	struct block_key *idx = malloc(((size_t)w->n_nodes + 2) * sizeof(*idx));
	uint32_t n = 0, i;
	uint64_t span_start = 0, span_end = 0, prev_end = 0;
	size_t span_off = 0;
	int have = 0, err = 0;

	if (!idx)
		return -ptc_err_nomem;
	for (i = 0; i < w->n_nodes; i++)
		if (w->more[i].code_len)
			idx[n++] = (struct block_key){ w->nodes[i].start, w->more[i].code_off, w->more[i].code_len, i };
	if (w->tail.code_len)	/* node number n_nodes: the tail's code */
		idx[n++] = (struct block_key){ w->tail_start, w->tail.code_off, w->tail.code_len, w->n_nodes };
	if (sort_blocks(idx, n) < 0) {
		free(idx);
		return -ptc_err_nomem;
	}
	*n_spans = 0;
	for (i = 0; i <= n && !err; i++) {
		const struct block_key *b = i == n ? NULL : &idx[i];
		const uint8_t *bytes = b ? w->code.p + b->code_off : NULL;
		if (b && have && b->start <= span_end) {
			uint64_t end = b->start + b->code_len, common = (end < span_end ? end : span_end) - b->start;
			if (!memcmp(code->p + span_off + (b->start - span_start), bytes, common)) {
				if (end > span_end) {
					err = buf_put(code, bytes + common, end - span_end);
					span_end = end;
				}
				continue;
			}
		}
		if (have) {
			/* close the current span */
			err = buf_varint(table, ptc_zigzag(span_start - prev_end));
			if (!err)
				err = buf_varint(table, span_end - span_start);
			prev_end = span_end;
			(*n_spans)++;
			have = 0;
		}
		if (b && !err) {
			span_start = b->start;
			span_end = b->start + b->code_len;
			span_off = code->len;
			err = buf_put(code, bytes, b->code_len);
			have = 1;
		}
	}
	free(idx);
	return err;
}

/* The function symbols (ptc_syms.h) as ptconv-trace(5) lays them out. */
static int symbol_table(struct ptcw *w, struct buf *b)
{
	const struct ptc_symw *s = &w->syms;
	struct ptc_symw_entry *v = ptc_symw_sorted(s);
	uint64_t from = 0, lo = 0;
	size_t i;
	int err = v ? buf_varint(b, s->nimages) : -ptc_err_nomem;

	for (i = 0; !err && i < s->nimages; i++) {
		size_t n = strlen(s->images[i]);
		if ((err = buf_varint(b, n)) == 0)
			err = buf_put(b, s->images[i], n);
	}
	for (i = 0; !err && i < s->n; i++) {
		const struct ptc_symw_entry *e = &v[i];
		if (buf_varint(b, e->from - from) < 0 || buf_varint(b, ptc_zigzag(e->lo - lo)) < 0 ||
		    buf_varint(b, e->hi - e->lo - 1) < 0 || buf_varint(b, e->image) < 0 ||
		    (e->image && buf_varint(b, ptc_zigzag(e->vaddr - e->lo)) < 0) ||
		    buf_varint(b, e->start ? ptc_zigzag(e->start - e->lo) + 1 : 0) < 0 ||
		    (e->start && (buf_varint(b, e->name_len) < 0 || buf_put(b, s->names + e->name, e->name_len) < 0)))
			err = -ptc_err_nomem;
		from = e->from;
		lo = e->lo;
	}
	free(v);
	return err;
}

static int write_static(struct ptcw *w)
{
	struct buf s = { 0 }, spans = { 0 }, code = { 0 };
	struct ptcf_start_map map = { 0 };
	struct buf syms = { 0 };
	uint8_t head[PTCF_S_HEAD_V3], *z = NULL, *t;
	uint32_t i, e, k, n_spans = 0;
	size_t bound, zn;
	int err = -ptc_err_nomem;

	if ((err = code_spans(w, &spans, &code, &n_spans)) < 0 || (err = symbol_table(w, &syms)) < 0)
		goto out;
	err = -ptc_err_nomem;
	if (ptcf_start_map_build(&map, NODE_STARTS(w), w->n_nodes) < 0)
		goto out;
	err = -ptc_err_nomem;
	memset(head, 0, sizeof(head));
	ptc_put64(head, w->n_nodes);
	ptc_put64(head + 8, w->n_edges);
	ptc_put64(head + 16, w->chunks.len / PTCF_CHUNK_SIZE);
	ptc_put64(head + 24, w->n_gaps);
	ptc_put64(head + 32, code.len);
	ptc_put64(head + 40, w->strings.len + strlen(w->comm));
	ptc_put32(head + 48, (uint32_t)strlen(w->comm));
	ptc_put32(head + 52, n_spans);
	ptc_put64(head + 56, w->branches);
	ptc_put64(head + PTCF_S_SYMBYTES, syms.len);
	ptc_put64(head + PTCF_S_SYMS, w->syms.n);
	if (buf_put(&s, head, sizeof(head)) < 0)
		goto out;
	/* Node and edge tables, one column per field (ptconv-trace(5)):
	 * similar numbers side by side compress better.  (Room for them all
	 * first: a call per number cost python3's 40 files 90M instructions.) */
	if (buf_grow(&s, ((size_t)w->n_nodes * 5 + (size_t)w->n_edges * 2) * 10) < 0)
		goto out;
	t = s.p + s.len;
	{
		uint64_t prev_start = 0;
		for (i = 0; i < w->n_nodes; i++) {
			t = ptc_put_varint(t, ptc_zigzag(w->nodes[i].start - prev_start));
			prev_start = w->nodes[i].start;
		}
	}
	for (i = 0; i < w->n_nodes; i++)
		t = ptc_put_varint(t, ptc_zigzag(w->nodes[i].ip - w->nodes[i].start));
	for (i = 0; i < w->n_nodes; i++)
		*t++ = (uint8_t)(w->nodes[i].kind | (w->nodes[i].length & 15) << 3);
	for (i = 0; i < w->n_nodes; i++)
		t = ptc_put_varint(t, w->nodes[i].insns);
	for (i = 0; i < w->n_nodes; i++)
		if (!is_indirect(w->nodes[i].kind))
			t = ptc_put_varint(t, ptc_zigzag(w->nodes[i].dest - w->nodes[i].ip));
	for (i = 0; i < w->n_nodes; i++)
		if (is_indirect(w->nodes[i].kind))
			t = ptc_put_varint(t, w->more[i].n_edges);
	for (i = 0; i < w->n_nodes; i++) {
		struct node *n = &w->nodes[i];
		struct node_more *m = &w->more[i];
		if (!is_indirect(n->kind))
			continue;
		for (e = m->first_edge, k = 0; k < m->n_edges; k++, e = w->edges[e].next) {
			uint64_t dest = w->edges[e].dest;
			t = ptc_put_varint(t, dest ? ptc_zigzag(dest - n->ip) + 1 : 0);
		}
	}
	/* Successors: 0 when it is the first node starting at the
	 * destination (the usual case), 1 none, else relative. */
	for (i = 0; i < w->n_nodes; i++) {
		struct node_more *n = &w->more[i];
		for (e = n->first_edge, k = 0; k < n->n_edges; k++, e = w->edges[e].next) {
			uint32_t succ = w->edges[e].succ;
			uint64_t v = succ == ptcf_start_map_find(&map, NODE_STARTS(w), w->edges[e].dest) ? 0 :
				     succ == PTCF_NO_NODE ? 1 : ptc_zigzag(succ - (uint64_t)i) + 2;
			t = ptc_put_varint(t, v);
		}
	}
	s.len = (size_t)(t - s.p);
	if (buf_put(&s, spans.p, spans.len) < 0)
		goto out;
	/* Gap detail offsets point into the strings blob after the comm. */
	for (i = 0; i < w->n_gaps; i++) {
		uint8_t *g = w->gaps.p + (size_t)i * PTCF_GAP_SIZE;
		ptc_put32(g + 64, ptc_le32(g + 64) + (uint32_t)strlen(w->comm));
	}
	if (buf_put(&s, w->chunks.p, w->chunks.len) < 0 ||
	    buf_put(&s, w->gaps.p, w->gaps.len) < 0 ||
	    buf_put(&s, code.p, code.len) < 0 ||
	    buf_put(&s, w->comm, strlen(w->comm)) < 0 ||
	    buf_put(&s, w->strings.p, w->strings.len) < 0 ||
	    buf_put(&s, syms.p, syms.len) < 0)
		goto out;
	bound = ZSTD_compressBound(s.len);
	z = malloc(bound + 16);
	if (!z || !cctx(w))
		goto out;
	/* The chunks' level: a recording of many threads embeds much the
	 * same code in each thread's file, and level 19 (about 0.3 s per MB)
	 * cost 4 times the whole decoding of a 40-thread python3 run for 6%
	 * of the bytes. */
	zn = ZSTD_compressCCtx(w->zc, z + 16, bound, s.p, s.len, w->level);
	if (ZSTD_isError(zn)) {
		err = ptc_wfail(w->c, ptc_err_internal, "%s: zstd: %s", w->path, ZSTD_getErrorName(zn));
		goto out;
	}
	ptc_put64(z, zn);
	ptc_put64(z + 8, s.len);
	if (fwrite(z, 1, zn + 16, w->f) != zn + 16) {
		err = ptc_wfail(w->c, ptc_err_io, "%s: write: %s", w->path, strerror(errno));
		goto out;
	}
	err = 0;
out:
	free(map.slot);
	free(spans.p);
	free(code.p);
	free(s.p);
	free(z);
	free(syms.p);
	return err;
}

static int write_header(struct ptcw *w, uint32_t flags, uint64_t static_off)
{
	uint8_t h[PTCF_HEADER_SIZE];

	memset(h, 0, sizeof(h));
	memcpy(h, PTCF_MAGIC, 8);
	ptc_put32(h + PTCF_H_VERSION, PTCF_VERSION);
	ptc_put32(h + PTCF_H_HSIZE, PTCF_HEADER_SIZE);
	ptc_put32(h + PTCF_H_FLAGS, flags | (w->cfg->untimed ? PTCF_FLAG_UNTIMED : 0));
	ptc_put32(h + PTCF_H_PID, w->pid);
	ptc_put32(h + PTCF_H_TID, w->tid);
	ptc_put32(h + PTCF_H_CPU, (uint32_t)w->cpu);
	ptc_put64(h + PTCF_H_RECORDS, w->records);
	ptc_put64(h + PTCF_H_INSNS, w->insns + w->tail_insns);
	ptc_put64(h + PTCF_H_STATIC, static_off);
	ptc_put64(h + PTCF_H_TAIL, w->tail_insns);
	if (fseeko(w->f, 0, SEEK_SET) < 0 || fwrite(h, 1, sizeof(h), w->f) != sizeof(h))
		return ptc_wfail(w->c, ptc_err_io, "%s: write: %s", w->path, strerror(errno));
	return 0;
}

/* What ends the file once its last chunk is handed over: the chunk
 * written, the static part and the header, the file closed and given its
 * name. */
static int end_file(struct ptcw *w)
{
	uint64_t static_off;
	int err;

	if ((err = collect_chunk(w)) < 0)
		return err;
	static_off = w->file_off;
	if ((err = write_static(w)) < 0 || (err = write_header(w, PTCF_FLAG_COMPLETE, static_off)) < 0)
		return err;
	if (fclose(w->f) != 0) {
		w->f = NULL;
		return ptc_wfail(w->c, ptc_err_io, "%s: close: %s", w->path, strerror(errno));
	}
	w->f = NULL;
	if (ptc_out_commit(w->path) < 0)
		return ptc_wfail_commit(w->c, w->path);
	return 0;
}

static void ptcw_free(void *st);

/* end_file() as a detached job, which owns the writer from then on. */
static int end_file_job(struct ptc_job *job)
{
	struct ptcw *w = (struct ptcw *)((char *)job - offsetof(struct ptcw, end_job));
	int err = end_file(w);

	ptcw_free(w);
	return err;
}

static int ptcw_finish(void *st)
{
	struct ptcw *w = st;
	int err;

	if ((err = resume(w)) < 0 || (err = flush_chunk(w)) < 0)
		return err;
	if (w->code_missing)
		ptc_wwarn(w->c, "%s: %" PRIu64 " blocks without code bytes", w->path, w->code_missing);
	/* The static part's building and compressing (python3: 460M
	 * instructions in 41 files) is for a worker to do while this thread
	 * goes on with the others' records. */
	if (w->cfg->jobs && w->cfg->jobs->detach) {
		w->end_job.run = end_file_job;
		w->cfg->jobs->detach(w->cfg->jobs->ctx, &w->end_job);
		return PTC_FMT_DETACHED;
	}
	return end_file(w);
}

/* Idle (ptc_writer_pool): the records so far become a chunk of their own
 * (the next one starts with a NODE or GAP event like any chunk), the file
 * is closed, and the compression context and chunk buffers go.  The
 * static part (nodes, edges, code, chunk index, gaps) stays: it is
 * written at the end.  The next event reopens the file at file_off. */
static int ptcw_suspend(void *st)
{
	struct ptcw *w = st;
	int err = 0;

	if (!w->f)
		return 0;
	if ((err = flush_chunk(w)) < 0 || (err = collect_chunk(w)) < 0)
		return err;	/* reported with the writer's next event */
	if (fclose(w->f) != 0)
		err = ptc_wfail(w->c, ptc_err_io, "%s: close: %s", w->path, strerror(errno));
	w->f = NULL;
	ptc_writer_pool_give_zc(w->cfg->pool, w->zc);
	w->zc = NULL;
	buf_free(&w->bits);
	buf_free(&w->slots);
	buf_free(&w->events);
	buf_free(&w->cj.raw);
	buf_free(&w->cj.z);
	return err;
}

/* The trace ends inside a block (a slice): the header counts the insns
 * instructions after the last branch, and their code is embedded like a
 * block's, so that readers can list them too. */
static int ptcw_tail(void *st, uint64_t insns)
{
	struct ptcw *w = st;

	w->tail_insns = insns;
	if (!w->next_start || ptc_insn_skip(w->cfg->code, w->next_start, insns, &w->tail_end) < insns) {
		w->code_missing++;
		ptc_wwarn(w->c, "%s: code bytes of the %" PRIu64 " instructions after the last branch"
			  " (from 0x%" PRIx64 ") not available: not embedded", w->path, insns, w->next_start);
		return 0;
	}
	w->tail_start = w->next_start;	/* the bytes [start, end) */
	embed_code(w, w->tail_start, w->tail_end, &w->tail);
	return 0;
}

static void ptcw_free(void *st)
{
	struct ptcw *w = st;

	ptc_ahead_tables_put(w->tables);
	if (w->cj.pending)	/* (an error on the way: its bytes go unwritten) */
		w->cfg->jobs->wait(w->cfg->jobs->ctx, &w->cj.job);
	if (w->f)
		fclose(w->f);
	ptc_writer_pool_give_zc(w->cfg->pool, w->zc);
	free(w->nodes);
	free(w->more);
	free(w->hash);
	free(w->edges);
	free(w->edge_of.e);
	ptc_symw_free(&w->syms);
	free(w->code.p);
	free(w->strings.p);
	free(w->gaps.p);
	free(w->chunks.p);
	free(w->bits.p);
	free(w->slots.p);
	free(w->events.p);
	free(w->cj.raw.p);
	free(w->cj.z.p);
	free(w);
}

static int ptcw_open(void **st, const struct ptc_writer_config *cfg,
		     const struct ptc_thread_info *t, struct ptc_wctx *c)
{
	struct ptcw *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ptc_err_nomem;
	w->c = c;
	do
		w->serial = __atomic_add_fetch(&writer_serial, 1, __ATOMIC_RELAXED);
	while (!w->serial);
	w->cfg = cfg;
	w->level = cfg->level ? cfg->level : 3;	/* zstd's own default; see ptconv-formats(5) */
	w->chunk_records = cfg->chunk_records ? cfg->chunk_records : 1u << 20;
	w->pid = t ? t->pid : 0;
	w->tid = t ? t->tid : 0;
	w->cpu = t ? t->cpu : -1;
	snprintf(w->comm, sizeof(w->comm), "%s", t && t->comm ? t->comm : "");
	w->pred_edge = PTCF_NO_NODE;
	w->hash_mask = 1023;
	w->hash = malloc(1024 * sizeof(*w->hash));
	if (!w->hash || edge_index_init(&w->edge_of, 1023) < 0 || ptc_symw_init(&w->syms) < 0) {
		ptcw_free(w);
		return -ptc_err_nomem;
	}
	memset(w->hash, 0xff, 1024 * sizeof(*w->hash));
	if ((err = ptc_wpath(w->path, sizeof(w->path), cfg, t, "ptc")) < 0 ||
	    (err = ptc_out_tmpname(w->tmp, sizeof(w->tmp), w->path)) < 0) {
		ptcw_free(w);
		return ptc_wfail(c, ptc_err_invalid, "ptconv writer: output path too long");
	}
	w->f = fopen(w->tmp, "wb");
	if (!w->f) {
		err = ptc_wfail(c, ptc_err_io, "%s: %s", w->path, strerror(errno));
		ptcw_free(w);
		return err;
	}
	if ((err = write_header(w, 0, 0)) < 0) {
		ptcw_free(w);
		return err;
	}
	w->file_off = PTCF_HEADER_SIZE;
	*st = w;
	return 0;
}


/* ---- encoding ahead (writers.h) ---------------------------------------- */

/* What an encoder reads of a writer's tables, as they were at one moment:
 * nodes (each encoder takes a copy, whose ways it updates as the writer
 * does), their hash, and the indirect edges.  Nodes and edges are only
 * ever added, and an edge's successor only ever set once, so what a
 * snapshot says stays true of the writer. */
struct ptc_ahead_tables {
	int refs;
	uint32_t owner;		/* the writer's serial */
	uint64_t version;	/* the writer's when it was taken */
	struct node *nodes;
	uint32_t n_nodes;
	uint32_t *hash;
	uint32_t hash_mask;
	struct edge_index edge_of;
};

/* An encoder: one per thread that encodes, for window after window (its
 * copy of the nodes is made again only when the snapshot changes). */
struct ptc_ahead_enc {
	struct ptcw w;		/* an encoder (w.ahead): no file, no edge table */
	struct ptc_ahead_tables *t;	/* whose nodes w.nodes copies */
	uint32_t cap_nodes;
	int stopped;		/* its tables could not say a record: no more */
	struct ptc_ahead_out *out;	/* where the encoding goes (its buffers lent) */
};

/* An encoding: what the splice needs of the encoder's state. */
struct ptc_ahead_out {
	struct buf bits, slots, events;
	uint32_t owner;		/* the tables' */
	uint32_t c_records, c_bitn, last_ev, pred_edge, pred_node, first_node;
	uint64_t records, branches, insns, next_start, time, first_time;
};

void ptc_ahead_tables_put(struct ptc_ahead_tables *t)
{
	if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL))
		return;
	free(t->nodes);
	free(t->hash);
	free(t->edge_of.e);
	free(t);
}

#define AHEAD_RECORDS_PER_NODE 16
#define AHEAD_RECORDS_PER_CHANGE 4096

/* A new reference to t (NULL: none). */
static struct ptc_ahead_tables *ahead_tables_ref(struct ptc_ahead_tables *t)
{
	if (t)
		__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
	return t;
}

/* A snapshot of w's tables (a new reference): NULL when w's tables are
 * not worth it yet, or out of memory. */
static struct ptc_ahead_tables *ptcw_tables(void *st)
{
	struct ptcw *w = st;
	struct ptc_ahead_tables *t = w->tables;
	size_t ne = (size_t)w->edge_of.mask + 1;
	const uint64_t per_node = w->cfg->ahead_records_per_node ? w->cfg->ahead_records_per_node
								 : AHEAD_RECORDS_PER_NODE;

	if (!w->cfg->ahead_tables)
		return NULL;
	/* (no node yet: an encoder could say no record) */
	if (!w->n_nodes)
		return NULL;
	/* A snapshot is taken when the writer has had 16 records per node
	 * since it last looked (at first, since it began), and its tables
	 * changed (a node, an edge, a successor) at most once per 4096
	 * records meanwhile: copying the tables, and each encoder its nodes,
	 * costs more than encoding saves while they grow, for the records
	 * that an older snapshot cannot say.  xz's tables (2,350 records per
	 * node) changed 18 times in 291 windows once warm; those of python3's
	 * 43 short processes and of a random walk never settle, and copying
	 * them made -j 2 slower (python3 by 4%, the walk by 15%).  With 256
	 * records per node rather than 16, xz's first snapshot came a
	 * quarter into its trace, and -j 2 took 3% more instructions (the
	 * driver's share: 432M rather than 284M, with every window decoded
	 * by the worker); python3's and the walk's were the same. */
	if (w->records - w->tables_records < per_node * w->n_nodes)
		return ahead_tables_ref(t);
	{
		const int settled = w->cfg->ahead_records_per_node ||
				    (w->version - w->tables_version) * AHEAD_RECORDS_PER_CHANGE <=
					    w->records - w->tables_records;

		w->tables_records = w->records;
		w->tables_version = w->version;
		if (!settled)
			return ahead_tables_ref(t);
	}
	if (!t || t->version != w->version) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		t->refs = 1;
		t->owner = w->serial;
		t->version = w->version;
		t->n_nodes = w->n_nodes;
		t->nodes = malloc(((size_t)w->n_nodes + 1) * sizeof(*t->nodes));
		t->hash = malloc(((size_t)w->hash_mask + 1) * sizeof(*t->hash));
		t->edge_of = w->edge_of;
		t->edge_of.e = malloc(ne * sizeof(*t->edge_of.e));
		if (!t->nodes || !t->hash || !t->edge_of.e) {
			ptc_ahead_tables_put(t);
			return NULL;
		}
		memcpy(t->nodes, w->nodes, (size_t)w->n_nodes * sizeof(*t->nodes));
		memcpy(t->hash, w->hash, ((size_t)w->hash_mask + 1) * sizeof(*t->hash));
		memcpy(t->edge_of.e, w->edge_of.e, ne * sizeof(*t->edge_of.e));
		t->hash_mask = w->hash_mask;
		ptc_ahead_tables_put(w->tables);
		w->tables = t;
	}
	return ahead_tables_ref(t);
}

int ptc_ahead_enc_new(struct ptc_ahead_enc **out)
{
	struct ptc_ahead_enc *e = calloc(1, sizeof(*e));

	*out = e;
	if (!e)
		return -ptc_err_nomem;
	e->w.ahead = 1;
	e->w.note_off = NOTE_HALF;
	e->w.chunk_records = UINT32_MAX;	/* the splice's writer makes the chunks */
	return 0;
}

int ptc_ahead_out_new(struct ptc_ahead_out **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ptc_err_nomem;
}

void ptc_ahead_out_free(struct ptc_ahead_out *o)
{
	if (!o)
		return;
	free(o->bits.p);
	free(o->slots.p);
	free(o->events.p);
	free(o);
}

uint64_t ptc_ahead_out_records(const struct ptc_ahead_out *o)
{
	return o->records;
}

/* to's memory goes; to becomes from, and from empty. */
static void buf_take(struct buf *to, struct buf *from)
{
	free(to->p);
	*to = *from;
	memset(from, 0, sizeof(*from));
}

/* The encoding so far to e->out, its buffers given back. */
int ptc_ahead_enc_end(struct ptc_ahead_enc *e)
{
	struct ptcw *w = &e->w;
	struct ptc_ahead_out *o = e->out;

	if (!o)
		return 0;
	buf_take(&o->bits, &w->bits);
	buf_take(&o->slots, &w->slots);
	buf_take(&o->events, &w->events);
	o->owner = e->t->owner;
	o->c_records = w->c_records;
	o->c_bitn = w->c_bitn;
	o->last_ev = w->last_ev;
	o->pred_edge = w->pred_edge;
	o->pred_node = w->pred_node;
	o->first_node = w->first_node;
	o->records = w->records;
	o->branches = w->branches;
	o->insns = w->insns;
	o->next_start = w->next_start;
	o->time = w->time;
	o->first_time = w->first_time;
	e->out = NULL;
	return 0;
}

void ptc_ahead_enc_free(struct ptc_ahead_enc *e)
{
	if (!e)
		return;
	ptc_ahead_enc_end(e);
	ptc_ahead_tables_put(e->t);
	free(e->w.nodes);
	free(e->w.bits.p);
	free(e->w.slots.p);
	free(e->w.events.p);
	free(e);
}

int ptc_ahead_enc_begin(struct ptc_ahead_enc *e, struct ptc_ahead_tables *t, uint64_t start,
			struct ptc_ahead_out *o)
{
	struct ptcw *w = &e->w;

	ptc_ahead_enc_end(e);
	if (e->t != t) {
		/* the snapshot's nodes; the ways of the last ones taken from
		 * the same snapshot would do as well (they are a cache) */
		if (t->n_nodes + 1 > e->cap_nodes) {
			uint32_t cap = t->n_nodes + 1 + t->n_nodes / 2;
			struct node *n = aligned_alloc(64, (size_t)cap * sizeof(*n));
			if (!n)
				return -ptc_err_nomem;
			free(w->nodes);
			w->nodes = n;
			e->cap_nodes = cap;
		}
		memcpy(w->nodes, t->nodes, (size_t)t->n_nodes * sizeof(*w->nodes));
		/* Notes on paths name nodes and edges of one writer's
		 * tables: they are the encoders' for that writer, whose
		 * serial they bear, in the scratch's second half (the
		 * writer's notes are in its first). */
		w->serial = t->owner;
		__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
		ptc_ahead_tables_put(e->t);
		e->t = t;
	}
	w->n_nodes = t->n_nodes;
	w->hash = t->hash;
	w->hash_mask = t->hash_mask;
	w->edge_of = t->edge_of;
	/* into o's buffers (their memory kept from its last encoding) */
	buf_take(&w->bits, &o->bits);
	buf_take(&w->slots, &o->slots);
	buf_take(&w->events, &o->events);
	o->records = 0;
	e->out = o;
	w->bits.len = w->slots.len = w->events.len = 0;
	w->c_records = w->c_bitn = w->last_ev = 0;
	w->records = w->branches = w->insns = 0;
	w->pred_edge = PTCF_NO_NODE;
	w->next_start = start;
	w->time = 0;
	w->ahead_first = 1;
	e->stopped = 0;
	return 0;
}

/* An encoding's state between two batches. */
struct enc_state {
	size_t bits, slots, events;
	uint32_t c_records, c_bitn, last_ev, pred_edge, pred_node, first_node;
	uint64_t records, branches, insns, next_start, time, first_time;
	int ahead_first;
};

int ptc_ahead_enc_paths(struct ptc_ahead_enc *e, const struct ptc_branch *b, size_t n,
			const struct ptc_path_mark *m, size_t nm)
{
	struct ptcw *w = &e->w;
	const struct enc_state was = {
		w->bits.len, w->slots.len, w->events.len, w->c_records, w->c_bitn, w->last_ev, w->pred_edge,
		w->pred_node, w->first_node, w->records, w->branches, w->insns, w->next_start, w->time,
		w->first_time, w->ahead_first,
	};
	int err;

	if (e->stopped)
		return -ptc_err_mismatch;
	if (!n)
		return 0;
	err = ptcw_paths(w, b, n, m, nm);
	if (err < 0) {
		/* the encoding stays what it was before the batch (the
		 * nodes' ways and the paths' notes that it changed are true
		 * either way) */
		w->bits.len = was.bits;
		w->slots.len = was.slots;
		w->events.len = was.events;
		w->c_records = was.c_records;
		w->c_bitn = was.c_bitn;
		w->last_ev = was.last_ev;
		w->pred_edge = was.pred_edge;
		w->pred_node = was.pred_node;
		w->first_node = was.first_node;
		w->records = was.records;
		w->branches = was.branches;
		w->insns = was.insns;
		w->next_start = was.next_start;
		w->time = was.time;
		w->first_time = was.first_time;
		w->ahead_first = was.ahead_first;
		if (w->c_bitn & 7)
			w->bits.p[w->c_bitn >> 3] &= (uint8_t)((1u << (w->c_bitn & 7)) - 1);
		e->stopped = 1;
	}
	return err;
}

/* Records of e that w can take before its chunk is full (and the next
 * record would begin another); 0 when e was not encoded against w's
 * tables. */
static uint64_t ptcw_room(void *st, const struct ptc_ahead_out *o)
{
	const struct ptcw *w = st;

	return o->owner == w->serial ? w->chunk_records - w->c_records : 0;
}

/* nbits bits from src (in the chunk's order: bit k is bit k % 8 of byte
 * k / 8) after the chunk's. */
static int put_bits(struct ptcw *w, const uint8_t *src, uint32_t nbits)
{
	const unsigned sh = w->c_bitn & 7;
	const size_t nbytes = ((size_t)nbits + 7) / 8;
	uint8_t *dst;
	size_t i;

	if (!nbits)
		return 0;
	if (buf_grow(&w->bits, nbytes + 1) < 0)
		return -ptc_err_nomem;
	dst = w->bits.p + (w->c_bitn >> 3);
	if (!sh) {
		memcpy(dst, src, nbytes);
	} else {
		/* (the chunk's last byte has zeros above its bits) */
		for (i = 0; i < nbytes; i++) {
			dst[i] |= (uint8_t)(src[i] << sh);
			dst[i + 1] = (uint8_t)(src[i] >> (8 - sh));
		}
	}
	w->c_bitn += nbits;
	w->bits.len = (w->c_bitn + 7) >> 3;
	return 0;
}

/* The records e encoded, as if w had been given them after its own: the
 * first one's node and time events as w writes them (its predecessor is
 * w's last record), then e's bits, slots and events, the first event's
 * distance counted from w's last event instead of e's first record. */
static int ptcw_splice(void *st, const struct ptc_ahead_out *x)
{
	struct ptcw *w = st;
	const uint32_t rec0 = w->c_records, id = x->first_node;
	int err;

	if (!x->c_records || x->c_records > ptcw_room(w, x))
		return ptc_wfail(w->c, ptc_err_internal, "%s: records encoded ahead do not fit", w->path);
	if ((err = resume(w)) < 0)
		return err;
	if (w->pred_edge == PTCF_NO_NODE || w->edges[w->pred_edge].succ != id) {
		if (w->pred_edge != PTCF_NO_NODE && w->edges[w->pred_edge].succ == PTCF_NO_NODE)
			set_succ(w, w->pred_edge, id);
		else if ((err = event(w, PTCF_EV_NODE)) < 0 || (err = buf_varint(&w->events, id)) < 0)
			return err;
	}
	if (x->first_time != w->time && (err = time_event(w, rec0, x->first_time)) < 0)
		return err;
	if (x->events.len) {
		const uint8_t *p = x->events.p, *end = p + x->events.len;
		uint64_t d = 0;
		unsigned sh = 0;

		do {
			d |= (uint64_t)(*p & 0x7f) << sh;
			sh += 7;
		} while (*p++ & 0x80);
		if ((err = buf_varint(&w->events, rec0 + d - w->last_ev)) < 0 ||
		    (err = buf_put(&w->events, p, (size_t)(end - p))) < 0)
			return err;
		w->last_ev = rec0 + x->last_ev;
	}
	if ((err = put_bits(w, x->bits.p, x->c_bitn)) < 0 || (err = buf_put(&w->slots, x->slots.p, x->slots.len)) < 0)
		return err;
	w->c_records += x->c_records;
	w->records += x->records;
	w->branches += x->branches;
	w->insns += x->insns;
	w->pred_edge = x->pred_edge;
	w->pred_node = x->pred_node;
	w->next_start = x->next_start;
	w->time = x->time;
	return 0;
}

const struct ptc_fmt_ops ptc_fmt_ptconv = {
	{ "ptconv", "ptconv's compact trace (.ptc), read by libptconv-trace", 0 },
	ptcw_open, ptcw_branches, ptcw_gap, ptcw_finish, ptcw_free, ptcw_suspend, ptcw_tail,
	ptcw_paths,
	NULL,	/* cpu: not in the format (ptconv-trace(5)) */
	ptcw_tables, ptcw_room, ptcw_splice,
};
