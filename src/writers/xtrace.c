/* xtrace-format writer (-f xtrace) and reader: see ptconv-xtrace(5).
 *
 * Per thread, xtrace.{time}.{tid}.hint9.xinsndata.bin holds one token per
 * instruction: x86 instructions use ptconv's extension sub-tokens XPCINST
 * (first instruction of a basic block, with its PC) and XINST (the others),
 * indirect branches are followed by TARGET_B.  xtrace.{...}.xsnapshot.bin
 * holds a header and a snapshot (instruction counts, registers not
 * captured) at instruction 0 and every 1,000,000 instructions; each points
 * at an XPCINST token, so it is a valid place to start reading.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "writers/fmt.h"
#include "writers/insn.h"
#include "writers/wutil.h"
#include "writers/xtrace.h"

/* token classes and sub-tokens */
enum { XT_INST = 1, XT_MEM = 2, XT_VAL = 3, XT_MISC = 4, XT_TIME = 7 };
enum { XT_SUB_INST = 0, XT_SUB_PCINST = 1, XT_SUB_XINST = 2, XT_SUB_XPCINST = 3 };
enum { XT_VAL_TARGET_B = 5, XT_VAL_XGAP = 6 };
enum { XT_MISC_ALLGPR = 1, XT_MISC_FLAGS = 3, XT_MISC_SYSCALL_VEC = 4 };

struct xtw {
	struct ptc_wctx *c;
	const struct ptc_writer_config *cfg;
	struct ptc_thread_info thread;
	char path[4096], snap_path[4096];
	struct ptc_zout *z, *snap;
	struct ptc_walker walk;
	uint64_t offset;		/* bytes written to the instruction stream */
	uint64_t insns, interval;
	int force_pc, opened;
};

static int xt_put(struct xtw *w, const void *p, size_t n)
{
	int err;

	/* suspended (xt_suspend): the file goes on */
	if ((err = ptc_wfile_resume(w->c, &w->z, w->path)) < 0)
		return err;
	if (ptc_zout_write(w->z, p, n) < 0)
		return ptc_wfail(w->c, ptc_err_io, "%s: write: %s", w->path, strerror(ptc_zout_errno(w->z)));
	w->offset += n;
	return 0;
}

static int xt_open_files(struct xtw *w, uint64_t time)
{
	uint8_t h[PTC_XT_HEADER_SIZE];
	char suffix[128];
	int per_core = w->thread.cpu >= 0, err;

	if (w->opened)
		return 0;
	w->opened = 1;
	if (w->cfg->start_time)
		time = w->cfg->start_time;
	/* Per-thread: the tid and hint9; per-core: the cpu id, hint9 for the
	 * primary core (cpu 0) and hint13 for the others. */
	snprintf(suffix, sizeof(suffix), "%u.hint%d", per_core ? (unsigned)w->thread.cpu : w->thread.tid,
		 per_core && w->thread.cpu ? 13 : 9);
	snprintf(w->path, sizeof(w->path), "%s/xtrace.%" PRIu64 ".%s.xinsndata.bin",
		 w->cfg->outdir ? w->cfg->outdir : ".", time, suffix);
	snprintf(w->snap_path, sizeof(w->snap_path), "%s/xtrace.%" PRIu64 ".%s.xsnapshot.bin",
		 w->cfg->outdir ? w->cfg->outdir : ".", time, suffix);
	if ((err = ptc_wfile_open(w->c, &w->z, w->path)) < 0 ||
	    (err = ptc_wfile_open(w->c, &w->snap, w->snap_path)) < 0)
		return err;
	memset(h, 0, sizeof(h));
	ptc_put32(h, PTC_XT_SNAP_ID);
	ptc_put32(h + 4, 0);			/* global snapshot point */
	ptc_put64(h + 8, PTC_XT_VERSION);
	h[16] = 0;				/* division: every N user-mode instructions */
	h[17] = per_core ? 1 : 0;		/* stream type: thread 0, core 1 */
	h[18] = 0;				/* no TIME tokens */
	h[19] = PTC_XT_ISA_X86_64;
	h[20] = 0;				/* registers not captured */
	if (ptc_zout_write(w->snap, h, sizeof(h)) < 0)
		return ptc_wfail(w->c, ptc_err_io, "%s: write: %s", w->snap_path,
				 strerror(ptc_zout_errno(w->snap)));
	return 0;
}

static int xt_snapshot(struct xtw *w)
{
	uint8_t s[PTC_XT_SNAPSHOT_SIZE];
	int err;

	memset(s, 0, sizeof(s));
	ptc_put64(s, 0);		/* file number */
	ptc_put64(s + 8, w->offset);	/* byte offset of the next (XPCINST) token */
	ptc_put64(s + 16, w->insns);	/* user-mode instructions before */
	ptc_put64(s + 24, w->insns);	/* all instructions before: only user mode is traced */
	/* X0-X31, no vector state (length 0), system registers: all 0;
	 * the last 8 bytes, the vector length, are 0 too. */
	if ((err = ptc_wfile_resume(w->c, &w->snap, w->snap_path)) < 0)
		return err;
	if (ptc_zout_write(w->snap, s, sizeof(s)) < 0)
		return ptc_wfail(w->c, ptc_err_io, "%s: write: %s", w->snap_path,
				 strerror(ptc_zout_errno(w->snap)));
	w->force_pc = 1;
	return 0;
}

static int xt_insn(void *ctx, const struct ptc_insn *in, const struct ptc_branch *b)
{
	struct xtw *w = ctx;
	uint8_t t[1 + 8 + 1 + 15];
	size_t n = 0;
	int err;

	if (!(w->insns % w->interval) && (err = xt_snapshot(w)) < 0)
		return err;
	if (w->force_pc) {
		t[n++] = XT_INST | XT_SUB_XPCINST << 3;
		ptc_put64(t + n, in->ip);
		n += 8;
	} else {
		t[n++] = XT_INST | XT_SUB_XINST << 3;
	}
	t[n++] = in->len;
	memcpy(t + n, in->bytes, in->len);
	n += in->len;
	if ((err = xt_put(w, t, n)) < 0)
		return err;
	w->insns++;
	w->force_pc = 0;
	if (b) {
		if (b->kind == PTC_BR_JMP_IND || b->kind == PTC_BR_CALL_IND || b->kind == PTC_BR_RET) {
			t[0] = XT_VAL | XT_VAL_TARGET_B << 3;
			ptc_put64(t + 1, b->target);
			if ((err = xt_put(w, t, 9)) < 0)
				return err;
		}
		w->force_pc = 1;	/* a new basic block starts */
	}
	return 0;
}

/* The instructions after the last branch: INST tokens (snapshots every
 * interval as everywhere). */
static int xt_tail(void *st, uint64_t insns)
{
	struct xtw *w = st;
	int err;

	if ((err = xt_open_files(w, 0)) < 0)
		return err;
	return ptc_walk_tail(&w->walk, insns, xt_insn, w);
}

static int xt_branches(void *st, const struct ptc_branch *b, size_t n)
{
	struct xtw *w = st;
	size_t i;
	int err;

	if (n && (err = xt_open_files(w, b[0].time)) < 0)
		return err;
	for (i = 0; i < n; i++) {
		uint64_t missing = w->walk.missing;
		if ((err = ptc_walk_branch(&w->walk, &b[i], xt_insn, w)) < 0)
			return err;
		if (w->walk.missing != missing)
			w->force_pc = 1;
	}
	return 0;
}

/* DECISION (ptconv-xtrace(5)): a loss is an XGAP token, VAL sub-token 6
 * (unused by the description) with a u64 payload: bits 0-7 the cause (the
 * ptconv-trace(5) numbers), bits 8-63 the lost branches (all ones when
 * unknown).  The next instruction is an XPCINST at the resume address.  A
 * stream start (exec) is not a loss: no token. */
static int xt_gap(void *st, const struct ptc_gap *g)
{
	struct xtw *w = st;
	uint8_t t[9];
	uint64_t lost;
	int err;

	if ((err = xt_open_files(w, g->time)) < 0)
		return err;
	if (g->cause != PTC_GAP_START) {
		lost = g->lost_branches >= PTC_XT_GAP_LOST_UNKNOWN ? PTC_XT_GAP_LOST_UNKNOWN : g->lost_branches;
		t[0] = XT_VAL | XT_VAL_XGAP << 3;
		ptc_put64(t + 1, lost << 8 | g->cause);
		if ((err = xt_put(w, t, 9)) < 0)
			return err;
	}
	ptc_walk_gap(&w->walk, g);
	w->force_pc = 1;
	return 0;
}

/* Close the instruction and snapshot files (NULL-safe). */
static int xt_close_files(struct xtw *w)
{
	int err = ptc_wfile_close(w->c, &w->z, w->path);

	return err < 0 ? err : ptc_wfile_close(w->c, &w->snap, w->snap_path);
}

static int xt_finish(void *st)
{
	struct xtw *w = st;
	int err = xt_open_files(w, 0);

	if (err < 0 || (err = xt_close_files(w)) < 0)
		return err;
	/* the pair under its names, the snapshots first: a reader looks for
	 * them beside the instruction file */
	if (ptc_out_commit(w->snap_path) < 0)
		return ptc_wfail_commit(w->c, w->snap_path);
	if (ptc_out_commit(w->path) < 0)
		return ptc_wfail_commit(w->c, w->path);
	return 0;
}

/* Idle (ptc_writer_pool): both files are closed (their buffers written)
 * and appended to with the next events; the bytes do not change. */
static int xt_suspend(void *st)
{
	return xt_close_files(st);
}

static void xt_free(void *st)
{
	struct xtw *w = st;

	ptc_zout_abort(w->z);
	ptc_zout_abort(w->snap);
	ptc_walker_fini(&w->walk);
	free(w);
}

static int xt_open(void **st, const struct ptc_writer_config *cfg,
		   const struct ptc_thread_info *t, struct ptc_wctx *c)
{
	struct xtw *w;

	if (!cfg->code)
		return ptc_wfail(c, ptc_err_invalid, "xtrace: needs the code bytes");
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ptc_err_nomem;
	w->c = c;
	w->cfg = cfg;
	if (t)
		w->thread = *t;
	w->thread.comm = NULL;
	w->interval = cfg->xtrace_snapshot ? cfg->xtrace_snapshot : 1000000;
	w->force_pc = 1;
	ptc_walker_init(&w->walk, cfg, c);
	*st = w;
	return 0;
}

const struct ptc_fmt_ops ptc_fmt_xtrace = {
	{ "xtrace", "xtrace-format instruction stream and snapshots (x86 extension tokens)", 1 },
	xt_open, xt_branches, xt_gap, xt_finish, xt_free, xt_suspend, xt_tail,
	NULL,	/* paths: each record by itself */
	NULL,	/* cpu: not in the format */
	NULL, NULL, NULL,	/* encoding ahead: it wants the records */
};

/* ---- reader ---- */

struct ptc_xtrace_reader {
	FILE *f;
	char path[1024];
	char msg[1280];
	uint64_t off, size;
	uint64_t pc, next_pc;
	int have_pc;
	int isa;
	/* one token of lookahead */
	int peeked;
	uint8_t peek;
	/* an XGAP read, for the next instruction */
	int gap;
	uint8_t gap_cause;
	uint64_t gap_lost;
};

static int xr_fail(struct ptc_xtrace_reader *r, int code, uint64_t off, const char *why)
{
	snprintf(r->msg, sizeof(r->msg), "%.900s: offset %" PRIu64 ": %s", r->path, off, why);
	return -code;
}

const char *ptc_xtrace_errmsg(const struct ptc_xtrace_reader *r)
{
	return r ? r->msg : "";
}

static int xr_read(struct ptc_xtrace_reader *r, void *p, size_t n)
{
	if (fread(p, 1, n, r->f) != n)
		return xr_fail(r, ptc_err_truncated, r->off, "the file ends inside a token");
	r->off += n;
	return 0;
}

static int xr_byte(struct ptc_xtrace_reader *r, uint8_t *b)
{
	int c;

	if (r->peeked) {
		r->peeked = 0;
		*b = r->peek;
		r->off++;
		return 1;
	}
	c = getc(r->f);
	if (c == EOF)
		return 0;
	*b = (uint8_t)c;
	r->off++;
	return 1;
}

int ptc_xtrace_open(struct ptc_xtrace_reader **rp, const char *path, char *msg, size_t size)
{
	struct ptc_xtrace_reader *r = calloc(1, sizeof(*r));

	*rp = NULL;
	if (!r)
		return -ptc_err_nomem;
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->f = fopen(path, "rb");
	if (!r->f) {
		if (msg && size)
			snprintf(msg, size, "%s: %s", path, strerror(errno));
		free(r);
		return -ptc_err_io;
	}
	*rp = r;
	return 0;
}

void ptc_xtrace_close(struct ptc_xtrace_reader *r)
{
	if (!r)
		return;
	fclose(r->f);
	free(r);
}

/* Skip or interpret the payload of a non-instruction token. */
static int xr_other(struct ptc_xtrace_reader *r, uint8_t tok, uint64_t at, struct ptc_xtrace_insn *last)
{
	uint8_t buf[256];
	uint64_t n;
	int err;

	switch (tok & 7) {
	case XT_MEM:
		n = 8 + (1ull << (tok >> 4));
		while (n) {
			size_t k = n < sizeof(buf) ? n : sizeof(buf);
			if ((err = xr_read(r, buf, k)) < 0)
				return err;
			n -= k;
		}
		return 0;
	case XT_VAL:
		if ((tok >> 3) > XT_VAL_XGAP)
			return xr_fail(r, ptc_err_bad_record, at, "unknown VAL sub-token");
		if ((err = xr_read(r, buf, 8)) < 0)
			return err;
		if ((tok >> 3) == XT_VAL_TARGET_B && last) {
			last->has_target = 1;
			last->target = ptc_le64(buf);
		}
		if ((tok >> 3) == XT_VAL_XGAP) {
			r->gap = 1;
			r->gap_cause = buf[0];
			r->gap_lost = ptc_le64(buf) >> 8;
		}
		return 0;
	case XT_MISC:
		switch (tok >> 3) {
		case XT_MISC_ALLGPR:
			return xr_read(r, buf, 256);
		case XT_MISC_FLAGS:
			return xr_read(r, buf, 8);
		case XT_MISC_SYSCALL_VEC:
			if ((err = xr_read(r, buf, 8)) < 0)
				return err;
			n = ptc_le64(buf);
			if (n > (1u << 20))
				return xr_fail(r, ptc_err_bad_size, at, "SYSCALL_VEC count too large");
			while (n--)
				if ((err = xr_read(r, buf, 16)) < 0)
					return err;
			return 0;
		default:
			return xr_fail(r, ptc_err_bad_record, at, "unknown MISC sub-token (its size is unknown)");
		}
	case XT_TIME:
		if (tok >> 3)
			return xr_fail(r, ptc_err_bad_record, at, "unknown TIME sub-token");
		return xr_read(r, buf, 8);
	default:
		return xr_fail(r, ptc_err_bad_record, at, "unknown token class");
	}
}

int ptc_xtrace_next(struct ptc_xtrace_reader *r, struct ptc_xtrace_insn *in)
{
	uint8_t tok, buf[16];
	uint64_t at;
	int err, got = 0;

	for (;;) {
		at = r->off;
		if (!xr_byte(r, &tok))
			return got;
		if ((tok & 7) == XT_INST) {
			unsigned sub = (tok >> 3) & 7;
			if (got) {
				/* the next instruction: keep it for the next call */
				r->peeked = 1;
				r->peek = tok;
				r->off--;
				return 1;
			}
			memset(in, 0, sizeof(*in));
			in->offset = at;
			in->el = tok >> 6;
			if (r->gap) {
				in->after_gap = 1;
				in->gap_cause = r->gap_cause;
				in->gap_lost = r->gap_lost;
				r->gap = 0;
			}
			if (sub == XT_SUB_PCINST || sub == XT_SUB_XPCINST) {
				if ((err = xr_read(r, buf, 8)) < 0)
					return err;
				in->pc = ptc_le64(buf);
				in->block_start = 1;
			} else if (sub == XT_SUB_INST || sub == XT_SUB_XINST) {
				if (!r->have_pc)
					return xr_fail(r, ptc_err_bad_record, at,
						       "instruction without a PC before it (no PCINST yet)");
				in->pc = r->next_pc;
			} else {
				return xr_fail(r, ptc_err_bad_record, at, "unknown INST sub-token");
			}
			if (sub == XT_SUB_INST || sub == XT_SUB_PCINST) {
				in->len = 4;
			} else {
				if ((err = xr_read(r, &in->len, 1)) < 0)
					return err;
				if (!in->len || in->len > 15)
					return xr_fail(r, ptc_err_bad_record, at, "x86 instruction length not 1..15");
			}
			if ((err = xr_read(r, in->bytes, in->len)) < 0)
				return err;
			r->have_pc = 1;
			r->next_pc = in->pc + in->len;
			got = 1;
			continue;
		}
		if ((err = xr_other(r, tok, at, got ? in : NULL)) < 0)
			return err;
	}
}

static void print_gap(FILE *out, unsigned cause, uint64_t lost, const char *note)
{
	fprintf(out, "# gap: cause %u, lost branches ", cause);
	if (lost == PTC_XT_GAP_LOST_UNKNOWN)
		fprintf(out, "unknown%s\n", note);
	else
		fprintf(out, "%" PRIu64 "%s\n", lost, note);
}

int ptc_xtrace_dump(const char *path, uint64_t count, FILE *out)
{
	struct ptc_xtrace_reader *r;
	struct ptc_xtrace_insn in;
	char msg[1280] = "", snap[4096];
	size_t len = strlen(path);
	FILE *s;
	int err;

	/* The snapshot file first: header and snapshot points. */
	if (len > 14 && len - 14 + 14 < sizeof(snap)) {
		snprintf(snap, sizeof(snap), "%.*s.xsnapshot.bin", (int)(len - 14), path);
		s = fopen(snap, "rb");
		if (s) {
			uint8_t h[PTC_XT_HEADER_SIZE], p[PTC_XT_SNAPSHOT_SIZE];
			if (fread(h, 1, sizeof(h), s) == sizeof(h) && ptc_le32(h) == PTC_XT_SNAP_ID) {
				fprintf(out, "# xsnapshot: version %" PRIu64 " division %u stream %u time-tokens %u"
					" isa %s registers %s\n", ptc_le64(h + 8), h[16], h[17], h[18],
					h[19] == PTC_XT_ISA_X86_64 ? "x86-64" : "aarch64",
					h[20] ? "captured" : "not-captured");
				while (fread(p, 1, sizeof(p), s) == sizeof(p))
					fprintf(out, "# snapshot: file %" PRIu64 " offset %" PRIu64 " user-insns %" PRIu64
						" all-insns %" PRIu64 "\n", ptc_le64(p), ptc_le64(p + 8),
						ptc_le64(p + 16), ptc_le64(p + 24));
			} else {
				fprintf(stderr, "ptconv: %s: not a ptconv xsnapshot file (identifier)\n", snap);
			}
			fclose(s);
		}
	}
	if ((err = ptc_xtrace_open(&r, path, msg, sizeof(msg))) < 0) {
		fprintf(stderr, "ptconv: %s\n", msg);
		return err;
	}
	fprintf(out, "# offset pc len bytes [target]\n");
	while (count-- && (err = ptc_xtrace_next(r, &in)) > 0) {
		int i;
		if (in.after_gap)
			print_gap(out, in.gap_cause, in.gap_lost, "");
		fprintf(out, "%" PRIu64 " 0x%" PRIx64 " %u%s ", in.offset, in.pc, in.len, in.block_start ? "*" : "");
		for (i = 0; i < in.len; i++)
			fprintf(out, "%02x", in.bytes[i]);
		if (in.has_target)
			fprintf(out, " -> 0x%" PRIx64, in.target);
		fputc('\n', out);
	}
	if (err == 0 && r->gap)	/* an XGAP with no instruction after it */
		print_gap(out, r->gap_cause, r->gap_lost, " (the trace ends in it)");
	if (err < 0)
		fprintf(stderr, "ptconv: %s\n", ptc_xtrace_errmsg(r));
	ptc_xtrace_close(r);
	return err < 0 ? err : 0;
}
