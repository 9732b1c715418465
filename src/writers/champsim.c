/* ChampSim input_instr traces (-f champsim): see ptconv-champsim(5).
 *
 * Every instruction becomes one 64-byte record.  ChampSim infers a branch's
 * type from its registers (IP 26, SP 6, FLAGS 25), so branches get exactly
 * the patterns its classifier expects; other instructions get their real
 * registers from Zydis, renumbered so that none writes IP (26), hence none
 * is taken for a branch.  Memory fields stay 0: Intel PT has no data
 * addresses.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "writers/fmt.h"
#include "writers/insn.h"
#include "writers/wutil.h"

enum { CS_SP = 6, CS_FLAGS = 25, CS_IP = 26, CS_OTHER = 100 };

struct champsim {
	struct ptc_wctx *c;
	struct ptc_wparts parts;	/* one file per gap-free run */
	struct ptc_walker walk;
};

/* x86 register -> ChampSim register number, never 0 or 26; 6 only for
 * the stack pointer and 25 only for the flags. */
static uint8_t cs_reg(ZydisRegister r)
{
	static const uint8_t gpr[16] = { 1, 2, 3, 4, CS_SP, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

	if (r >= ZYDIS_REGISTER_RAX && r <= ZYDIS_REGISTER_R15)
		return gpr[r - ZYDIS_REGISTER_RAX];
	if (r == ZYDIS_REGISTER_RFLAGS)
		return CS_FLAGS;
	if (r >= ZYDIS_REGISTER_ZMM0 && r <= ZYDIS_REGISTER_ZMM31)
		return (uint8_t)(32 + (r - ZYDIS_REGISTER_ZMM0));
	if (r >= ZYDIS_REGISTER_ST0 && r <= ZYDIS_REGISTER_ST7)
		return (uint8_t)(64 + (r - ZYDIS_REGISTER_ST0));
	if (r >= ZYDIS_REGISTER_MM0 && r <= ZYDIS_REGISTER_MM7)
		return (uint8_t)(72 + (r - ZYDIS_REGISTER_MM0));
	if (r >= ZYDIS_REGISTER_K0 && r <= ZYDIS_REGISTER_K7)
		return (uint8_t)(80 + (r - ZYDIS_REGISTER_K0));
	if (r >= ZYDIS_REGISTER_ES && r <= ZYDIS_REGISTER_GS)
		return (uint8_t)(88 + (r - ZYDIS_REGISTER_ES));
	return CS_OTHER;
}

static void put_reg(uint8_t *set, int max, uint8_t reg)
{
	int i;

	for (i = 0; i < max; i++) {
		if (set[i] == reg)
			return;
		if (!set[i]) {
			set[i] = reg;
			return;
		}
	}
}

/* The register an indirect branch takes its target from, never SP, FLAGS
 * or IP (ChampSim would then classify it as another branch type). */
static uint8_t target_reg(const struct ptc_insn *in)
{
	uint8_t r = 0;

	if (in->decoded && in->zi.operand_count_visible) {
		const ZydisDecodedOperand *op = &in->ops[0];
		ZydisRegister x = op->type == ZYDIS_OPERAND_TYPE_REGISTER ? op->reg.value :
				  op->type == ZYDIS_OPERAND_TYPE_MEMORY ?
				  (op->mem.base != ZYDIS_REGISTER_NONE && op->mem.base != ZYDIS_REGISTER_RIP ?
				   op->mem.base : op->mem.index) : ZYDIS_REGISTER_NONE;
		if (x != ZYDIS_REGISTER_NONE)
			r = cs_reg(ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, x));
	}
	return r && r != CS_SP && r != CS_FLAGS && r != CS_IP ? r : CS_OTHER;
}

/* Write the 64-byte record of in (b: the branch event, or NULL) to rec. */
static void cs_record(const struct ptc_insn *in, const struct ptc_branch *b, uint8_t *rec)
{
	uint8_t *dst = rec + 10, *src = rec + 12;
	int i;

	memset(rec, 0, 64);
	ptc_put64(rec, in->ip);
	if (b && b->kind != PTC_BR_FAR) {
		rec[8] = 1;
		rec[9] = b->kind == PTC_BR_COND ? b->taken : 1;
		switch (b->kind) {
		case PTC_BR_COND:
			dst[0] = CS_IP;
			src[0] = CS_IP;
			src[1] = CS_FLAGS;
			break;
		case PTC_BR_JMP:
			dst[0] = CS_IP;
			break;
		case PTC_BR_JMP_IND:
			dst[0] = CS_IP;
			src[0] = target_reg(in);
			break;
		case PTC_BR_CALL:
			dst[0] = CS_IP;
			dst[1] = CS_SP;
			src[0] = CS_IP;
			src[1] = CS_SP;
			break;
		case PTC_BR_CALL_IND:
			dst[0] = CS_IP;
			dst[1] = CS_SP;
			src[0] = CS_IP;
			src[1] = CS_SP;
			src[2] = target_reg(in);
			break;
		case PTC_BR_RET:
			dst[0] = CS_IP;
			dst[1] = CS_SP;
			src[0] = CS_SP;
			break;
		}
	} else {
		/* Non-branches, and far transfers (syscall): user mode goes on
		 * at the next instruction, so they are written as non-branches. */
		const struct ptc_insn_regs *r = &in->regs;
		for (i = 0; i < r->nwr; i++)
			put_reg(dst, 2, cs_reg(r->wr[i]));
		for (i = 0; i < r->nrd; i++)
			put_reg(src, 4, cs_reg(r->rd[i]));
	}
}

static int cs_emit(void *ctx, const void *p, size_t n)
{
	struct champsim *w = ctx;

	return ptc_wparts_write(&w->parts, p, n);
}

static size_t cs_tmpl_rec(void *ctx, const struct ptc_insn *in, uint8_t *out)
{
	(void)ctx;
	cs_record(in, NULL, out);
	return 64;
}

static const struct ptc_walk_tmpl cs_tmpl = { 64, cs_tmpl_rec, cs_emit };

static int cs_insn(void *ctx, const struct ptc_insn *in, const struct ptc_branch *b)
{
	uint8_t rec[64];

	cs_record(in, b, rec);
	return cs_emit(ctx, rec, sizeof(rec));
}

static int cs_branches(void *st, const struct ptc_branch *b, size_t n)
{
	struct champsim *w = st;
	size_t i;
	int err;

	if (n && (err = ptc_wparts_want(&w->parts)) < 0)
		return err;
	for (i = 0; i < n; i++)
		if ((err = ptc_walk_branch_tmpl(&w->walk, &b[i], &cs_tmpl, cs_insn, w)) < 0)
			return err;
	return 0;
}

/* The instructions after the last branch, one record each. */
static int cs_tail(void *st, uint64_t insns)
{
	struct champsim *w = st;
	int err;

	if ((err = ptc_wparts_want(&w->parts)) < 0)
		return err;
	return ptc_walk_tail(&w->walk, insns, cs_insn, w);
}

/* ChampSim takes a branch's target from the next record, so a loss ends
 * the file: the last branch decoded before it is the part's last record,
 * and the records from where decoding resumed go to the next part
 * (ptconv-formats(5)). */
static int cs_gap(void *st, const struct ptc_gap *g)
{
	struct champsim *w = st;

	ptc_walk_gap(&w->walk, g);
	return ptc_wparts_gap(&w->parts, g);
}

static int cs_finish(void *st)
{
	struct champsim *w = st;

	return ptc_wparts_close(&w->parts);
}

/* Idle (ptc_writer_pool): the file is closed and its compressor freed,
 * the stream suspended (one xz stream or gzip member goes on: ChampSim
 * reads only one), the block templates go; both come back with the next
 * records. */
static int cs_suspend(void *st)
{
	struct champsim *w = st;

	ptc_walker_trim(&w->walk);
	return ptc_wparts_suspend(&w->parts);
}

static void cs_free(void *st)
{
	struct champsim *w = st;

	ptc_wparts_free(&w->parts);
	ptc_walker_fini(&w->walk);
	free(w);
}

static int cs_open(void **st, const struct ptc_writer_config *cfg,
		   const struct ptc_thread_info *t, struct ptc_wctx *c)
{
	struct champsim *w;
	int err;

	if (!cfg->code)
		return ptc_wfail(c, ptc_err_invalid, "champsim: needs the code bytes");
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ptc_err_nomem;
	w->c = c;
	ptc_walker_init(&w->walk, cfg, c);
	ptc_wparts_init(&w->parts, cfg, t, c, cfg->champsim_gz ? "champsim.gz" : "champsim.xz");
	w->parts.zkind = cfg->champsim_gz ? PTC_Z_GZIP : PTC_Z_XZ;
	/* xz preset 3: on ChampSim records 13x faster than 6 for 6% more bytes. */
	w->parts.level = cfg->level ? cfg->level : cfg->champsim_gz ? 6 : 3;
	/* gzip: one member on one thread.  ChampSim's reader (zlib's inflate,
	 * never reset) reads one member and then loops for ever, and blocked
	 * gzip writes one member per 4 MiB. */
	w->parts.threads = cfg->champsim_gz ? 0 : cfg->threads > 0 ? cfg->threads : 1;
	if ((err = ptc_wparts_open(&w->parts)) < 0) {
		ptc_walker_fini(&w->walk);
		free(w);
		return err;
	}
	*st = w;
	return 0;
}

const struct ptc_fmt_ops ptc_fmt_champsim = {
	{ "champsim", "ChampSim input_instr, every instruction (.champsim.xz, .gz)", 1 },
	cs_open, cs_branches, cs_gap, cs_finish, cs_free, cs_suspend, cs_tail,
	NULL,	/* paths: each record by itself */
	NULL,	/* cpu: not in the format */
	NULL, NULL, NULL,	/* encoding ahead: it wants the records */
};
