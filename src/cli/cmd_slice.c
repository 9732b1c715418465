/* ptconv slice: cut a ptconv trace to an instruction range, exactly.
 *
 * The slice holds instructions [N, N+M) of the input: it starts with a
 * start gap whose resume IP is instruction N, its first branch record
 * counts only the instructions from N (flag PTC_TRACE_SLICE_START), and the
 * instructions after its last branch are in the header's tail count, so
 * that the slice's instruction total is exactly M.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/error.h"
#include "ptconv/trace.h"
#include "writers/insn.h"
#include "writers/writers.h"

static void usage(FILE *to)
{
	fprintf(to, "usage: ptconv slice --start N --count M [-o OUT.ptc] TRACE.ptc\n"
		    "Cut a ptconv trace to instructions [N, N+M) (see ptconv-slice(1)).\n");
}

int cmd_slice(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "start", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t start = 0, count = 0, done, idx, first_ip, block_start = 0, tail = 0;
	int have_start = 0, have_count = 0, opt, err, rc = PTC_EXIT_OUTPUT;
	const char *in, *out = NULL;
	char outbuf[4096], tmpdir[4096], prefix[64], tmpfile[4200], msg[1024] = "";
	struct ptc_trace *t;
	struct ptc_trace_info info;
	struct ptc_trace_record r, prev;
	struct ptc_writer *w = NULL;
	struct ptc_writer_config cfg = { 0 };
	struct ptc_code_reader code;
	struct ptc_trace_syms syms;
	struct ptc_sink s;
	uint32_t before;
	char *end;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:n:o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			errno = 0;
			start = strtoull(optarg, &end, 0);
			if (errno || *end)
				goto badnum;
			have_start = 1;
			break;
		case 'n':
			errno = 0;
			count = strtoull(optarg, &end, 0);
			if (errno || *end || !count)
				goto badnum;
			have_count = 1;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(stdout);
			return PTC_EXIT_OK;
		default:
			usage(stderr);
			return PTC_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !have_start || !have_count) {
		usage(stderr);
		return PTC_EXIT_USAGE;
	}
	in = argv[optind];
	t = ptc_trace_open_msg(in, &err, msg, sizeof(msg));
	if (!t) {
		ptc_cli_error("%s", msg[0] ? msg : ptc_errstr(err));
		return PTC_EXIT_INPUT;
	}
	ptc_trace_info(t, &info);
	if (start >= info.instructions - info.tail_insns ||
	    count > info.instructions - info.tail_insns - start) {
		ptc_cli_error("%s: holds %" PRIu64 " instructions, cannot cut [%" PRIu64 ", +%" PRIu64 ")",
			      in, info.instructions - info.tail_insns, start, count);
		ptc_trace_close(t);
		return PTC_EXIT_USAGE;
	}
	if (!out) {
		size_t len = strlen(in);
		if (len > 4 && !strcmp(in + len - 4, ".ptc"))
			len -= 4;
		snprintf(outbuf, sizeof(outbuf), "%.*s.slice-%" PRIu64 "-%" PRIu64 ".ptc",
			 (int)len, in, start, count);
		out = outbuf;
	}
	/* Find the record holding instruction `start`, and its block start. */
	if ((err = ptc_trace_seek_insn(t, start, &before)) < 0)
		goto readerr;
	idx = ptc_trace_tell(t, NULL);
	if (idx) {
		if ((err = ptc_trace_seek_record(t, idx - 1)) < 0 || (err = ptc_trace_read(t, &prev, 1)) != 1)
			goto readerr;
		block_start = ptc_record_dest(&prev);
	}
	if ((err = ptc_trace_read(t, &r, 1)) != 1)
		goto readerr;
	if (!block_start && before) {
		ptc_cli_error("%s: instruction %" PRIu64 " is inside the first block, whose start is not"
			      " in the trace", in, start);
		ptc_trace_close(t);
		return PTC_EXIT_INPUT;
	}
	ptc_trace_code_reader(t, &code);
	if (ptc_insn_skip(&code, block_start, before, &first_ip) < before) {
		ptc_cli_error("%s: no code bytes to find instruction %" PRIu64, in, start);
		ptc_trace_close(t);
		return PTC_EXIT_INPUT;
	}
	/* Write through the ptconv writer into a temporary name, then rename. */
	snprintf(tmpdir, sizeof(tmpdir), "%s", out);
	snprintf(prefix, sizeof(prefix), ".ptconv-slice-%ld", (long)getpid());
	cfg.outdir = dirname(tmpdir);
	cfg.prefix = prefix;
	if ((err = ptc_trace_writer_begin(t, "ptconv", &cfg, &code, &syms, &w, &s)) < 0)
		goto werr;
	{
		struct ptc_gap g = { PTC_GAP_START, 0, UINT64_MAX, r.time, 0, first_ip, 0, 0, "slice start" };
		if ((err = s.gap(s.ctx, &g)) < 0)
			goto werr;
	}
	done = 0;
	for (;;) {
		if (r.kind == PTC_TRACE_GAP) {
			struct ptc_trace_gap tg;
			struct ptc_gap g;
			if ((err = ptc_trace_gap(t, r.insns, &tg)) < 0)
				goto readerr;
			ptc_gap_from_trace(&tg, &g);
			if ((err = s.gap(s.ctx, &g)) < 0)
				goto werr;
		} else {
			struct ptc_branch b;
			uint32_t n = r.insns - before;
			if (done + n > count) {
				tail = count - done;
				break;
			}
			ptc_branch_from_record(&r, &b);
			b.insns = n;
			/* (the record just read: its symbols are kept) */
			syms.record = ptc_trace_tell(t, NULL) - 1;
			b.flags = (uint8_t)(r.flags | (done == 0 ? PTC_TRACE_SLICE_START : 0));
			if ((err = s.branches(s.ctx, &b, 1)) < 0)
				goto werr;
			done += n;
			before = 0;
			if (done == count)
				break;
		}
		err = ptc_trace_read(t, &r, 1);
		if (err < 0)
			goto readerr;
		if (err == 0) {
			tail = count - done;	/* only the file's own tail is left */
			break;
		}
	}
	if ((err = ptc_writer_tail(w, tail)) < 0 || (err = s.end(s.ctx)) < 0)
		goto werr;
	snprintf(tmpfile, sizeof(tmpfile), "%s/%s.%u.ptc", cfg.outdir, prefix, info.tid);
	if (rename(tmpfile, out) < 0) {
		ptc_cli_error("%s: %s", out, strerror(errno));
		unlink(tmpfile);
		goto out;
	}
	rc = PTC_EXIT_OK;
	goto out;
badnum:
	ptc_cli_error("slice: bad number '%s'", optarg);
	return PTC_EXIT_USAGE;
readerr:
	ptc_cli_error("%s", ptc_trace_errmsg(t)[0] ? ptc_trace_errmsg(t) : ptc_errstr(err));
	rc = PTC_EXIT_INPUT;
	goto out;
werr:
	ptc_cli_error("%s", w && ptc_writer_errmsg(w)[0] ? ptc_writer_errmsg(w) : ptc_errstr(err));
	snprintf(tmpfile, sizeof(tmpfile), "%s/%s.%u.ptc", cfg.outdir, prefix, info.tid);
	unlink(tmpfile);
out:
	ptc_writer_free(w);
	ptc_trace_close(t);
	return rc;
}
