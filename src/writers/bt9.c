/* BT9 for the CBP2016 framework (-f bt9): see ptconv-bt9(5).
 *
 * The header needs totals and the node and edge tables precede the edge
 * sequence, so the sequence is written first to a side file (a gzip member)
 * and the final file is the header member followed by the sequence member:
 * gunzip concatenates members, which is what the framework's reader sees.
 *
 * The pool of open writers (--max-open-outputs) suspends a bt9 output by
 * closing the side file, its member suspended (ptc_zout_suspend); the next
 * branch goes on with it.  The node and edge tables stay: they are the part's header,
 * written when the part ends.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writers/fmt.h"
#include "writers/insn.h"
#include "writers/wutil.h"

struct bnode {
	uint64_t ip, opcode;
	uint64_t taken, not_taken;
	uint32_t tgt_cnt;
	uint64_t last_target;	/* to count distinct targets cheaply */
	struct ptc_map *targets; /* distinct taken targets (indirect) */
	uint8_t kind, length;
};

struct bedge {
	uint32_t src, dst;
	uint64_t target;
	uint64_t count;
	uint32_t inst_cnt;
	uint8_t taken;
};

#define SINK UINT32_MAX

struct bt9 {
	struct ptc_wctx *c;
	const struct ptc_writer_config *cfg;
	struct ptc_wparts parts;	/* one file per gap-free run */
	char seqpath[4200];
	struct ptc_zout *seq;		/* NULL while suspended */
	struct ptc_zsusp *seq_sus;	/* its stream while suspended */
	struct ptc_walker walk;
	struct bnode *nodes;		/* [0] is the dummy source */
	size_t n_nodes, cap_nodes;
	struct bedge *edges;		/* [0] is the dummy first edge */
	size_t n_edges, cap_edges;
	struct ptc_map node_of, edge_of;
	uint32_t prev_edge;		/* edge of the previous branch, awaiting its dst */
	uint64_t branches, insns, conflicts, node_conflicts;
	char line[32];
};

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *np;
	size_t nc;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 1024;
	np = realloc(*p, nc * size);
	if (!np)
		return -ptc_err_nomem;
	*p = np;
	*cap = nc;
	return 0;
}

static uint64_t opcode_of(struct bt9 *w, const struct ptc_branch *b)
{
	uint8_t buf[8] = { 0 };
	uint64_t v = 0;
	size_t n = b->length < 8 ? b->length : 8, i;

	if (!w->cfg->code || !w->cfg->code->read || w->cfg->code->read(w->cfg->code->ctx, b->ip, buf, n) != n)
		return 0;
	for (i = 0; i < n; i++)
		v |= (uint64_t)buf[i] << (8 * i);
	return v;
}

static uint64_t edge_key(uint32_t src, uint8_t taken, uint64_t target)
{
	return ptc_hash64(target) ^ ((uint64_t)src << 1 | taken) * 0x9e3779b97f4a7c15ull;
}

static int bt9_branch(struct bt9 *w, const struct ptc_branch *b)
{
	uint32_t id, e;
	uint64_t target = b->kind == PTC_BR_FAR && !b->target ? b->ip + b->length : b->target;
	uint8_t taken = b->kind == PTC_BR_COND ? b->taken : 1;
	/* A not-taken edge carries the branch's encoded target too, as in
	 * the championship's own traces: TAGE-SC-L compares the target
	 * with the pc (loop exits, IMLI), and a 0 there would make every
	 * forward branch look backward. */
	uint64_t key, etarget = target;
	struct bnode *n;
	int err;
	size_t k;

	id = ptc_map_get(&w->node_of, b->ip);
	if (id == UINT32_MAX) {
		if ((err = grow((void **)&w->nodes, &w->cap_nodes, w->n_nodes, sizeof(*w->nodes))) < 0)
			return err;
		id = (uint32_t)w->n_nodes++;
		n = &w->nodes[id];
		memset(n, 0, sizeof(*n));
		n->ip = b->ip;
		n->kind = b->kind;
		n->length = b->length;
		n->opcode = opcode_of(w, b);
		if ((err = ptc_map_put(&w->node_of, b->ip, id)) < 0)
			return err;
	}
	n = &w->nodes[id];
	if (n->kind != b->kind || n->length != b->length)
		w->node_conflicts++;
	if (taken)
		n->taken++;
	else
		n->not_taken++;
	/* The node's previous edge now knows where it went. */
	if (w->edges[w->prev_edge].dst == SINK && w->edges[w->prev_edge].count == 1) {
		w->edges[w->prev_edge].dst = id;
		w->edges[w->prev_edge].inst_cnt = b->insns ? b->insns - 1 : 0;
	} else if (w->edges[w->prev_edge].dst != id ||
		   w->edges[w->prev_edge].inst_cnt != (b->insns ? b->insns - 1 : 0)) {
		w->conflicts++;
	}
	/* Find or create this branch's edge. */
	key = edge_key(id, taken, etarget);
	e = ptc_map_get(&w->edge_of, key);
	while (e != UINT32_MAX && (w->edges[e].src != id || w->edges[e].taken != taken ||
				   w->edges[e].target != etarget)) {
		/* hash collision: probe the next key */
		key = ptc_hash64(key + 1);
		e = ptc_map_get(&w->edge_of, key);
	}
	if (e == UINT32_MAX) {
		if ((err = grow((void **)&w->edges, &w->cap_edges, w->n_edges, sizeof(*w->edges))) < 0)
			return err;
		e = (uint32_t)w->n_edges++;
		memset(&w->edges[e], 0, sizeof(w->edges[e]));
		w->edges[e].src = id;
		w->edges[e].dst = SINK;
		w->edges[e].taken = taken;
		w->edges[e].target = etarget;
		if ((err = ptc_map_put(&w->edge_of, key, e)) < 0)
			return err;
		if (taken) {
			/* Distinct targets: direct branches have one. */
			n = &w->nodes[id];
			n->tgt_cnt++;
		}
	}
	w->edges[e].count++;
	w->prev_edge = e;
	w->branches++;
	w->insns += b->insns;
	k = (size_t)snprintf(w->line, sizeof(w->line), "%" PRIu32 "\n", e);
	if ((err = ptc_zout_write(w->seq, w->line, k)) < 0)
		return ptc_wfail_z(w->c, w->seqpath, err, ptc_zout_errno(w->seq), "write");
	return 0;
}

/* Go on with the suspended sequence member. */
static int seq_resume(struct bt9 *w)
{
	if (ptc_zout_resume(&w->seq, w->seqpath, PTC_Z_GZIP, w->cfg->level, 0, &w->seq_sus) < 0)
		return ptc_wfail(w->c, ptc_err_io, "%s: %s", w->seqpath, strerror(errno));
	return 0;
}

static int bt9_branches(void *st, const struct ptc_branch *b, size_t n)
{
	struct bt9 *w = st;
	size_t i;
	int err;

	if (n && (err = ptc_wparts_want(&w->parts)) < 0)
		return err;
	if (n && !w->seq && (err = seq_resume(w)) < 0)
		return err;
	for (i = 0; i < n; i++)
		if ((err = bt9_branch(st, &b[i])) < 0)
			return err;
	return 0;
}

/* A loss ends the part: the CBP2016 framework reads one unbroken edge
 * sequence per file, so the branches after a lost stretch go to the next
 * part file (ptconv-formats(5)).  A stream start is no loss (tracing
 * resumed where user mode did, e.g. after an interrupt). */
static int bt9_gap(void *st, const struct ptc_gap *g)
{
	struct bt9 *w = st;

	return ptc_wparts_gap(&w->parts, g);
}

static const char *class_of(uint8_t kind)
{
	switch (kind) {
	case PTC_BR_JMP: return "JMP+DIR+UCD";
	case PTC_BR_JMP_IND: return "JMP+IND+UCD";
	case PTC_BR_CALL: return "CALL+DIR+UCD";
	case PTC_BR_CALL_IND: return "CALL+IND+UCD";
	case PTC_BR_RET: return "RET+IND+UCD";
	case PTC_BR_COND: return "JMP+DIR+CND";
	default: return "JMP+IND+UCD";	/* far transfers: see ptconv-bt9(5) */
	}
}

static int seg_finish(void *st)
{
	struct bt9 *w = st;
	const char *path = w->parts.path, *file = w->parts.tmp;	/* written as file until complete */
	struct ptc_zout *z = NULL;
	uint32_t sink = (uint32_t)w->n_nodes;
	size_t i;
	int err;
	FILE *in;
	char buf[65536];
	size_t k;

	/* Suspended: its member ends (its trailer, or an empty member if it
	 * never had a byte). */
	if (!w->seq && (err = seq_resume(w)) < 0)
		return err;
	if ((err = ptc_zout_close(w->seq)) < 0) {
		w->seq = NULL;
		return ptc_wfail(w->c, ptc_err_io, "%s: write: %s", w->seqpath, strerror(errno));
	}
	w->seq = NULL;
	if (w->edges[w->prev_edge].count == 1 && w->edges[w->prev_edge].dst == SINK)
		w->edges[w->prev_edge].inst_cnt = 0;
	if (ptc_zout_open(&z, file, PTC_Z_GZIP, w->cfg->level) < 0)
		return ptc_wfail(w->c, ptc_err_io, "%s: %s", file, strerror(errno));
#define P(...) do { if ((err = ptc_zout_printf(z, __VA_ARGS__)) < 0) goto io; } while (0)
	P("BT9_SPA_TRACE_FORMAT\nbt9_minor_version: 0\nhas_physical_address: 0\n");
	P("total_instruction_count: %" PRIu64 "\n", w->insns);
	P("branch_instruction_count: %" PRIu64 "\n", w->branches + 1);
	P("BT9_NODES\nNODE 0 0 - 0 0\n");
	for (i = 1; i < w->n_nodes; i++) {
		struct bnode *n = &w->nodes[i];
		const char *beh = n->taken && n->not_taken ? "DYN" : n->taken ? "AT" : "ANT";
		P("NODE %zu 0x%016" PRIx64 " - 0x%" PRIx64 " %u class: %s behavior: %s+%s"
		  " taken_cnt: %" PRIu64 " not_taken_cnt: %" PRIu64 " tgt_cnt: %" PRIu32 "\n",
		  i, n->ip, n->opcode, n->length, class_of(n->kind), beh, n->tgt_cnt > 1 ? "IND" : "DIR",
		  n->taken, n->not_taken, n->tgt_cnt);
	}
	P("NODE %" PRIu32 " 0xffffffffffffffff - 0 0\nBT9_EDGES\n", sink);
	for (i = 0; i < w->n_edges; i++) {
		struct bedge *e = &w->edges[i];
		P("EDGE %zu %" PRIu32 " %" PRIu32 " %c 0x%" PRIx64 " - %" PRIu32 " traverse_cnt: %" PRIu64 "\n",
		  i, e->src, e->dst == SINK ? sink : e->dst, e->taken ? 'T' : 'N', e->target,
		  e->inst_cnt, e->count);
	}
	P("BT9_EDGE_SEQUENCE\n0\n");
	if ((err = ptc_zout_close(z)) < 0) {
		z = NULL;
		goto io;
	}
	z = NULL;
	/* Append the sequence member, then a member with the EOF line. */
	in = fopen(w->seqpath, "rb");
	if (!in)
		return ptc_wfail(w->c, ptc_err_io, "%s: %s", w->seqpath, strerror(errno));
	{
		FILE *out = fopen(file, "ab");
		if (!out) {
			fclose(in);
			return ptc_wfail(w->c, ptc_err_io, "%s: %s", file, strerror(errno));
		}
		while ((k = fread(buf, 1, sizeof(buf), in)) > 0)
			if (fwrite(buf, 1, k, out) != k)
				break;
		err = ferror(in) || ferror(out);
		fclose(in);
		if (fclose(out) || err)
			return ptc_wfail(w->c, ptc_err_io, "%s: append: %s", path, strerror(errno));
	}
	unlink(w->seqpath);
	w->seqpath[0] = 0;
	if (ptc_zout_append(&z, file, PTC_Z_GZIP, w->cfg->level) < 0)
		return ptc_wfail(w->c, ptc_err_io, "%s: %s", file, strerror(errno));
	P("EOF\n");
	if ((err = ptc_zout_close(z)) < 0) {
		z = NULL;
		goto io;
	}
	if (w->conflicts || w->node_conflicts)
		ptc_wwarn(w->c, "%s: %" PRIu64 " transitions differ from their edge's first destination"
			  " (asynchronous events), %" PRIu64 " branches reuse an address with another kind",
			  path, w->conflicts, w->node_conflicts);
	return 0;
io:
	ptc_zout_abort(z);
	return ptc_wfail(w->c, ptc_err_io, "%s: write: %s", path, strerror(errno));
#undef P
}

static int bt9_finish(void *st)
{
	struct bt9 *w = st;

	return ptc_wparts_close(&w->parts);
}

/* Drop the tables of the finished part. */
static void seg_free(struct bt9 *w)
{
	if (w->seq) {
		ptc_zout_abort(w->seq);
		w->seq = NULL;
	}
	ptc_zsusp_free(w->seq_sus);
	w->seq_sus = NULL;
	/* a part that did not finish, open or suspended */
	if (w->seqpath[0]) {
		unlink(w->seqpath);
		w->seqpath[0] = 0;
	}
	ptc_map_free(&w->node_of);
	ptc_map_free(&w->edge_of);
	free(w->nodes);
	free(w->edges);
	w->nodes = NULL;
	w->edges = NULL;
	w->n_nodes = w->cap_nodes = w->n_edges = w->cap_edges = 0;
}

/* Start a part file: the dummy source node and first edge, the sequence
 * side file. */
static int seg_start(void *st)
{
	struct bt9 *w = st;
	int err;

	seg_free(w);
	w->prev_edge = 0;
	w->branches = w->insns = w->conflicts = w->node_conflicts = 0;
	if (ptc_map_init(&w->node_of) < 0 || ptc_map_init(&w->edge_of) < 0 ||
	    grow((void **)&w->nodes, &w->cap_nodes, 0, sizeof(*w->nodes)) < 0 ||
	    grow((void **)&w->edges, &w->cap_edges, 0, sizeof(*w->edges)) < 0)
		return -ptc_err_nomem;
	memset(&w->nodes[0], 0, sizeof(w->nodes[0]));
	w->n_nodes = 1;
	memset(&w->edges[0], 0, sizeof(w->edges[0]));
	w->edges[0].dst = SINK;
	w->edges[0].count = 1;
	w->n_edges = 1;
	/* the edge sequence, until the tables that precede it are known:
	 * a temporary too, which a later run removes if this one is killed */
	{
		char seq[4096];
		if (snprintf(seq, sizeof(seq), "%s.seq", w->parts.path) >= (int)sizeof(seq) ||
		    ptc_out_tmpname(w->seqpath, sizeof(w->seqpath), seq) < 0)
			return ptc_wfail(w->c, ptc_err_invalid, "%s: path too long", w->parts.path);
	}
	if ((err = ptc_zout_open(&w->seq, w->seqpath, PTC_Z_GZIP, w->cfg->level)) < 0)
		return ptc_wfail(w->c, ptc_err_io, "%s: %s", w->seqpath, strerror(errno));
	return 0;
}

/* Suspended by the pool: close the sequence's file, its member going on
 * when the next branch comes (ptc_zout_suspend), so that the file's
 * decompressed bytes are those it would have had without this
 * suspension. */
static int bt9_suspend(void *st)
{
	struct bt9 *w = st;

	if (ptc_zout_suspend(&w->seq, &w->seq_sus) < 0)
		return ptc_wfail(w->c, ptc_err_io, "%s: write: %s", w->seqpath, strerror(errno));
	return 0;
}

static void bt9_free(void *st)
{
	struct bt9 *w = st;

	seg_free(w);
	free(w);
}

static int bt9_open(void **st, const struct ptc_writer_config *cfg,
		    const struct ptc_thread_info *t, struct ptc_wctx *c)
{
	struct bt9 *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ptc_err_nomem;
	w->c = c;
	w->cfg = cfg;
	ptc_wparts_init(&w->parts, cfg, t, c, "bt9.gz");
	w->parts.open = seg_start;
	w->parts.close = seg_finish;
	w->parts.st = w;
	if ((err = ptc_wparts_open(&w->parts)) < 0) {
		bt9_free(w);
		return err;
	}
	*st = w;
	return 0;
}

const struct ptc_fmt_ops ptc_fmt_bt9 = {
	{ "bt9", "BT9 text for the CBP2016 framework (.bt9.gz)", 0 },
	bt9_open, bt9_branches, bt9_gap, bt9_finish, bt9_free, bt9_suspend,
	NULL,	/* a tail has no branch: BT9 holds branches and their edges only */
	NULL,	/* paths: each record by itself */
	NULL,	/* cpu: not in the format */
	NULL, NULL, NULL,	/* encoding ahead: it wants the records */
};
