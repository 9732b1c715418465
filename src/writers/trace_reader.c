/* libptconv-trace: the reader of ptconv's own trace format.  See
 * include/ptconv/trace.h for the API and ptconv-trace(5) for the layout.
 *
 * Everything the file claims is checked against the file's size before it
 * is allocated or followed, so a corrupt or hostile file yields an error
 * naming the byte offset, never a crash or an unbounded allocation.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "ptconv/trace.h"
#include "common/bytes.h"
#include "common/error.h"
#include "common/trace_event.h"
#include "writers/ptc_format.h"

/* A node as loading builds it: the record it expands to (see struct hnode
 * for the hot loop's copy); insns to flags are laid out as in struct
 * ptc_trace_record, so that they are copied as one 8-byte word. */
struct rnode {
	uint64_t ip, target;
	struct rtail {
		uint32_t insns;
		uint8_t kind, taken, length, flags;	/* taken 1, flags 0 */
	} tail;
	uint32_t succ[2];	/* successors of slots 0 and 1 (direct kinds);
				   first edge and edge count (indirect kinds) */
};

#define TAIL_OFF offsetof(struct ptc_trace_record, insns)
_Static_assert(sizeof(struct rtail) == 8 && sizeof(struct ptc_trace_record) == TAIL_OFF + 8,
	       "the node's tail is the record's");

struct ptc_trace;
static uint32_t node_off(const struct ptc_trace *t, uint32_t node);

static int is_direct(uint8_t kind)
{
	return kind == PTC_TRACE_JMP || kind == PTC_TRACE_CALL;
}

struct redge {
	uint64_t dest;
	uint32_t succ;
};

/* The hot loop's copy of the nodes (t->hot): each node as a struct hnode,
 * after an indirect one its edges (struct hedge), so that an edge's
 * address follows from the node's offset and the slot alone.  The loop
 * follows tags, the nodes' byte offsets into t->hot, whose low bits say
 * which way to go without a load: conditional nodes sit at offsets 4 mod 8
 * (bit 2, TAG_COND), direct ones at 0 mod 8 and indirect ones at 0 mod 8
 * with tag bit 1 set (TAG_INDIRECT, not part of the offset).
 *
 * A conditional's succ[] hold its successors' tags by taken bit, a direct
 * node's both its successor's, so that for both the next tag is at
 * hot + tag + 4 * bit, one load from the current tag with no branch on the
 * class; only a conditional uses up the bit.  An indirect node's succ[0]
 * is its edge count. */
enum { TAG_INDIRECT = 2, TAG_COND = 4 };

struct hnode {
	uint32_t succ[2];
	uint64_t ip, target;
	struct rtail tail;	/* taken 0 for a conditional: the loop adds the bit */
};

_Static_assert(sizeof(struct hnode) == 32 && offsetof(struct hnode, ip) == 8, "hnode layout");

struct hedge {
	uint64_t dest;
	uint32_t succ;		/* tag */
	uint32_t unused;
};

/* Successors are stored as byte offsets into the node array, the sentinel
 * node n_nodes standing for none: an indirect node
 * without edges, so that following it fails (see expand). */
#define MAX_NODES ((UINT32_MAX / 32) - 1)

struct rchunk {
	uint64_t off, comp, first_record, first_insn;
	uint32_t n_records, raw;
};

struct range {
	uint64_t start, end, off;
};

/* An embedded symbol entry (version 3): the answer for [lo, hi) from
 * record `from` on. */
struct rsym {
	uint64_t from, lo, hi, start, vaddr;
	const char *name, *image;	/* in syms_text; NULL none */
};

struct ptc_trace {
	FILE *f;
	char path[1024];
	char msg[1024];
	uint64_t size;
	struct ptc_trace_info info;
	char *comm;

	struct rnode *nodes;
	uint64_t n_nodes;
	char *hot;		/* see struct hedge */
	uint32_t *tag;		/* each node's tag, the sentinel's last */
	struct redge *edges;
	uint64_t n_edges;
	struct rchunk *chunks;
	uint64_t n_chunks;
	uint8_t *gaps;
	uint64_t n_gaps;
	uint8_t *code;
	uint64_t code_size;
	char *strings;
	uint64_t strings_size;
	struct range *ranges;
	uint64_t n_ranges;
	struct rsym *syms;	/* sorted by (from, lo); of one from, disjoint */
	uint64_t n_syms, sym_bytes;
	uint64_t *groups;	/* where each run of one from begins, n_groups + 1 */
	uint64_t n_groups;
	char *syms_text;	/* the names and image names, each NUL-terminated */
	uint32_t flags;		/* the header's */
	uint64_t static_off, static_comp, static_raw, table_bytes;	/* for ptc_trace_layout */

	/* decoding state */
	uint64_t chunk;		/* current chunk, n_chunks at the end */
	int loaded;
	uint8_t *raw, *comp;
	size_t raw_cap, comp_cap;
	const uint8_t *bits, *slots, *ev, *ev_end, *slots_end;
	uint32_t n_bits_bytes;
	uint32_t rec, nrec;	/* next record in chunk, records in chunk */
	uint64_t bitpos;	/* the taken bits before it are in bitword or used */
	uint64_t bitword;	/* see refill_bits */
	uint32_t next_ev;	/* record index of the next event, UINT32_MAX none */
	uint32_t cur;		/* tag of the next record's node (predicted) */
	uint64_t time;
	uint64_t insns_before;	/* instructions before the next record */
	ZSTD_DCtx *dctx;
};

static uint32_t node_off(const struct ptc_trace *t, uint32_t node)
{
	return (node == PTCF_NO_NODE ? (uint32_t)t->n_nodes : node) * (uint32_t)sizeof(struct rnode);
}

static int fail(struct ptc_trace *t, int code, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct ptc_trace *t, int code, uint64_t off, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(t->msg, sizeof(t->msg), "%.600s: offset %" PRIu64 ": %.400s", t->path, off, why);
	return -code;
}

const char *ptc_trace_errmsg(const struct ptc_trace *t)
{
	return t ? t->msg : "";
}

/* The public numbers are the decoders' (checked here), so the names are
 * theirs. */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(PTC_TRACE_JMP, PTC_BR_JMP) && SAME(PTC_TRACE_JMP_IND, PTC_BR_JMP_IND) &&
	       SAME(PTC_TRACE_CALL, PTC_BR_CALL) && SAME(PTC_TRACE_CALL_IND, PTC_BR_CALL_IND) &&
	       SAME(PTC_TRACE_RET, PTC_BR_RET) && SAME(PTC_TRACE_COND, PTC_BR_COND) &&
	       SAME(PTC_TRACE_FAR, PTC_BR_FAR) && SAME(PTC_TRACE_GAP, PTC_BR_KIND_NR),
	       "record kinds are branch kinds");
_Static_assert(SAME(PTC_TRACE_GAP_OVERFLOW, PTC_GAP_OVERFLOW) && SAME(PTC_TRACE_GAP_AUX_LOST, PTC_GAP_AUX_LOST) &&
	       SAME(PTC_TRACE_GAP_RECORDS_LOST, PTC_GAP_RECORDS_LOST) &&
	       SAME(PTC_TRACE_GAP_NO_IMAGE, PTC_GAP_NO_IMAGE) && SAME(PTC_TRACE_GAP_BUILD_ID, PTC_GAP_BUILD_ID) &&
	       SAME(PTC_TRACE_GAP_DECODE, PTC_GAP_DECODE) && SAME(PTC_TRACE_GAP_DISABLED, PTC_GAP_DISABLED) &&
	       SAME(PTC_TRACE_GAP_START, PTC_GAP_START),
	       "gap causes are the decoders'");
#undef SAME

const char *ptc_trace_kind_name(int kind)
{
	return kind == PTC_TRACE_GAP ? "gap" : ptc_branch_kind_name(kind);
}

const char *ptc_trace_gap_cause_name(int cause)
{
	return ptc_gap_cause_name(cause);
}

const char *ptc_trace_errstr(int code)
{
	return ptc_errstr(code);
}

static int read_at(struct ptc_trace *t, uint64_t off, void *buf, size_t n)
{
	if (off > t->size || n > t->size - off)
		return fail(t, ptc_err_truncated, off, "file ends inside a %zu-byte structure", n);
	if (fseeko(t->f, (off_t)off, SEEK_SET) < 0 || fread(buf, 1, n, t->f) != n)
		return fail(t, ptc_err_io, off, "read: %s", strerror(errno));
	return 0;
}

/* The size a zstd frame's header claims must be the one the index says. */
static int check_claim(struct ptc_trace *t, uint64_t off, const uint8_t *z, size_t zn, size_t n)
{
	unsigned long long fs = ZSTD_getFrameContentSize(z, zn);

	if (fs != n)
		return fail(t, ptc_err_decompress, off, "compressed block claims %llu bytes, index says %zu",
			    fs, n);
	return 0;
}

static int decompress(struct ptc_trace *t, uint64_t off, const uint8_t *z, size_t zn,
		      uint8_t *out, size_t outn)
{
	size_t r;
	int err;

	if ((err = check_claim(t, off, z, zn, outn)) < 0)
		return err;
	r = ZSTD_decompressDCtx(t->dctx, out, outn, z, zn);
	if (ZSTD_isError(r) || r != outn)
		return fail(t, ptc_err_decompress, off, "zstd: %s",
			    ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short block");
	return 0;
}

static int get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v);

/* The most bytes a node, an edge and a code span take in the tables (all
 * versions): LEB128 numbers of at most 10 bytes each, and the byte fields. */
#define MAX_NODE_BYTES 64
#define MAX_EDGE_BYTES 24
#define MAX_SPAN_BYTES 32

/* A zstd frame expanded in steps into a buffer that grows with what the
 * frame yields, not with what its header claims (total, checked against
 * that header): a frame claiming gigabytes that holds little costs little,
 * and the caller can check a head before expanding the rest. */
struct expansion {
	ZSTD_inBuffer in;
	uint8_t *buf;
	size_t len, cap, total;
	size_t ret;		/* ZSTD_decompressStream()'s last answer: 0 at the frame's end */
};

static int expand_start(struct ptc_trace *t, uint64_t off, struct expansion *x, const uint8_t *z, size_t zn,
			size_t total)
{
	int err;

	memset(x, 0, sizeof(*x));
	if ((err = check_claim(t, off, z, zn, total)) < 0)
		return err;
	x->in.src = z;
	x->in.size = zn;
	x->total = total;
	x->ret = 1;
	ZSTD_DCtx_reset(t->dctx, ZSTD_reset_session_only);
	return 0;
}

/* Expand up to want bytes (the whole frame when want is its total, which
 * must then end there). */
static int expand_to(struct ptc_trace *t, uint64_t off, struct expansion *x, size_t want)
{
	for (;;) {
		ZSTD_outBuffer out;
		size_t before = x->len;

		if (x->len == want && (want < x->total || !x->ret))
			return 0;
		if (x->len == x->cap && x->len < want) {
			size_t ncap = x->cap < ((size_t)1 << 20) ? (size_t)1 << 20 : x->cap * 2;
			uint8_t *nb;

			if (ncap > x->total)
				ncap = x->total;
			nb = realloc(x->buf, ncap ? ncap : 1);
			if (!nb)
				return fail(t, ptc_err_nomem, off, "out of memory");
			x->buf = nb;
			x->cap = ncap;
		}
		out.dst = x->buf;
		out.size = x->cap < want ? x->cap : want;
		out.pos = x->len;
		x->ret = ZSTD_decompressStream(t->dctx, &out, &x->in);
		if (ZSTD_isError(x->ret))
			return fail(t, ptc_err_decompress, off, "zstd: %s", ZSTD_getErrorName(x->ret));
		x->len = out.pos;
		if (!x->ret && x->len < x->total)
			return fail(t, ptc_err_decompress, off, "short block: %zu of %zu bytes", x->len, x->total);
		if (x->len == before && (x->in.pos == x->in.size || x->len == x->total))
			return fail(t, ptc_err_decompress, off, x->len == x->total ?
				    "the block holds more than its %zu bytes" : "the block ends after %zu bytes",
				    x->len == x->total ? x->total : x->len);
	}
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* What loading needs of a node besides its struct rnode. */
struct lnode {
	uint64_t start;
	uint32_t first_edge, n_edges;
};

/* Version 1 node and edge tables (ptconv-trace(5)): rows of LEB128
 * numbers, each node with its code length. */
static int parse_tables_v1(struct ptc_trace *t, const uint8_t **qp, const uint8_t *qend,
			   struct lnode *ln, uint64_t *bad_node)
{
	const uint8_t *q = *qp;
	uint64_t start = 0, code_off = 0, edge = 0, v[6], i;

	for (i = 0; i < t->n_nodes; i++) {
		struct rnode *n = &t->nodes[i];
		int k;
		*bad_node = i;
		for (k = 0; k < 6; k++)
			if (get_varint(&q, qend, &v[k]) < 0)
				return -1;
		if (qend - q < 2)
			return -1;
		start += ptc_unzigzag(v[0]);
		ln[i].start = start;
		n->ip = start + ptc_unzigzag(v[1]);
		n->target = v[2] ? n->ip + ptc_unzigzag(v[2] - 1) : 0;
		n->tail.kind = q[0];
		n->tail.length = q[1];
		q += 2;
		if (v[3] > UINT32_MAX || v[4] > t->n_edges - edge || v[5] > t->code_size - code_off)
			return -1;
		n->tail.insns = (uint32_t)v[3];
		ln[i].first_edge = (uint32_t)edge;
		ln[i].n_edges = (uint32_t)v[4];
		edge += v[4];
		if (v[5]) {
			t->ranges[t->n_ranges].start = start;
			t->ranges[t->n_ranges].end = start + v[5];
			t->ranges[t->n_ranges].off = code_off;
			t->n_ranges++;
		}
		code_off += v[5];
	}
	*bad_node = UINT64_MAX;
	if (edge != t->n_edges || code_off != t->code_size)
		return -2;
	for (i = 0; i < t->n_nodes; i++) {
		uint32_t k;
		*bad_node = i;
		for (k = 0; k < ln[i].n_edges; k++) {
			struct redge *e = &t->edges[ln[i].first_edge + k];
			if (get_varint(&q, qend, &v[0]) < 0 || get_varint(&q, qend, &v[1]) < 0)
				return -3;
			e->dest = v[0] ? t->nodes[i].ip + ptc_unzigzag(v[0] - 1) : 0;
			if (!v[1]) {
				e->succ = PTCF_NO_NODE;
			} else {
				uint64_t succ = i + ptc_unzigzag(v[1] - 1);
				if (succ >= t->n_nodes)
					return -3;
				e->succ = (uint32_t)succ;
			}
		}
	}
	*qp = q;
	return 0;
}

/* The nodes' start addresses, as ptcf_start_map_* read them. */
#define LNODE_STARTS(ln) (ln), sizeof(*(ln)), offsetof(struct lnode, start)

/* Version 2 node, edge and code span tables (ptconv-trace(5)): one column
 * per field, fields the code or the kind implies left out, successors that
 * are the first node at the destination left implicit. */
static int parse_tables_v2(struct ptc_trace *t, const uint8_t **qp, const uint8_t *qend,
			   struct lnode *ln, uint64_t n_spans, uint64_t *bad_node)
{
	const uint8_t *q = *qp;
	uint64_t start = 0, edge = 0, v, i, code_off = 0;
	struct ptcf_start_map map = { 0 };
	int err = -1;

	*bad_node = UINT64_MAX;
	for (i = 0; i < t->n_nodes; i++) {
		if (get_varint(&q, qend, &v) < 0)
			return -1;
		start += ptc_unzigzag(v);
		ln[i].start = start;
	}
	for (i = 0; i < t->n_nodes; i++) {
		if (get_varint(&q, qend, &v) < 0)
			return -1;
		t->nodes[i].ip = ln[i].start + ptc_unzigzag(v);
	}
	if ((uint64_t)(qend - q) < t->n_nodes)
		return -1;
	for (i = 0; i < t->n_nodes; i++, q++) {
		t->nodes[i].tail.kind = *q & 7;
		t->nodes[i].tail.length = (*q >> 3) & 15;
		if (*q & 0x80) {
			*bad_node = i;
			return -1;
		}
	}
	for (i = 0; i < t->n_nodes; i++) {
		if (get_varint(&q, qend, &v) < 0 || v > UINT32_MAX)
			return -1;
		t->nodes[i].tail.insns = (uint32_t)v;
	}
	/* taken targets of the direct kinds */
	for (i = 0; i < t->n_nodes; i++) {
		struct rnode *n = &t->nodes[i];
		if (n->tail.kind != PTC_TRACE_COND && !is_direct(n->tail.kind))
			continue;
		if (get_varint(&q, qend, &v) < 0)
			return -1;
		n->target = n->ip + ptc_unzigzag(v);
	}
	/* edge counts: 2 for conditional, 1 for direct, stored for the others */
	for (i = 0; i < t->n_nodes; i++) {
		uint8_t kind = t->nodes[i].tail.kind;
		if (kind == PTC_TRACE_COND)
			v = 2;
		else if (is_direct(kind))
			v = 1;
		else if (get_varint(&q, qend, &v) < 0)
			return -1;
		if (v > t->n_edges - edge) {
			*bad_node = i;
			return -1;
		}
		ln[i].first_edge = (uint32_t)edge;
		ln[i].n_edges = (uint32_t)v;
		edge += v;
	}
	*bad_node = UINT64_MAX;
	if (edge != t->n_edges)
		return -2;
	/* edge destinations: implied, or stored for the indirect kinds */
	for (i = 0; i < t->n_nodes; i++) {
		const struct rnode *n = &t->nodes[i];
		struct redge *e = &t->edges[ln[i].first_edge];
		uint32_t k;
		if (n->tail.kind == PTC_TRACE_COND) {
			e[0].dest = n->ip + n->tail.length;
			e[1].dest = n->target;
		} else if (is_direct(n->tail.kind)) {
			e[0].dest = n->target;
		} else {
			for (k = 0; k < ln[i].n_edges; k++) {
				if (get_varint(&q, qend, &v) < 0)
					return -3;
				e[k].dest = v ? n->ip + ptc_unzigzag(v - 1) : 0;
			}
		}
	}
	if (ptcf_start_map_build(&map, LNODE_STARTS(ln), t->n_nodes) < 0)
		return -4;
	/* successors: 0 the first node starting at the destination (none if
	 * none), 1 none, else zigzag(successor - node) + 2 */
	for (i = 0; i < t->n_nodes; i++) {
		uint32_t k;
		*bad_node = i;
		for (k = 0; k < ln[i].n_edges; k++) {
			struct redge *e = &t->edges[ln[i].first_edge + k];
			if (get_varint(&q, qend, &v) < 0)
				goto out3;
			if (v == 0) {
				e->succ = ptcf_start_map_find(&map, LNODE_STARTS(ln), e->dest);
			} else if (v == 1) {
				e->succ = PTCF_NO_NODE;
			} else {
				uint64_t succ = i + ptc_unzigzag(v - 2);
				if (succ >= t->n_nodes)
					goto out3;
				e->succ = (uint32_t)succ;
			}
		}
	}
	*bad_node = UINT64_MAX;
	/* code spans: zigzag(start - previous span's end), length */
	start = 0;
	for (i = 0; i < n_spans; i++) {
		struct range *r = &t->ranges[i];
		uint64_t len;
		if (get_varint(&q, qend, &v) < 0 || get_varint(&q, qend, &len) < 0 ||
		    len > t->code_size - code_off) {
			err = -5;
			goto out;
		}
		r->start = start + ptc_unzigzag(v);
		r->end = r->start + len;
		r->off = code_off;
		code_off += len;
		start = r->end;
	}
	t->n_ranges = n_spans;
	if (code_off != t->code_size) {
		err = -5;
		goto out;
	}
	*qp = q;
	err = 0;
	goto out;
out3:
	err = -3;
out:
	free(map.slot);
	return err;
}

/* t->hot and t->tag from the nodes and edges (successors as offsets into
 * t->nodes), which it frees.  Conditional nodes are 4-byte aligned only:
 * hnodes are read with memcpy. */
static int build_hot(struct ptc_trace *t, uint64_t off)
{
	uint64_t size = 0, i;
	char *h;

	t->tag = malloc((t->n_nodes + 1) * sizeof(*t->tag));
	if (!t->tag)
		return fail(t, ptc_err_nomem, off, "out of memory");
	for (i = 0; i <= t->n_nodes; i++) {
		const struct rnode *n = &t->nodes[i];
		uint8_t kind = n->tail.kind;
		int cls = i < t->n_nodes && kind == PTC_TRACE_COND ? TAG_COND :
			  i < t->n_nodes && is_direct(kind) ? 0 : TAG_INDIRECT;
		size = (size + 7) & ~(uint64_t)7;
		if (cls == TAG_COND)
			size += 4;
		if (size > UINT32_MAX - 64)
			return fail(t, ptc_err_unsupported, off, "static part: more nodes and edges than this reader handles");
		t->tag[i] = (uint32_t)size | (cls == TAG_INDIRECT ? TAG_INDIRECT : 0);
		size += sizeof(struct hnode) + (cls == TAG_INDIRECT ? (uint64_t)n->succ[1] * sizeof(struct hedge) : 0);
	}
	t->hot = h = aligned_alloc(64, (size + 63) & ~(uint64_t)63);
	if (!h)
		return fail(t, ptc_err_nomem, off, "out of memory");
	memset(h, 0, (size + 63) & ~(uint64_t)63);
	for (i = 0; i <= t->n_nodes; i++) {
		const struct rnode *n = &t->nodes[i];
		char *at = h + (t->tag[i] & ~(uint32_t)TAG_INDIRECT);
		struct hnode hn;
		hn.ip = n->ip;
		hn.target = n->target;
		hn.tail = n->tail;
		if (t->tag[i] & TAG_INDIRECT) {
			uint32_t k;
			for (k = 0; k < n->succ[1]; k++) {
				const struct redge *f = &t->edges[n->succ[0] + k];
				struct hedge e = { f->dest, t->tag[f->succ / sizeof(struct rnode)], 0 };
				memcpy(at + sizeof(hn) + k * sizeof(e), &e, sizeof(e));
			}
			hn.succ[0] = n->succ[1];
			hn.succ[1] = 0;
		} else if (t->tag[i] & TAG_COND) {
			hn.tail.taken = 0;
			hn.succ[0] = t->tag[n->succ[0] / sizeof(struct rnode)];
			hn.succ[1] = t->tag[n->succ[1] / sizeof(struct rnode)];
		} else {
			hn.succ[0] = hn.succ[1] = t->tag[n->succ[0] / sizeof(struct rnode)];
		}
		memcpy(at, &hn, sizeof(hn));
	}
	free(t->nodes);
	free(t->edges);
	t->nodes = NULL;
	t->edges = NULL;
	return 0;
}

/* The symbol table (version 3) of len bytes at p, in the static part at
 * file offset off. */
static int load_syms(struct ptc_trace *t, uint64_t off, const uint8_t *p, uint64_t len)
{
	const uint8_t *q = p, *end = p + len;
	uint64_t n_images = 0, i, v, from = 0, lo = 0, text = 0, k;
	const char **images = NULL;
	int err = 0;

	if (!len)
		return 0;
	t->syms = calloc(t->n_syms + 1, sizeof(*t->syms));
	t->groups = calloc(t->n_syms + 2, sizeof(*t->groups));
	t->syms_text = malloc(len + t->n_syms + 1);	/* each string is shorter than its entry */
	if (!t->syms || !t->groups || !t->syms_text)
		return fail(t, ptc_err_nomem, off, "out of memory");
	if (get_varint(&q, end, &n_images) < 0 || n_images > len)
		goto bad;
	images = calloc(n_images + 1, sizeof(*images));
	if (!images)
		return fail(t, ptc_err_nomem, off, "out of memory");
	for (i = 0; i < n_images; i++) {
		if (get_varint(&q, end, &v) < 0 || v > (uint64_t)(end - q))
			goto bad;
		images[i] = t->syms_text + text;
		memcpy(t->syms_text + text, q, v);
		t->syms_text[text + v] = 0;
		text += v + 1;
		q += v;
	}
	for (i = 0; i < t->n_syms; i++) {
		struct rsym *e = &t->syms[i];
		uint64_t d, size, image, start;

		if (get_varint(&q, end, &d) < 0 || get_varint(&q, end, &v) < 0 ||
		    get_varint(&q, end, &size) < 0 || get_varint(&q, end, &image) < 0 || image > n_images)
			goto bad;
		e->from = from + d;
		e->lo = lo + ptc_unzigzag(v);
		e->hi = e->lo + size + 1;
		if (e->from < from || e->hi <= e->lo)
			goto bad;
		/* sorted by record, then address; of one record, disjoint */
		if (i && (d == 0 ? e->lo < t->syms[i - 1].hi : 0))
			goto bad;
		if (!i || d)
			t->groups[t->n_groups++] = i;
		if (image) {
			if (get_varint(&q, end, &v) < 0)
				goto bad;
			e->image = images[image - 1];
			e->vaddr = e->lo + ptc_unzigzag(v);
		}
		if (get_varint(&q, end, &start) < 0)
			goto bad;
		if (start) {
			e->start = e->lo + ptc_unzigzag(start - 1);
			if (!e->start || get_varint(&q, end, &v) < 0 || v > (uint64_t)(end - q))
				goto bad;
			e->name = t->syms_text + text;
			memcpy(t->syms_text + text, q, v);
			t->syms_text[text + v] = 0;
			text += v + 1;
			q += v;
		}
		from = e->from;
		lo = e->lo;
	}
	if (q != end)
		goto bad;
	t->groups[t->n_groups] = t->n_syms;
	free(images);
	return 0;
bad:
	k = (uint64_t)(q - p);
	err = fail(t, ptc_err_bad_record, off, "static part: the symbol table is inconsistent at its byte %"
		   PRIu64, k);
	free(images);
	return err;
}

static int load_static(struct ptc_trace *t, uint64_t off)
{
	uint8_t h16[16], *s = NULL, *z = NULL, *p;
	uint64_t zn, sn, need, i, n_spans = 0, bad_node = UINT64_MAX;
	uint64_t hs = t->info.version >= 3 ? PTCF_S_HEAD_V3 : PTCF_S_HEAD;
	struct lnode *ln = NULL;
	struct expansion x = { { NULL, 0, 0 }, NULL, 0, 0, 0, 0 };
	int err;

	if ((err = read_at(t, off, h16, 16)) < 0)
		return err;
	zn = ptc_le64(h16);
	sn = ptc_le64(h16 + 8);
	if (zn > t->size - off - 16)
		return fail(t, ptc_err_bad_size, off, "static part of %" PRIu64 " bytes beyond the end", zn);
	/* zstd expands at most ~ 1:32000 */
	if (sn < hs || sn > PTCF_MAX_STATIC_RAW || sn / 40000 > zn + 1)
		return fail(t, ptc_err_bad_size, off + 8, "impossible static size %" PRIu64, sn);
	z = malloc(zn ? zn : 1);
	if (!z) {
		err = fail(t, ptc_err_nomem, off, "out of memory");
		goto out;
	}
	/* The head first: its counts must account for the size before
	 * the rest is expanded (a frame of zeros claiming gigabytes has a
	 * head of zeros). */
	if ((err = read_at(t, off + 16, z, zn)) < 0 ||
	    (err = expand_start(t, off + 16, &x, z, (size_t)zn, (size_t)sn)) < 0 ||
	    (err = expand_to(t, off + 16, &x, (size_t)hs)) < 0)
		goto out;
	s = x.buf;
	t->n_nodes = ptc_le64(s);
	t->n_edges = ptc_le64(s + 8);
	t->n_chunks = ptc_le64(s + 16);
	t->n_gaps = ptc_le64(s + 24);
	t->code_size = ptc_le64(s + 32);
	t->strings_size = ptc_le64(s + 40);
	if (t->info.version >= 2)
		n_spans = ptc_le32(s + 52);
	if (t->info.version >= 3) {
		t->sym_bytes = ptc_le64(s + PTCF_S_SYMBYTES);
		t->n_syms = ptc_le64(s + PTCF_S_SYMS);
	}
	/* (an entry takes at least 5 bytes) */
	if (t->n_nodes > sn || t->n_edges > sn || t->n_chunks > sn || t->n_gaps > sn ||
	    t->code_size > sn || t->strings_size > sn || t->n_nodes > MAX_NODES ||
	    t->n_edges >= PTCF_NO_NODE || t->sym_bytes > sn || t->n_syms > t->sym_bytes / 5)
		goto bad;
	/* The fixed-size tables and blobs after the LEB128 node, edge (and
	 * span) tables must fit; the least a node, an edge and a span take
	 * is 8, 2 and 0 bytes (version 1), 4, 1 and 2 (version 2). */
	need = hs + t->n_chunks * PTCF_CHUNK_SIZE + t->n_gaps * PTCF_GAP_SIZE +
	       t->code_size + t->strings_size + t->sym_bytes;
	if (need > sn || ptc_le32(s + 48) > t->strings_size)
		goto bad;
	if (t->info.version == 1 ? t->n_nodes * 8 + t->n_edges * 2 > sn - need :
	    t->n_nodes * 4 + t->n_edges + n_spans * 2 > sn - need)
		goto bad;
	/* and the most the LEB128 tables can take: no room left over */
	if (sn - need > t->n_nodes * MAX_NODE_BYTES + t->n_edges * MAX_EDGE_BYTES + n_spans * MAX_SPAN_BYTES)
		goto bad;
	/* then the rest, the buffer growing with what the frame yields */
	err = expand_to(t, off + 16, &x, (size_t)sn);
	s = x.buf;
	if (err < 0)
		goto out;
	t->info.branches = ptc_le64(s + 56);
	/* 32-byte aligned nodes: one cache line access each */
	t->nodes = aligned_alloc(64, ((t->n_nodes + 1) * sizeof(*t->nodes) + 63) & ~(size_t)63);
	ln = calloc(t->n_nodes + 1, sizeof(*ln));
	t->edges = calloc(t->n_edges + 1, sizeof(*t->edges));
	t->chunks = calloc(t->n_chunks + 1, sizeof(*t->chunks));
	t->ranges = calloc((t->info.version == 1 ? t->n_nodes : n_spans) + 1, sizeof(*t->ranges));
	t->gaps = malloc(t->n_gaps * PTCF_GAP_SIZE + 1);
	t->code = malloc(t->code_size + 1);
	t->strings = malloc(t->strings_size + 1);
	if (!t->nodes || !ln || !t->edges || !t->chunks || !t->ranges || !t->gaps || !t->code ||
	    !t->strings) {
		err = fail(t, ptc_err_nomem, off, "out of memory");
		goto out;
	}
	memset(t->nodes, 0, (t->n_nodes + 1) * sizeof(*t->nodes));
	{
		const uint8_t *q = s + hs, *qend = s + (sn - (need - hs));
		err = t->info.version == 1 ? parse_tables_v1(t, &q, qend, ln, &bad_node) :
		      parse_tables_v2(t, &q, qend, ln, n_spans, &bad_node);
		if (err == -4) {
			err = fail(t, ptc_err_nomem, off, "out of memory");
			goto out;
		}
		if (err == -1 || (err < 0 && bad_node != UINT64_MAX))
			goto badnode;
		if (err == -2 || err == -5) {
			err = fail(t, ptc_err_bad_record, off, "static part: the nodes' edge%s counts do not add up",
				   err == -5 ? " or code span" : "");
			goto out;
		}
		if (err < 0)
			goto badnode;
		if (q != qend) {
			err = fail(t, ptc_err_bad_record, off, "static part: node and edge tables"
				   " do not end where the chunk index begins");
			goto out;
		}
		p = (uint8_t *)qend;
		t->table_bytes = (uint64_t)(qend - (s + hs));
	}
	for (i = 0; i < t->n_nodes; i++) {
		struct rnode *n = &t->nodes[i];
		uint8_t kind = n->tail.kind;
		if (kind > PTC_TRACE_FAR || (kind == PTC_TRACE_COND && ln[i].n_edges != 2) ||
		    (is_direct(kind) && ln[i].n_edges != 1)) {
			bad_node = i;
			goto badnode;
		}
		n->tail.taken = 1;
		n->tail.flags = 0;
		if (kind == PTC_TRACE_COND || is_direct(kind)) {
			n->succ[0] = node_off(t, t->edges[ln[i].first_edge].succ);
			n->succ[1] = node_off(t, ln[i].n_edges > 1 ? t->edges[ln[i].first_edge + 1].succ :
					      PTCF_NO_NODE);
		} else {
			n->succ[0] = ln[i].first_edge;
			n->succ[1] = ln[i].n_edges;
		}
	}
	/* the sentinel that stands for no node in the hot loop */
	t->nodes[t->n_nodes].tail.kind = 0xff;
	for (i = 0; i < t->n_edges; i++)
		t->edges[i].succ = node_off(t, t->edges[i].succ);
	if ((err = build_hot(t, off)) < 0)
		goto out;
	for (i = 0; i < t->n_chunks; i++, p += PTCF_CHUNK_SIZE) {
		struct rchunk *c = &t->chunks[i];
		c->off = ptc_le64(p);
		c->comp = ptc_le64(p + 8);
		c->first_record = ptc_le64(p + 16);
		c->first_insn = ptc_le64(p + 24);
		c->n_records = ptc_le32(p + 32);
		c->raw = ptc_le32(p + 36);
		if (c->off < PTCF_HEADER_SIZE || c->off > off || c->comp > off - c->off ||
		    c->raw > PTCF_MAX_CHUNK_RAW || c->raw < PTCF_C_HEAD || !c->n_records ||
		    (i && (c->first_record != t->chunks[i - 1].first_record + t->chunks[i - 1].n_records ||
			   c->first_insn < t->chunks[i - 1].first_insn)) ||
		    (!i && (c->first_record || c->first_insn))) {
			err = fail(t, ptc_err_bad_record, off, "static part: chunk index entry %" PRIu64 " is inconsistent", i);
			goto out;
		}
	}
	if (t->n_chunks && t->chunks[t->n_chunks - 1].first_record +
	    t->chunks[t->n_chunks - 1].n_records != t->info.records) {
		err = fail(t, ptc_err_bad_record, off, "chunk index does not add up to %" PRIu64 " records",
			   t->info.records);
		goto out;
	}
	if (!t->n_chunks && t->info.records) {
		err = fail(t, ptc_err_bad_record, off, "no chunks for %" PRIu64 " records", t->info.records);
		goto out;
	}
	if (t->info.tail_insns > t->info.instructions ||
	    (t->n_chunks && t->info.instructions - t->info.tail_insns < t->chunks[t->n_chunks - 1].first_insn)) {
		err = fail(t, ptc_err_bad_record, off, "the header's %" PRIu64 " instructions (%" PRIu64
			   " after the last branch) disagree with the chunk index", t->info.instructions,
			   t->info.tail_insns);
		goto out;
	}
	memcpy(t->gaps, p, t->n_gaps * PTCF_GAP_SIZE);
	for (i = 0; i < t->n_gaps; i++) {
		const uint8_t *g = p + i * PTCF_GAP_SIZE;
		if ((uint64_t)ptc_le32(g + 64) + ptc_le32(g + 68) > t->strings_size) {
			err = fail(t, ptc_err_bad_record, off, "static part: gap %" PRIu64 " detail out of range", i);
			goto out;
		}
	}
	p += t->n_gaps * PTCF_GAP_SIZE;
	memcpy(t->code, p, t->code_size);
	p += t->code_size;
	memcpy(t->strings, p, t->strings_size);
	t->strings[t->strings_size] = 0;
	t->comm = malloc(ptc_le32(s + 48) + 1);
	if (!t->comm) {
		err = fail(t, ptc_err_nomem, off, "out of memory");
		goto out;
	}
	memcpy(t->comm, t->strings, ptc_le32(s + 48));
	t->comm[ptc_le32(s + 48)] = 0;
	p += t->strings_size;
	if ((err = load_syms(t, off, p, t->sym_bytes)) < 0)
		goto out;
	qsort(t->ranges, t->n_ranges, sizeof(*t->ranges), cmp_range);
	t->static_off = off;
	t->static_comp = zn;
	t->static_raw = sn;
	err = 0;
	goto out;
badnode:
	if (bad_node == UINT64_MAX)
		err = fail(t, ptc_err_bad_record, off, "static part: the node tables are inconsistent");
	else
		err = fail(t, ptc_err_bad_record, off, "static part: node %" PRIu64 " or its edges are inconsistent",
			   bad_node);
	goto out;
bad:
	err = fail(t, ptc_err_bad_size, off, "static part: counts do not match its size %" PRIu64, sn);
out:
	free(ln);
	free(z);
	free(x.buf);
	return err;
}

struct ptc_trace *ptc_trace_open_msg(const char *path, int *errp, char *msg, size_t size)
{
	struct ptc_trace *t = calloc(1, sizeof(*t));
	uint8_t h[PTCF_HEADER_SIZE];
	struct stat sb;
	uint64_t static_off;
	int err;

	if (!t) {
		*errp = -ptc_err_nomem;
		return NULL;
	}
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->dctx = ZSTD_createDCtx();
	t->f = fopen(path, "rb");
	if (!t->f) {
		err = fail(t, errno == ENOENT ? ptc_err_not_found : ptc_err_io, 0, "%s", strerror(errno));
		goto bad;
	}
	if (fstat(fileno(t->f), &sb) < 0) {
		err = fail(t, ptc_err_io, 0, "%s", strerror(errno));
		goto bad;
	}
	t->size = (uint64_t)sb.st_size;
	if ((err = read_at(t, 0, h, sizeof(h))) < 0)
		goto bad;
	if (memcmp(h, PTCF_MAGIC, 8)) {
		err = fail(t, ptc_err_bad_magic, 0, "not a ptconv trace (bad magic)");
		goto bad;
	}
	t->info.version = ptc_le32(h + PTCF_H_VERSION);
	if (t->info.version > PTCF_VERSION || t->info.version < 1) {
		err = fail(t, ptc_err_unsupported, PTCF_H_VERSION, "format version %u, this reader knows %u",
			   t->info.version, PTCF_VERSION);
		goto bad;
	}
	if (ptc_le32(h + PTCF_H_HSIZE) != PTCF_HEADER_SIZE) {
		err = fail(t, ptc_err_bad_size, PTCF_H_HSIZE, "header size %u", ptc_le32(h + PTCF_H_HSIZE));
		goto bad;
	}
	if (!(ptc_le32(h + PTCF_H_FLAGS) & PTCF_FLAG_COMPLETE)) {
		err = fail(t, ptc_err_truncated, PTCF_H_FLAGS, "incomplete trace (its writer did not finish)");
		goto bad;
	}
	t->info.pid = ptc_le32(h + PTCF_H_PID);
	t->info.tid = ptc_le32(h + PTCF_H_TID);
	t->info.cpu = (int32_t)ptc_le32(h + PTCF_H_CPU);
	t->info.records = ptc_le64(h + PTCF_H_RECORDS);
	t->info.instructions = ptc_le64(h + PTCF_H_INSNS);
	t->info.tail_insns = ptc_le64(h + PTCF_H_TAIL);
	t->flags = ptc_le32(h + PTCF_H_FLAGS);
	static_off = ptc_le64(h + PTCF_H_STATIC);
	if (static_off < PTCF_HEADER_SIZE || static_off > t->size) {
		err = fail(t, ptc_err_truncated, PTCF_H_STATIC, "a ptconv trace cut short: its static part"
			   " at offset %" PRIu64 " lies outside the %" PRIu64 "-byte file", static_off, t->size);
		goto bad;
	}
	if ((err = load_static(t, static_off)) < 0)
		goto bad;
	t->info.gaps = t->n_gaps;
	t->info.chunks = t->n_chunks;
	t->info.static_branches = t->n_nodes;
	t->info.comm = t->comm;
	if (t->info.branches + t->n_gaps != t->info.records) {
		err = fail(t, ptc_err_bad_record, static_off, "%" PRIu64 " branches + %" PRIu64
			   " gaps != %" PRIu64 " records", t->info.branches, t->n_gaps, t->info.records);
		goto bad;
	}
	t->next_ev = UINT32_MAX;
	*errp = 0;
	return t;
bad:
	*errp = err;
	if (msg && size)
		snprintf(msg, size, "%s", t->msg);
	ptc_trace_close(t);
	return NULL;
}

struct ptc_trace *ptc_trace_open(const char *path, int *err)
{
	return ptc_trace_open_msg(path, err, NULL, 0);
}

void ptc_trace_close(struct ptc_trace *t)
{
	if (!t)
		return;
	if (t->f)
		fclose(t->f);
	ZSTD_freeDCtx(t->dctx);
	free(t->nodes);
	free(t->hot);
	free(t->tag);
	free(t->edges);
	free(t->chunks);
	free(t->gaps);
	free(t->code);
	free(t->strings);
	free(t->ranges);
	free(t->syms);
	free(t->groups);
	free(t->syms_text);
	free(t->comm);
	free(t->raw);
	free(t->comp);
	free(t);
}

int ptc_trace_info(const struct ptc_trace *t, struct ptc_trace_info *info)
{
	*info = t->info;
	return 0;
}

int ptc_trace_layout(const struct ptc_trace *t, struct ptc_trace_layout *layout, size_t size)
{
	struct ptc_trace_layout l;
	uint64_t i;

	if (!t || !layout || size < offsetof(struct ptc_trace_layout, max_chunk_records))
		return -ptc_err_invalid;
	memset(&l, 0, sizeof(l));
	l.file_bytes = t->size;
	l.header_bytes = PTCF_HEADER_SIZE;
	for (i = 0; i < t->n_chunks; i++) {
		l.chunk_bytes += t->chunks[i].comp;
		l.chunk_raw_bytes += t->chunks[i].raw;
		if (t->chunks[i].n_records > l.max_chunk_records)
			l.max_chunk_records = t->chunks[i].n_records;
	}
	l.static_bytes = 16 + t->static_comp;
	l.static_raw_bytes = t->static_raw;
	l.static_head_bytes = t->info.version >= 3 ? PTCF_S_HEAD_V3 : PTCF_S_HEAD;
	l.table_bytes = t->table_bytes;
	l.index_bytes = t->n_chunks * PTCF_CHUNK_SIZE;
	l.gap_table_bytes = t->n_gaps * PTCF_GAP_SIZE;
	l.code_bytes = t->code_size;
	l.string_bytes = t->strings_size;
	l.edges = t->n_edges;
	l.code_ranges = t->n_ranges;
	l.symbol_bytes = t->sym_bytes;
	l.symbols = t->n_syms;
	/* load_static checked that every chunk lies between the header and
	 * the static part, and the static part inside the file; only a
	 * hostile file's chunks overlap */
	l.other_bytes = t->size - (t->static_off + l.static_bytes);
	if (t->static_off - PTCF_HEADER_SIZE > l.chunk_bytes)
		l.other_bytes += t->static_off - PTCF_HEADER_SIZE - l.chunk_bytes;
	memcpy(layout, &l, size < sizeof(l) ? size : sizeof(l));
	return 0;
}

static int get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	int s = 0;

	for (;;) {
		if (p >= end || s > 63)
			return -1;
		r |= (uint64_t)(*p & 0x7f) << s;
		if (!(*p++ & 0x80))
			break;
		s += 7;
	}
	*pp = p;
	*v = r;
	return 0;
}

static int load_chunk(struct ptc_trace *t, uint64_t ci)
{
	struct rchunk *c = &t->chunks[ci];
	uint32_t bl, sl, el;
	uint64_t d;
	int err;

	t->loaded = 0;
	if (c->comp > t->comp_cap) {
		free(t->comp);
		t->comp = malloc(c->comp);
		t->comp_cap = t->comp ? c->comp : 0;
	}
	if (c->raw > t->raw_cap) {
		free(t->raw);
		t->raw = calloc(1, (size_t)c->raw + 8);	/* + padding read by refill_bits */
		t->raw_cap = t->raw ? c->raw : 0;
	}
	if (!t->comp || !t->raw)
		return fail(t, ptc_err_nomem, c->off, "out of memory");
	if ((err = read_at(t, c->off, t->comp, c->comp)) < 0 ||
	    (err = decompress(t, c->off, t->comp, c->comp, t->raw, c->raw)) < 0)
		return err;
	bl = ptc_le32(t->raw + 4);
	sl = ptc_le32(t->raw + 8);
	el = ptc_le32(t->raw + 12);
	if (ptc_le32(t->raw) != c->n_records ||
	    (uint64_t)PTCF_C_HEAD + bl + sl + el != c->raw)
		return fail(t, ptc_err_bad_record, c->off, "chunk %" PRIu64 ": stream sizes do not add up", ci);
	t->bits = t->raw + PTCF_C_HEAD;
	t->n_bits_bytes = bl;
	t->slots = t->bits + bl;
	t->slots_end = t->slots + sl;
	t->ev = t->slots_end;
	t->ev_end = t->ev + el;
	t->rec = 0;
	t->nrec = c->n_records;
	t->bitpos = 0;
	t->bitword = 1;
	t->time = 0;
	t->cur = t->tag[t->n_nodes];
	t->insns_before = c->first_insn;
	t->next_ev = UINT32_MAX;
	if (t->ev < t->ev_end) {
		if (get_varint(&t->ev, t->ev_end, &d) < 0 || d >= t->nrec)
			return fail(t, ptc_err_bad_record, c->off, "chunk %" PRIu64 ": bad event list", ci);
		t->next_ev = (uint32_t)d;
	}
	t->chunk = ci;
	t->loaded = 1;
	return 0;
}

/* After the events of record t->rec, read from *ev: the index of the next
 * record with events into *next (UINT32_MAX: none); -1 if malformed. */
static int next_event(const struct ptc_trace *t, const uint8_t **ev, uint32_t *next)
{
	uint64_t d;

	if (*ev == t->ev_end) {
		*next = UINT32_MAX;
		return 0;
	}
	if (get_varint(ev, t->ev_end, &d) < 0 || d > t->nrec - t->rec)
		return -1;
	*next = t->rec + (uint32_t)d;
	return 0;
}

/* Apply the events of record t->rec; may produce a gap record in *gap_out. */
static int do_events(struct ptc_trace *t, struct ptc_trace_record *out, int *is_gap, uint8_t *flags,
		     int *taken)
{
	const uint64_t coff = t->chunks[t->chunk].off;
	uint64_t v;

	while (t->next_ev == t->rec) {
		uint8_t type;
		if (t->ev >= t->ev_end)
			goto bad;
		type = *t->ev++;
		switch (type) {
		case PTCF_EV_NODE:
			if (get_varint(&t->ev, t->ev_end, &v) < 0 || v >= t->n_nodes)
				goto bad;
			t->cur = t->tag[v];
			break;
		case PTCF_EV_TIME:
			if (get_varint(&t->ev, t->ev_end, &v) < 0)
				goto bad;
			t->time += ptc_unzigzag(v);
			break;
		case PTCF_EV_FLAGS:
			if (t->ev >= t->ev_end)
				goto bad;
			*flags = *t->ev++;
			break;
		case PTCF_EV_TAKEN:
			if (t->ev >= t->ev_end)
				goto bad;
			*taken = *t->ev++;
			break;
		case PTCF_EV_GAP: {
			const uint8_t *g;
			if (get_varint(&t->ev, t->ev_end, &v) < 0 || v >= t->n_gaps)
				goto bad;
			g = t->gaps + v * PTCF_GAP_SIZE;
			memset(out, 0, sizeof(*out));
			out->kind = PTC_TRACE_GAP;
			out->taken = g[0];
			out->ip = ptc_le64(g + 32);
			out->target = ptc_le64(g + 40);
			out->time = ptc_le64(g + 24);
			out->insns = (uint32_t)v;
			*is_gap = 1;
			t->cur = t->tag[t->n_nodes];
			break;
		}
		default:
			goto bad;
		}
		if (next_event(t, &t->ev, &t->next_ev) < 0)
			goto bad;
	}
	return 0;
bad:
	return fail(t, ptc_err_bad_record, coff, "chunk %" PRIu64 ": bad event for record %u",
		    t->chunk, t->rec);
}

/* The next up to 56 taken bits into the word: the bits from bit 0 up, a 1
 * above them, so that a word equal to 1 is empty.  Reads 8 bytes at the
 * word's first byte, which may run over the bits into the chunk's other
 * streams and its 8 bytes of padding (load_chunk), never beyond; only the
 * bits inside the stream are used.  Returns the word, or 1 and *err when
 * there are no bits left. */
static uint64_t refill_bits(struct ptc_trace *t, int *err)
{
	const uint64_t nbits = (uint64_t)t->n_bits_bytes * 8;
	uint64_t avail, w;

	if (t->bitpos >= nbits) {
		*err = fail(t, ptc_err_bad_record, t->chunks[t->chunk].off,
			    "chunk %" PRIu64 ": taken bits exhausted", t->chunk);
		return 1;
	}
	avail = nbits - t->bitpos < 56 ? nbits - t->bitpos : 56;
	w = (ptc_le64(t->bits + t->bitpos / 8) & ((1ull << avail) - 1)) | 1ull << avail;
	t->bitpos += avail;
	return w;
}

/* Why an indirect node's slot could not be used: the error of record rec,
 * whose slot is v (have_v) or could not be read. */
static int slot_error(struct ptc_trace *t, uint64_t cur, int have_v, uint64_t v, uint32_t rec)
{
	uint32_t count;

	if (cur == t->tag[t->n_nodes])
		return fail(t, ptc_err_bad_record, t->chunks[t->chunk].off,
			    "chunk %" PRIu64 ": record %u has no node", t->chunk, rec);
	if (!have_v)
		return fail(t, ptc_err_bad_record, t->chunks[t->chunk].off,
			    "chunk %" PRIu64 ": target slots exhausted", t->chunk);
	memcpy(&count, t->hot + cur - TAG_INDIRECT, sizeof(count));
	return fail(t, ptc_err_bad_record, t->chunks[t->chunk].off,
		    "chunk %" PRIu64 ": record %u: slot %" PRIu64 " of %u", t->chunk, rec, v, count);
}

/* Apply the events of record t->rec when they are all time changes (the
 * common event) and return 1; else 0, leaving the rest to do_events (which
 * also reports a malformed event). */
static int time_events(struct ptc_trace *t)
{
	while (t->next_ev == t->rec) {
		const uint8_t *ev = t->ev;
		uint64_t v;
		uint32_t next;
		if (ev >= t->ev_end || *ev != PTCF_EV_TIME)
			return 0;
		ev++;
		if (get_varint(&ev, t->ev_end, &v) < 0 || next_event(t, &ev, &next) < 0)
			return 0;
		t->time += ptc_unzigzag(v);
		t->ev = ev;
		t->next_ev = next;
	}
	return 1;
}

/* Expand the records [t->rec, t->rec + (seg - r)), which have no events,
 * into r..seg; returns where it stopped (seg unless *err).  This is the hot
 * loop: state lives in locals (the output records could otherwise alias
 * it) and every input byte is bounds-checked.  It is a function of its own
 * so that the compiler keeps that state in registers.
 *
 * Each record is one step along the chain of tags (see struct hnode): the
 * next tag is one load away from the current one, of the successor the
 * taken bit picks, or of the edge the slot picks.  Conditional and direct
 * nodes share one branch-free path, so that the CPU need not predict
 * their order; the taken bits come from a register word refilled every 56
 * conditionals. */
static __attribute__((noinline)) struct ptc_trace_record *
run(struct ptc_trace *t, struct ptc_trace_record *r, struct ptc_trace_record *seg, int *err)
{
	const char *hot = t->hot;
	const uint8_t *sp = t->slots, *send = t->slots_end;
	uint64_t w = t->bitword, time = t->time, insns = t->insns_before, cur = t->cur;
	struct ptc_trace_record *const first = r;

	while (r != seg) {
		const char *nd, *hb;
		uint64_t tail, v, b;
		uint32_t count;

		if (!(cur & TAG_INDIRECT)) {
			nd = hot + cur;
			if (__builtin_expect(w == 1, 0) && (cur & TAG_COND) && (w = refill_bits(t, err)) == 1)
				break;
			b = w & 1;
			/* keep hot + bit off the chain from cur to cur */
			hb = hot + b * 4;
			__asm__("" : "+r"(hb));
			memcpy(r, nd + offsetof(struct hnode, ip), 16);
			memcpy(&tail, nd + offsetof(struct hnode, tail), 8);
			/* a conditional's taken is 0, a direct node's 1 */
			tail |= b << 40;
			w >>= (cur >> 2) & 1;
			cur = *(const uint32_t *)(hb + cur);
		} else {
			nd = hot + cur - TAG_INDIRECT;
			if (__builtin_expect(sp < send && *sp < 0x80, 1)) {
				v = *sp++;
			} else if (get_varint(&sp, send, &v) < 0) {
				*err = slot_error(t, cur, 0, 0, t->rec + (uint32_t)(r - first));
				break;
			}
			memcpy(&count, nd, 4);
			if (__builtin_expect(v >= count, 0)) {
				*err = slot_error(t, cur, 1, v, t->rec + (uint32_t)(r - first));
				break;
			}
			memcpy(&r->ip, nd + offsetof(struct hnode, ip), 8);
			memcpy(&tail, nd + offsetof(struct hnode, tail), 8);
			hb = hot + v * sizeof(struct hedge);
			__asm__("" : "+r"(hb));
			memcpy(&r->target, hb + cur - TAG_INDIRECT + sizeof(struct hnode), 8);
			cur = *(const uint32_t *)(hb + cur - TAG_INDIRECT + sizeof(struct hnode) +
						  offsetof(struct hedge, succ));
		}
		r->time = time;
		/* two 8-byte stores: the compiler would otherwise build a
		 * 16-byte one of time and tail through the stack */
		__asm__("" ::: "memory");
		memcpy((char *)r + TAIL_OFF, &tail, 8);
		insns += (uint32_t)tail;
		r++;
	}
	t->bitword = w;
	t->slots = sp;
	t->cur = (uint32_t)cur;
	t->insns_before = insns;
	t->rec += (uint32_t)(r - first);
	return r;
}

/* Expand up to n records from t->rec on into out, stopping at the chunk's
 * end and before a record with events other than time changes. */
static int expand(struct ptc_trace *t, struct ptc_trace_record *out, uint32_t n)
{
	struct ptc_trace_record *r = out, *end = out + n;
	int err = 0;

	while (r != end) {
		uint32_t left = (t->next_ev < t->nrec ? t->next_ev : t->nrec) - t->rec;
		if (!left) {
			/* at the chunk's end, or at a record with events */
			if (t->rec == t->nrec || !time_events(t))
				break;
			continue;
		}
		r = run(t, r, (uint64_t)(end - r) < left ? end : r + left, &err);
		if (err < 0)
			return err;
	}
	return (int)(r - out);
}

int ptc_trace_read(struct ptc_trace *t, struct ptc_trace_record *rec, size_t n)
{
	size_t k = 0;
	int err;

	if (n > INT32_MAX)
		n = INT32_MAX;
	while (k < n) {
		struct ptc_trace_record *r;

		if (!t->loaded || t->rec == t->nrec) {
			uint64_t next = t->loaded ? t->chunk + 1 : t->chunk;
			/* read straight through a chunk: its records' instructions
			 * end where the index (or the header) says the next begin */
			uint64_t want = next < t->n_chunks ? t->chunks[next].first_insn
				      : t->info.instructions - t->info.tail_insns;
			if (t->loaded && t->insns_before != want)
				return fail(t, ptc_err_bad_record, t->chunks[t->chunk].off,
					    "chunk %" PRIu64 ": its records end at instruction %" PRIu64 ", but %s "
					    "says %" PRIu64, t->chunk, t->insns_before,
					    next < t->n_chunks ? "the chunk index" : "the header", want);
			if (next >= t->n_chunks) {
				t->loaded = 0;
				t->chunk = t->n_chunks;
				break;
			}
			if ((err = load_chunk(t, next)) < 0)
				return err;
		}
		r = &rec[k];
		if (t->rec == t->next_ev) {
			/* A record with events: the slow path, one record. */
			int is_gap = 0, taken = -1;
			uint8_t flags = 0;
			if ((err = do_events(t, r, &is_gap, &flags, &taken)) < 0)
				return err;
			if (is_gap) {
				t->rec++;
				k++;
				continue;
			}
			if ((err = expand(t, r, 1)) < 0)
				return err;
			r->flags = flags;
			if (taken >= 0)
				r->taken = (uint8_t)taken;
			k++;
			continue;
		}
		/* Records up to the next event other than a time change (or
		 * the chunk's end, or n). */
		if ((err = expand(t, r, (uint32_t)(n - k))) < 0)
			return err;
		k += (size_t)err;
	}
	return (int)k;
}

int ptc_trace_seek_record(struct ptc_trace *t, uint64_t index)
{
	uint64_t lo = 0, hi = t->n_chunks, left;
	struct ptc_trace_record buf[256];
	int err;

	if (index >= t->info.records) {
		t->loaded = 0;
		t->chunk = t->n_chunks;
		return index == t->info.records ? 0 : -ptc_err_eos;
	}
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;
		if (t->chunks[mid].first_record <= index)
			lo = mid;
		else
			hi = mid;
	}
	if ((err = load_chunk(t, lo)) < 0)
		return err;
	left = index - t->chunks[lo].first_record;
	while (left) {
		size_t n = left < 256 ? left : 256;
		int got = ptc_trace_read(t, buf, n);
		if (got < 0)
			return got;
		if (got == 0)
			return -ptc_err_eos;
		left -= got;
	}
	return 0;
}

int ptc_trace_seek_insn(struct ptc_trace *t, uint64_t insn, uint32_t *before)
{
	uint64_t lo = 0, hi = t->n_chunks;
	struct ptc_trace_record r;
	int err;

	if (insn >= t->info.instructions - t->info.tail_insns)
		return -ptc_err_eos;
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;
		if (t->chunks[mid].first_insn <= insn)
			lo = mid;
		else
			hi = mid;
	}
	/* Chunks may start with gap records (no instructions): step back
	 * over chunks that begin at the same instruction number. */
	while (lo && t->chunks[lo].first_insn == insn && t->chunks[lo - 1].first_insn == insn)
		lo--;
	if ((err = load_chunk(t, lo)) < 0)
		return err;
	for (;;) {
		uint64_t at = t->insns_before;
		uint64_t idx = t->chunks[t->chunk].first_record + t->rec;
		if (!t->loaded || t->rec == t->nrec)
			idx = t->chunk + 1 < t->n_chunks ? t->chunks[t->chunk + 1].first_record : t->info.records;
		err = ptc_trace_read(t, &r, 1);
		if (err < 0)
			return err;
		if (err == 0)
			return -ptc_err_eos;
		if (r.kind != PTC_TRACE_GAP && at + r.insns > insn) {
			*before = (uint32_t)(insn - at);
			return ptc_trace_seek_record(t, idx);
		}
	}
}

uint64_t ptc_trace_tell(const struct ptc_trace *t, uint64_t *insns_before)
{
	uint64_t idx;

	if (!t->loaded) {
		if (t->chunk >= t->n_chunks) {
			if (insns_before)
				*insns_before = t->info.instructions - t->info.tail_insns;
			return t->info.records;
		}
		if (insns_before)
			*insns_before = t->n_chunks ? t->chunks[t->chunk].first_insn : 0;
		return t->n_chunks ? t->chunks[t->chunk].first_record : 0;
	}
	idx = t->chunks[t->chunk].first_record + t->rec;
	if (insns_before)
		*insns_before = t->insns_before;
	return idx;
}

int ptc_trace_gap(const struct ptc_trace *t, uint64_t index, struct ptc_trace_gap *gap)
{
	const uint8_t *g;

	if (index >= t->n_gaps)
		return -ptc_err_invalid;
	g = t->gaps + index * PTCF_GAP_SIZE;
	gap->cause = g[0];
	gap->aux_offset = ptc_le64(g + 8);
	gap->resume_offset = ptc_le64(g + 16);
	gap->time = ptc_le64(g + 24);
	gap->ip = ptc_le64(g + 32);
	gap->resume_ip = ptc_le64(g + 40);
	gap->lost_branches = ptc_le64(g + 48);
	gap->lost_bytes = ptc_le64(g + 56);
	/* Details are stored back to back without NULs: point at a copy. */
	gap->detail = "";
	if (ptc_le32(g + 68)) {
		static __thread char d[1024];
		uint32_t len = ptc_le32(g + 68);
		if (len >= sizeof(d))
			len = sizeof(d) - 1;
		memcpy(d, t->strings + ptc_le32(g + 64), len);
		d[len] = 0;
		gap->detail = d;
	}
	return 0;
}

size_t ptc_trace_code(const struct ptc_trace *t, uint64_t ip, uint8_t *buf, size_t n)
{
	uint64_t lo = 0, hi = t->n_ranges, best = UINT64_MAX, i;
	size_t got = 0;

	/* Last range starting at or before ip; ranges may overlap, so also
	 * look back a little for one that covers ip further. */
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;
		if (t->ranges[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0 && lo - i <= 64;) {
		const struct range *r = &t->ranges[i];
		if (r->end > ip) {
			size_t avail = (size_t)(r->end - ip);
			if (avail > got) {
				got = avail;
				best = i;
			}
			if (got >= n)
				break;
		}
	}
	if (best == UINT64_MAX)
		return 0;
	if (got > n)
		got = n;
	memcpy(buf, t->code + t->ranges[best].off + (ip - t->ranges[best].start), got);
	return got;
}

uint32_t ptc_trace_flags(const struct ptc_trace *t)
{
	return t->flags & ~(uint32_t)PTCF_FLAG_COMPLETE;
}

int ptc_trace_symbol(const struct ptc_trace *t, uint64_t record, uint64_t addr, struct ptc_trace_symbol *sym)
{
	uint64_t g;

	memset(sym, 0, sizeof(*sym));
	/* the latest entries first: a range met later holds over earlier ones */
	for (g = t->n_groups; g-- > 0;) {
		uint64_t lo = t->groups[g], hi = t->groups[g + 1];
		const struct rsym *e;

		if (t->syms[lo].from > record)
			continue;
		/* the last entry starting at or below addr */
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2;
			if (t->syms[mid].lo <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == t->groups[g])
			continue;
		e = &t->syms[lo - 1];
		if (addr >= e->hi)
			continue;
		sym->start = e->start;
		sym->lo = e->lo;
		sym->hi = e->hi;
		sym->name = e->name;
		sym->image = e->image;
		sym->vaddr = e->image ? e->vaddr + (addr - e->lo) : 0;
		return 1;
	}
	return 0;
}

uint64_t ptc_trace_symbols_change(const struct ptc_trace *t, uint64_t record)
{
	uint64_t g;

	for (g = 0; g < t->n_groups; g++)
		if (t->syms[t->groups[g]].from > record)
			return t->syms[t->groups[g]].from;
	return UINT64_MAX;
}
