/* CBP2025 traces (-f cbp2025): see ptconv-cbp2025(5).
 *
 * One variable-length record per instruction, gzip'd.  x86 instructions are
 * mapped to the AArch64-minded classes and register numbers of the format;
 * what Intel PT does not record (effective addresses, register values) is
 * written as 0.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "writers/fmt.h"
#include "writers/insn.h"
#include "writers/wutil.h"

enum {
	C_ALU = 0, C_LOAD = 1, C_STORE = 2, C_COND = 3, C_UNCOND_DIRECT = 4,
	C_UNCOND_INDIRECT = 5, C_FP = 6, C_SLOW_ALU = 7, C_UNDEF = 8,
	C_CALL_DIRECT = 9, C_CALL_INDIRECT = 10, C_RETURN = 11,
};

enum { R_SP = 31, R_SIMD = 32, R_FLAGS = 64, R_NONE = 255 };
#define MAX_IN 3
#define MAX_OUT 3

struct cbp {
	struct ptc_wctx *c;
	struct ptc_wparts parts;	/* one file per gap-free run */
	struct ptc_walker walk;
};

/* x86 register -> CBP2025 register, R_NONE when it has no counterpart
 * (segment, x87, mask registers). */
static uint8_t cbp_reg(ZydisRegister r)
{
	static const uint8_t gpr[16] = { 0, 1, 2, 3, R_SP, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };

	if (r >= ZYDIS_REGISTER_RAX && r <= ZYDIS_REGISTER_R15)
		return gpr[r - ZYDIS_REGISTER_RAX];
	if (r == ZYDIS_REGISTER_RFLAGS)
		return R_FLAGS;
	if (r >= ZYDIS_REGISTER_ZMM0 && r <= ZYDIS_REGISTER_ZMM31)
		return (uint8_t)(R_SIMD + (r - ZYDIS_REGISTER_ZMM0));
	return R_NONE;
}

static int is_fp(const ZydisDecodedInstruction *zi)
{
	switch (zi->meta.isa_set) {
	case ZYDIS_ISA_SET_X87:
	case ZYDIS_ISA_SET_SSE:
	case ZYDIS_ISA_SET_SSE2:
	case ZYDIS_ISA_SET_SSE3:
	case ZYDIS_ISA_SET_SSE4:
	case ZYDIS_ISA_SET_SSSE3:
	case ZYDIS_ISA_SET_AVX:
	case ZYDIS_ISA_SET_AVX2:
	case ZYDIS_ISA_SET_FMA:
		return 1;
	default:
		return zi->meta.category == ZYDIS_CATEGORY_X87_ALU ||
		       zi->meta.category == ZYDIS_CATEGORY_SSE ||
		       zi->meta.category == ZYDIS_CATEGORY_AVX ||
		       zi->meta.category == ZYDIS_CATEGORY_AVX2 ||
		       zi->meta.category == ZYDIS_CATEGORY_AVX512 ||
		       zi->meta.category == ZYDIS_CATEGORY_FMA4;
	}
}

static int is_slow(ZydisMnemonic m)
{
	return m == ZYDIS_MNEMONIC_MUL || m == ZYDIS_MNEMONIC_IMUL || m == ZYDIS_MNEMONIC_DIV ||
	       m == ZYDIS_MNEMONIC_IDIV || m == ZYDIS_MNEMONIC_MULX;
}

static void add(uint8_t *set, uint8_t *n, int max, uint8_t reg)
{
	int i;

	if (reg == R_NONE)
		return;
	for (i = 0; i < *n; i++)
		if (set[i] == reg)
			return;
	if (*n < max)
		set[(*n)++] = reg;
}

#define MAX_REC (8 + 1 + 8 + 3 + 1 + 8 + 1 + MAX_IN + 1 + MAX_OUT + 16 * MAX_OUT)

/* Write the record of in (b: the branch event, or NULL) to rec; its length. */
static size_t cbp_record(const struct ptc_insn *in, const struct ptc_branch *b, uint8_t *rec)
{
	const struct ptc_insn_regs *r = &in->regs;
	uint8_t ins[MAX_IN], outs[MAX_OUT], nin = 0, nout = 0, cls;
	size_t n = 0;
	int i;

	for (i = 0; i < r->nrd; i++)
		add(ins, &nin, MAX_IN, cbp_reg(r->rd[i]));
	for (i = 0; i < r->nwr; i++)
		add(outs, &nout, MAX_OUT, cbp_reg(r->wr[i]));
	if (b && b->kind != PTC_BR_FAR) {
		static const uint8_t map[] = { C_UNCOND_DIRECT, C_UNCOND_INDIRECT, C_CALL_DIRECT,
					       C_CALL_INDIRECT, C_RETURN, C_COND };
		cls = map[b->kind];
	} else if (!in->decoded) {
		cls = C_UNDEF;
	} else if (r->mem_write) {
		cls = C_STORE;
	} else if (r->mem_read && nout) {
		cls = C_LOAD;	/* a load needs an output register */
	} else if (is_fp(&in->zi)) {
		cls = C_FP;
	} else if (is_slow(in->zi.mnemonic)) {
		cls = C_SLOW_ALU;
	} else {
		cls = C_ALU;
	}
	ptc_put64(rec, in->ip);
	rec[8] = cls;
	n = 9;
	if (cls == C_LOAD || cls == C_STORE) {
		ptc_put64(rec + n, 0);		/* effective address: not traced */
		rec[n + 8] = (uint8_t)(r->mem_size ? r->mem_size : 8);
		rec[n + 9] = 0;			/* base update: x86 has none */
		n += 10;
		if (cls == C_STORE)
			rec[n++] = (uint8_t)r->mem_index;
	}
	if (cls == C_COND || cls == C_UNCOND_DIRECT || cls == C_UNCOND_INDIRECT ||
	    cls == C_CALL_DIRECT || cls == C_CALL_INDIRECT || cls == C_RETURN) {
		uint8_t taken = cls == C_COND ? b->taken : 1;
		rec[n++] = taken;
		if (taken) {
			ptc_put64(rec + n, b->target);
			n += 8;
		}
	}
	rec[n++] = nin;
	memcpy(rec + n, ins, nin);
	n += nin;
	rec[n++] = nout;
	memcpy(rec + n, outs, nout);
	n += nout;
	for (i = 0; i < nout; i++) {
		size_t v = outs[i] >= R_SIMD && outs[i] < R_FLAGS ? 16 : 8;
		memset(rec + n, 0, v);	/* values: not traced */
		n += v;
	}
	return n;
}

static int cbp_emit(void *ctx, const void *p, size_t n)
{
	struct cbp *w = ctx;

	return ptc_wparts_write(&w->parts, p, n);
}

static size_t cbp_tmpl_rec(void *ctx, const struct ptc_insn *in, uint8_t *out)
{
	(void)ctx;
	return cbp_record(in, NULL, out);
}

static const struct ptc_walk_tmpl cbp_tmpl = { MAX_REC, cbp_tmpl_rec, cbp_emit };

static int cbp_insn(void *ctx, const struct ptc_insn *in, const struct ptc_branch *b)
{
	uint8_t rec[MAX_REC];

	return cbp_emit(ctx, rec, cbp_record(in, b, rec));
}

static int cbp_branches(void *st, const struct ptc_branch *b, size_t n)
{
	struct cbp *w = st;
	size_t i;
	int err;

	if (n && (err = ptc_wparts_want(&w->parts)) < 0)
		return err;
	for (i = 0; i < n; i++)
		if ((err = ptc_walk_branch_tmpl(&w->walk, &b[i], &cbp_tmpl, cbp_insn, w)) < 0)
			return err;
	return 0;
}

/* The instructions after the last branch, one record each. */
static int cbp_tail(void *st, uint64_t insns)
{
	struct cbp *w = st;
	int err;

	if ((err = ptc_wparts_want(&w->parts)) < 0)
		return err;
	return ptc_walk_tail(&w->walk, insns, cbp_insn, w);
}

/* The simulator takes a record's successor from the next record, so a
 * loss ends the file: the records from where decoding resumed go to the
 * next part (ptconv-formats(5)). */
static int cbp_gap(void *st, const struct ptc_gap *g)
{
	struct cbp *w = st;

	ptc_walk_gap(&w->walk, g);
	return ptc_wparts_gap(&w->parts, g);
}

static int cbp_finish(void *st)
{
	struct cbp *w = st;

	return ptc_wparts_close(&w->parts);
}

/* Idle (ptc_writer_pool): the stream is finished and its file closed,
 * the block templates go; both come back with the next records. */
static int cbp_suspend(void *st)
{
	struct cbp *w = st;

	ptc_walker_trim(&w->walk);
	return ptc_wparts_suspend(&w->parts);
}

static void cbp_free(void *st)
{
	struct cbp *w = st;

	ptc_wparts_free(&w->parts);
	ptc_walker_fini(&w->walk);
	free(w);
}

static int cbp_open(void **st, const struct ptc_writer_config *cfg,
		    const struct ptc_thread_info *t, struct ptc_wctx *c)
{
	struct cbp *w;
	int err;

	if (!cfg->code)
		return ptc_wfail(c, ptc_err_invalid, "cbp2025: needs the code bytes");
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ptc_err_nomem;
	w->c = c;
	ptc_walker_init(&w->walk, cfg, c);
	ptc_wparts_init(&w->parts, cfg, t, c, "cbp2025.gz");
	w->parts.zkind = PTC_Z_GZIP;
	w->parts.level = cfg->level;
	w->parts.threads = cfg->threads > 0 ? cfg->threads : 1;
	if ((err = ptc_wparts_open(&w->parts)) < 0) {
		ptc_walker_fini(&w->walk);
		free(w);
		return err;
	}
	*st = w;
	return 0;
}

const struct ptc_fmt_ops ptc_fmt_cbp2025 = {
	{ "cbp2025", "CBP2025 per-instruction records (.cbp2025.gz)", 1 },
	cbp_open, cbp_branches, cbp_gap, cbp_finish, cbp_free, cbp_suspend, cbp_tail,
	NULL,	/* paths: each record by itself */
};
