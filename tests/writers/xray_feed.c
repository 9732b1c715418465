/* Test feeder for -f xray and -f perfetto: a few calls with chosen times,
 * symbols and a loss, handed to the writer directly, so that
 * tests/writers/xray.sh can check what llvm-xray makes of times far apart
 * (TSCWrap records) and of frames left at a loss, and perfetto.sh the
 * slices, against the numbers below.
 * usage: xray_feed DIR [FORMAT]   (xray: writes DIR/xray.7.fdr and its
 * maps; perfetto: DIR/perfetto.pftrace)
 *
 * Symbols: f at 0x1000, g at 0x1100, h at 0x1200 (0x100 bytes each).
 * Thread 7 of process 7, times in ns:
 *   1e9        call f (from 0x500)
 *   1e9+100    call g (from f)
 *   1e9+300    g returns                     g: 200 ns
 *   11e9+300   f returns (10 s later)        f: 10 s + 300 ns (a TSCWrap)
 *   12e9       call h
 *   13e9       a loss: h is left there       h: 1 s
 *   13e9+50    h's return: leaves nothing
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writers/writers.h"
#include "feed.h"

static void lookup(void *ctx, uint64_t addr, struct ptc_symbol *out)
{
	static const char *const names[] = { "f", "g", "h" };

	(void)ctx;
	memset(out, 0, sizeof(*out));
	out->image = "/feed";
	out->vaddr = addr;
	if (addr >= 0x1000 && addr < 0x1300) {
		out->start = addr & ~0xffull;
		out->name = names[(addr - 0x1000) >> 8];
		out->lo = out->start;
		out->hi = out->start + 0x100;
	} else {
		out->lo = addr;
		out->hi = addr + 1;
	}
}

static struct ptc_branch br(uint64_t ip, uint64_t target, int kind, uint64_t time)
{
	return feed_branch(ip, target, kind, time, 5, 1);
}

int main(int argc, char **argv)
{
	struct ptc_symbol_reader syms = { .lookup = lookup };
	struct ptc_writer_config cfg;
	struct ptc_writer_procs *procs;
	struct ptc_thread_info ti = { 7, 7, "feed", -1 };
	struct ptc_writer *w;
	struct ptc_sink s;
	struct ptc_gap g;
	char err[600];
	const uint64_t G = 1000000000;
	struct ptc_branch before[] = {
		br(0x500, 0x1000, PTC_BR_CALL, G),
		br(0x1010, 0x1100, PTC_BR_CALL, G + 100),
		br(0x1180, 0x1015, PTC_BR_RET, G + 300),
		br(0x1080, 0x505, PTC_BR_RET, 11 * G + 300),
		br(0x600, 0x1200, PTC_BR_CALL_IND, 12 * G),
	};
	struct ptc_branch after[] = { br(0x1280, 0x605, PTC_BR_RET, 13 * G + 50) };

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: xray_feed DIR [FORMAT]\n");
		return 2;
	}
	if (ptc_writer_procs_new(&procs) < 0)
		return 1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.outdir = argv[1];
	cfg.symbols = &syms;
	cfg.procs = procs;
	if (ptc_writer_new(&w, argc == 3 ? argv[2] : "xray", &cfg) < 0)
		return 1;
	memset(&g, 0, sizeof(g));
	g.cause = PTC_GAP_OVERFLOW;
	g.time = 13 * G;
	g.resume_offset = UINT64_MAX;
	s = ptc_writer_sink(w);
	if (s.begin(s.ctx, &ti) < 0 || s.branches(s.ctx, before, 5) < 0 || s.gap(s.ctx, &g) < 0 ||
	    s.branches(s.ctx, after, 1) < 0 || s.end(s.ctx) < 0) {
		fprintf(stderr, "xray_feed: %s\n", ptc_writer_errmsg(w));
		return 1;
	}
	ptc_writer_free(w);
	if (ptc_writer_procs_finish(procs, err, sizeof(err)) < 0) {
		fprintf(stderr, "xray_feed: %s\n", err);
		return 1;
	}
	ptc_writer_procs_free(procs);
	return 0;
}
