/* CBP2025 traces (-f cbp2025): see ptconv-formats(5).
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

enum { R_SP = 31, R_SIMD = 32, R_FLAGS = 64, R_ZERO = 65, R_NONE = 255 };
#define MAX_IN 4	/* a store: address, offset and two values */
#define MAX_OUT 3
#define MAX_REGS 16

struct cbp {
	struct ptc_wctx *c;
	struct ptc_wparts parts;	/* one file per gap-free run */
	struct ptc_walker walk;
	int slots;			/* cbp2025:slots: pc -> 4 * pc */
};

/* x86 register -> CBP2025 register, R_NONE when it has no counterpart
 * (segment, x87, mask registers, rip). */
static uint8_t cbp_reg(ZydisRegister r)
{
	static const uint8_t gpr[16] = { 0, 1, 2, 3, R_SP, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };

	r = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	if (r >= ZYDIS_REGISTER_RAX && r <= ZYDIS_REGISTER_R15)
		return gpr[r - ZYDIS_REGISTER_RAX];
	if (ZydisRegisterGetClass(r) == ZYDIS_REGCLASS_FLAGS)
		return R_FLAGS;
	if (r >= ZYDIS_REGISTER_ZMM0 && r <= ZYDIS_REGISTER_ZMM31)
		return (uint8_t)(R_SIMD + (r - ZYDIS_REGISTER_ZMM0));
	return R_NONE;
}

/* The reader's integer registers: GPRs and the stack pointer (flags and
 * the zero register do not take part in its base-update logic). */
static int cbp_int(uint8_t r)
{
	return r < R_SIMD;
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

static int has(const uint8_t *set, int n, uint8_t reg)
{
	int i;

	for (i = 0; i < n; i++)
		if (set[i] == reg)
			return 1;
	return 0;
}

static void add(uint8_t *set, int *n, int max, uint8_t reg)
{
	if (reg != R_NONE && *n < max && !has(set, *n, reg))
		set[(*n)++] = reg;
}

static void drop(uint8_t *set, int *n, uint8_t reg)
{
	int i, k = 0;

	for (i = 0; i < *n; i++)
		if (set[i] != reg)
			set[k++] = set[i];
	*n = k;
}

/* An instruction's operands in CBP2025 registers: what it reads (the
 * address registers of memory operands included), what it writes, what
 * it writes through hidden operands (the stack pointer of push and pop,
 * rsi/rdi of string instructions: the updates the reader calls base
 * updates), flags last in both lists, and its memory operands. */
struct cbp_ops {
	uint8_t rd[MAX_REGS], wr[MAX_REGS], hid[MAX_REGS];
	int nrd, nwr, nhid;
	const ZydisDecodedOperand *ld, *st;	/* first memory operand read, written */
};

static void cbp_ops(const struct ptc_insn *in, struct cbp_ops *o)
{
	int i, flags_rd = 0, flags_wr = 0;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < in->zi.operand_count; i++) {
		const ZydisDecodedOperand *op = &in->ops[i];
		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
			uint8_t r = cbp_reg(op->reg.value);
			if (r == R_FLAGS) {
				flags_rd |= !!(op->actions & ZYDIS_OPERAND_ACTION_MASK_READ);
				flags_wr |= !!(op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE);
				continue;
			}
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
				add(o->rd, &o->nrd, MAX_REGS, r);
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) {
				add(o->wr, &o->nwr, MAX_REGS, r);
				if (op->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT)
					add(o->hid, &o->nhid, MAX_REGS, r);
			}
		} else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
			add(o->rd, &o->nrd, MAX_REGS, cbp_reg(op->mem.base));
			add(o->rd, &o->nrd, MAX_REGS, cbp_reg(op->mem.index));
			if (op->mem.type == ZYDIS_MEMOP_TYPE_AGEN || op->mem.type == ZYDIS_MEMOP_TYPE_MIB ||
			    in->zi.mnemonic == ZYDIS_MNEMONIC_NOP)
				continue;
			if (!o->ld && (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ))
				o->ld = op;
			if (!o->st && (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
				o->st = op;
		}
	}
	if (in->zi.cpu_flags) {
		flags_rd |= !!in->zi.cpu_flags->tested;
		flags_wr |= !!(in->zi.cpu_flags->modified | in->zi.cpu_flags->set_0 |
			       in->zi.cpu_flags->set_1 | in->zi.cpu_flags->undefined);
	}
	if (flags_rd)
		add(o->rd, &o->nrd, MAX_REGS, R_FLAGS);
	if (flags_wr)
		add(o->wr, &o->nwr, MAX_REGS, R_FLAGS);
}

/* A record's fields before encoding. */
struct cbp_fields {
	uint8_t cls, size, base_upd, reg_off, taken;
	uint8_t in[MAX_IN], out[MAX_OUT];
	int nin, nout;
};

static uint8_t mem_size(const ZydisDecodedOperand *m)
{
	unsigned n = m->size / 8;

	/* a byte in the format (fxsave's 512 bytes do not fit) */
	return (uint8_t)(n == 0 ? 8 : n > 255 ? 255 : n);
}

/* A store, as the reader splits it: its first input is the address
 * register (the zero register for RIP-relative and absolute addresses,
 * which need no register), then the index when there is one (the
 * "register offset"), then one piece per value register, each storing
 * size / values bytes; its only output, if any, is the address register
 * updated (push's rsp, stos's and movs's rdi), the base update. */
static void store_fields(const struct cbp_ops *o, struct cbp_fields *f)
{
	uint8_t addr = cbp_reg(o->st->mem.base), idx = cbp_reg(o->st->mem.index);
	int i, nval = 0;

	if (addr == R_NONE) {
		addr = idx;
		idx = R_NONE;
	}
	if (addr == R_NONE)
		addr = R_ZERO;
	f->in[f->nin++] = addr;
	if (idx != R_NONE) {
		f->in[f->nin++] = idx;
		f->reg_off = 1;
	}
	f->size = mem_size(o->st);
	for (i = 0; i < o->nrd && nval < 2; i++) {
		if (o->rd[i] == addr || o->rd[i] == idx)
			continue;
		f->in[f->nin++] = o->rd[i];
		nval++;
	}
	/* every piece stores the same number of bytes */
	while (nval > 1 && f->size % nval) {
		f->nin--;
		nval--;
	}
	if (cbp_int(addr) && has(o->wr, o->nwr, addr)) {
		f->out[f->nout++] = addr;
		f->base_upd = 1;
	}
}

/* A load: address registers first, at most 3 inputs; its outputs may
 * share at most one integer register with its inputs, and that one is a
 * base update only when the instruction moves its address register by
 * itself (pop's rsp, lods's rsi): other shared registers are left out of
 * the outputs (rep's rcx, cmps's rdi).  leave is written as the pop it
 * ends with (rbp loaded through rsp, rsp updated): its copy of rbp into
 * rsp has no place in the format. */
static void load_fields(const struct ptc_insn *in, const struct cbp_ops *o, struct cbp_fields *f)
{
	uint8_t base = cbp_reg(o->ld->mem.base), upd = R_NONE, shared[MAX_IN];
	int i, nshared = 0;

	f->size = mem_size(o->ld);
	if (in->zi.mnemonic == ZYDIS_MNEMONIC_LEAVE) {
		f->in[f->nin++] = R_SP;
		f->out[f->nout++] = 4;		/* rbp */
		f->out[f->nout++] = R_SP;
		f->base_upd = 1;
		return;
	}
	add(f->in, &f->nin, 3, base);
	add(f->in, &f->nin, 3, cbp_reg(o->ld->mem.index));
	for (i = 0; i < o->nrd; i++)
		add(f->in, &f->nin, 3, o->rd[i]);
	if (cbp_int(base) && has(o->hid, o->nhid, base))
		upd = base;
	/* the base update goes last, as the reader puts it */
	for (i = 0; i < o->nwr; i++)
		if (o->wr[i] != upd)
			add(f->out, &f->nout, upd == R_NONE ? MAX_OUT : MAX_OUT - 1, o->wr[i]);
	for (i = 0; i < f->nin; i++)
		if (cbp_int(f->in[i]) && has(f->out, f->nout, f->in[i]))
			shared[nshared++] = f->in[i];
	for (i = upd == R_NONE; i < nshared; i++)
		drop(f->out, &f->nout, shared[i]);
	if (upd != R_NONE && has(o->wr, o->nwr, upd)) {
		f->out[f->nout++] = upd;
		f->base_upd = f->nout > 1;	/* alone it is the loaded value */
	}
}

/* Any other instruction: at most 3 inputs; a branch at most one output
 * (the simulator predicts every piece of a branch, one per output). */
static void plain_fields(const struct cbp_ops *o, struct cbp_fields *f, int branch)
{
	int i;

	for (i = 0; i < o->nrd; i++)
		add(f->in, &f->nin, 3, o->rd[i]);
	for (i = 0; i < o->nwr; i++)
		add(f->out, &f->nout, branch ? 1 : MAX_OUT, o->wr[i]);
}

#define MAX_REC (8 + 1 + 8 + 3 + 1 + 8 + 1 + MAX_IN + 1 + MAX_OUT + 16 * MAX_OUT)

/* Write the record of in (b: the branch event, or NULL) to rec; its length. */
static size_t cbp_record(struct cbp *w, const struct ptc_insn *in, const struct ptc_branch *b, uint8_t *rec)
{
	struct cbp_fields f;
	struct cbp_ops o;
	uint64_t pc = w->slots ? in->ip * 4 : in->ip, target = 0;
	size_t n;
	int i, branch = b && b->kind != PTC_BR_FAR;

	memset(&f, 0, sizeof(f));
	cbp_ops(in, &o);
	if (branch) {
		static const uint8_t map[] = { C_UNCOND_DIRECT, C_UNCOND_INDIRECT, C_CALL_DIRECT,
					       C_CALL_INDIRECT, C_RETURN, C_COND };
		f.cls = map[b->kind];
		f.taken = f.cls == C_COND ? b->taken : 1;
		target = w->slots ? b->target * 4 : b->target;
		/* The simulator takes a conditional branch as taken when its
		 * next pc is not pc + 4, so a taken one to pc + 4 (je .+2 over
		 * a 2-byte instruction) would be seen not taken (and its fetch
		 * asserts).  Its target is written as pc + 5 instead: taken,
		 * and forward as the real one, which TAGE-SC-L's loop and IMLI
		 * logic compare with pc (ptconv-formats(5)). */
		if (f.cls == C_COND && f.taken && target == pc + 4)
			target = pc + 5;
		plain_fields(&o, &f, 1);
	} else if (!in->decoded) {
		f.cls = C_ALU;	/* the reader refuses class 8 (undefined) */
	} else if (o.st) {
		f.cls = C_STORE;
		store_fields(&o, &f);
	} else if (o.ld && o.nwr) {
		f.cls = C_LOAD;	/* a load needs an output register */
		load_fields(in, &o, &f);
	} else {
		f.cls = is_fp(&in->zi) ? C_FP : is_slow(in->zi.mnemonic) ? C_SLOW_ALU : C_ALU;
		plain_fields(&o, &f, 0);
	}
	ptc_put64(rec, pc);
	rec[8] = f.cls;
	n = 9;
	if (f.cls == C_LOAD || f.cls == C_STORE) {
		ptc_put64(rec + n, 0);		/* effective address: not traced */
		rec[n + 8] = f.size;
		rec[n + 9] = f.base_upd;
		n += 10;
		if (f.cls == C_STORE)
			rec[n++] = f.reg_off;
	}
	if (branch) {
		rec[n++] = f.taken;
		if (f.taken) {
			ptc_put64(rec + n, target);
			n += 8;
		}
	}
	rec[n++] = (uint8_t)f.nin;
	memcpy(rec + n, f.in, f.nin);
	n += f.nin;
	rec[n++] = (uint8_t)f.nout;
	memcpy(rec + n, f.out, f.nout);
	n += f.nout;
	for (i = 0; i < f.nout; i++) {
		size_t v = f.out[i] >= R_SIMD && f.out[i] < R_FLAGS ? 16 : 8;
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
	return cbp_record(ctx, in, NULL, out);
}

static const struct ptc_walk_tmpl cbp_tmpl = { MAX_REC, cbp_tmpl_rec, cbp_emit };

static int cbp_insn(void *ctx, const struct ptc_insn *in, const struct ptc_branch *b)
{
	uint8_t rec[MAX_REC];

	return cbp_emit(ctx, rec, cbp_record(ctx, in, b, rec));
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

/* Idle (ptc_writer_pool): the file is closed and its compressor freed
 * (its gzip member ends), the block templates go; both come back with the
 * next records. */
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
	w->slots = cfg->cbp2025_slots;
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
	NULL,	/* cpu: not in the format */
	NULL, NULL, NULL,	/* encoding ahead: it wants the records */
};
