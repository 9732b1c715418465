/* Test feeder for the function symbols a .ptc embeds (ptconv-trace(5),
 * "Symbols"): branches handed to the ptconv writer with a symbol reader
 * of its own, whose images change at an exec, then the trace read back
 * with libptconv-trace, whose answers must be the reader's.
 * usage: ptc_syms_feed DIR   (writes DIR/trace.9.ptc)
 *
 * Before the exec (program a, its addresses 0x400 below the run-time
 * ones): alpha [0x1000, 0x1100), beta [0x1100, 0x1200), no symbol in
 * [0x1200, 0x1300) (the image alone), nothing elsewhere.  After it
 * (program b, at its own addresses): gamma [0x1000, 0x1080), delta
 * [0x1080, 0x1300), epsilon [0x2000, 0x2100).  A gap record follows the
 * exec's far branch.  The answers for every address the writer looks up
 * (branch addresses, and the targets of all but returns) must be the
 * reader's at the record they belong to; gamma and delta overlap a's
 * ranges, so they hold from the record that meets them, and epsilon,
 * which overlaps nothing, from record 0.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptconv/trace.h"
#include "writers/writers.h"
#include "feed.h"

static int exec_done;	/* the images are program b's */

struct fn {
	uint64_t lo, hi;
	const char *name;	/* NULL: the image alone */
};

static const struct fn prog_a[] = {
	{ 0x1000, 0x1100, "alpha" }, { 0x1100, 0x1200, "beta" }, { 0x1200, 0x1300, NULL }, { 0, 0, NULL } };
static const struct fn prog_b[] = {
	{ 0x1000, 0x1080, "gamma" }, { 0x1080, 0x1300, "delta" }, { 0x2000, 0x2100, "epsilon" }, { 0, 0, NULL } };

/* The images' answer for addr: 1, or 0 when addr lies in none. */
static int answer(int b, uint64_t addr, struct ptc_symbol *out)
{
	const struct fn *f;

	memset(out, 0, sizeof(*out));
	for (f = b ? prog_b : prog_a; f->hi; f++) {
		if (addr < f->lo || addr >= f->hi)
			continue;
		out->lo = f->lo;
		out->hi = f->hi;
		out->start = f->name ? f->lo : 0;
		out->name = f->name;
		out->image = b ? "/usr/bin/prog-b" : "/usr/bin/prog-a";
		out->vaddr = b ? addr : addr - 0x400;
		return 1;
	}
	return 0;
}

static void lookup(void *ctx, uint64_t addr, struct ptc_symbol *out)
{
	(void)ctx;
	answer(exec_done, addr, out);
}

static size_t no_code(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	(void)ctx, (void)ip, (void)buf, (void)n;
	return 0;
}

static struct ptc_branch br(uint64_t ip, uint64_t target, int kind)
{
	return feed_branch(ip, target, kind, 0, kind == PTC_BR_RET ? 1 : 5, 3);
}

static int fail(const char *what, uint64_t rec, uint64_t addr)
{
	fprintf(stderr, "ptc_syms_feed: record %" PRIu64 ", 0x%" PRIx64 ": %s\n", rec, addr, what);
	return 1;
}

static int same_str(const char *a, const char *b)
{
	return !a || !b ? a == b : !strcmp(a, b);
}

/* The trace's answer for addr at record rec is the images' at that time. */
static int check(struct ptc_trace *t, uint64_t rec, uint64_t addr, int b)
{
	struct ptc_trace_symbol got;
	struct ptc_symbol want;
	int have = ptc_trace_symbol(t, rec, addr, &got), is = answer(b, addr, &want);

	if (have != is)
		return fail(have ? "an answer where the images have none" : "no answer", rec, addr);
	if (is && (got.lo != want.lo || got.hi != want.hi || got.start != want.start || got.vaddr != want.vaddr ||
		   !same_str(got.name, want.name) || !same_str(got.image, want.image)))
		return fail("not the images' answer", rec, addr);
	return 0;
}

int main(int argc, char **argv)
{
	struct ptc_symbol_reader syms = { .lookup = lookup };
	struct ptc_code_reader code = { no_code, NULL };
	struct ptc_writer_config cfg;
	struct ptc_thread_info ti = { 9, 9, "feed", -1 };
	struct ptc_writer *w;
	struct ptc_sink s;
	struct ptc_gap g;
	struct ptc_trace *t;
	struct ptc_trace_record r;
	char path[4200];
	struct ptc_branch a[] = {
		br(0x500, 0x1000, PTC_BR_CALL),		/* alpha */
		br(0x1010, 0x1100, PTC_BR_CALL),	/* beta */
		br(0x1110, 0x1250, PTC_BR_JMP),		/* the image alone */
		br(0x1260, 0x1015, PTC_BR_RET),
		br(0x1020, 0x505, PTC_BR_RET),
		br(0x510, 0x1000, PTC_BR_FAR),		/* execve: b's entry */
	};
	struct ptc_branch b[] = {
		br(0x520, 0x1000, PTC_BR_CALL),		/* gamma */
		br(0x1010, 0x1090, PTC_BR_CALL),	/* delta */
		br(0x1095, 0x2000, PTC_BR_CALL_IND),	/* epsilon */
		br(0x2010, 0x109a, PTC_BR_RET),
		br(0x10a0, 0x1015, PTC_BR_RET),
		br(0x1030, 0x525, PTC_BR_RET),
	};
	const uint64_t n_a = sizeof(a) / sizeof(a[0]), n_b = sizeof(b) / sizeof(b[0]);
	uint64_t i, rec, change;
	size_t k;
	int err, bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: ptc_syms_feed DIR\n");
		return 2;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.outdir = argv[1];
	cfg.symbols = &syms;
	cfg.code = &code;
	cfg.untimed = 1;
	if (ptc_writer_new(&w, "ptconv", &cfg) < 0)
		return 1;
	memset(&g, 0, sizeof(g));
	g.cause = PTC_GAP_RECORDS_LOST;
	g.resume_offset = UINT64_MAX;
	g.resume_ip = 0x520;
	s = ptc_writer_sink(w);
	/* one branch at a time: each looked up in the images of its time */
	if (s.begin(s.ctx, &ti) < 0)
		goto werr;
	for (k = 0; k < n_a; k++)
		if (s.branches(s.ctx, &a[k], 1) < 0)
			goto werr;
	exec_done = 1;
	if (s.gap(s.ctx, &g) < 0)
		goto werr;
	for (k = 0; k < n_b; k++)
		if (s.branches(s.ctx, &b[k], 1) < 0)
			goto werr;
	if (s.end(s.ctx) < 0)
		goto werr;
	ptc_writer_free(w);

	snprintf(path, sizeof(path), "%s/trace.9.ptc", argv[1]);
	if (!(t = ptc_trace_open(path, &err))) {
		fprintf(stderr, "ptc_syms_feed: %s: %s\n", path, ptc_trace_errstr(err));
		return 1;
	}
	if (!(ptc_trace_flags(t) & PTC_TRACE_UNTIMED))
		bad |= fail("not marked untimed", 0, 0);
	/* every branch's addresses (a return's target is not looked up) */
	for (rec = 0; ptc_trace_read(t, &r, 1) == 1; rec++) {
		int after = rec > n_a - 1;
		if (r.kind == PTC_TRACE_GAP)
			continue;
		bad |= check(t, rec, r.ip, after);
		if (r.kind != PTC_TRACE_RET && r.target)
			bad |= check(t, rec, r.target, after);
	}
	if (rec != n_a + 1 + n_b)
		bad |= fail("records read back", rec, 0);
	/* b's ranges that overlap a's hold from the record that met them
	 * (the gap is record n_a): gamma the next, delta the one after;
	 * epsilon from the start */
	change = ptc_trace_symbols_change(t, 0);
	if (change != n_a + 1 || ptc_trace_symbols_change(t, change) != n_a + 2 ||
	    ptc_trace_symbols_change(t, n_a + 2) != UINT64_MAX)
		bad |= fail("the answers change elsewhere than where b's ranges were met", change, 0);
	for (i = 0; i <= n_a; i++)
		bad |= check(t, i, 0x1000, 0) | check(t, i, 0x1150, 0) | check(t, i, 0x1280, 0);
	{
		struct ptc_trace_symbol e;
		if (ptc_trace_symbol(t, 0, 0x2050, &e) != 1 || !e.name || strcmp(e.name, "epsilon"))
			bad |= fail("epsilon does not hold from record 0", 0, 0x2050);
	}
	ptc_trace_close(t);
	if (bad)
		return 1;
	printf("ok - the trace's symbols are the images' at every branch, before and after an exec\n");
	return 0;
werr:
	fprintf(stderr, "ptc_syms_feed: %s\n", ptc_writer_errmsg(w));
	return 1;
}
