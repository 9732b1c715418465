/* ptconv convert: command line of the conversion; routes the recording to
 * the pipeline of its trace kind (AUXTRACE_INFO type), and a trace of
 * ptconv's own format to its re-conversion (convert_ptc.c). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/error.h"
#include "convert/pt_convert.h"
#include "input/perf_reader.h"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: ptconv [convert] FILE [options]\n"
		"       ptconv [convert] TRACE.ptc... [-f LIST] [--bbv N] [-o DIR] [-j N]\n"
		"       ptconv [convert] --pt FILE --image PATH[:ADDR[:OFFSET]]... [--cpu F/M/S] [options]\n"
		"  -f, --format LIST     output formats, comma-separated (default ptconv):\n"
		"                          ptconv   ptconv's own compact trace (.ptc), every instruction\n"
		"                          bt9      CBP2016 BT9 branch graph (.bt9.gz)\n"
		"                          champsim ChampSim input_instr records (.champsim.xz)\n"
		"                          cbp2025  CBP2025 per-instruction trace (.cbp2025.gz)\n"
		"                          xtrace   xtrace token streams (xtrace.*.xinsndata.bin)\n"
		"                          xray     LLVM XRay FDR log per process, its map (xray.PID.*)\n"
		"                          perfetto function calls as a Perfetto timeline (perfetto.pftrace)\n"
		"                          cbpexp   cbp-experiments trace (.cbpexp)\n"
		"                          text     one line per branch (.txt)\n"
		"                        an entry takes options: FORMAT:LEVEL (compression level),\n"
		"                        champsim:gz (gzip instead of xz), cbp2025:slots (every\n"
		"                        pc as 4 * pc), xray:threads (a log per thread),\n"
		"                        perfetto:min-dur=N (no call shorter than N ns),\n"
		"                        perfetto:max-depth=N (none nested deeper); see\n"
		"                        ptconv-formats(5)\n"
		"      --bbv N           also write SimPoint basic-block vectors every N instructions\n"
		"  -o, --output DIR      output directory (default FILE.ptconv)\n"
		"      --per-cpu         one trace per CPU instead of per thread\n"
		"      --pid PID, --tid TID, --comm NAME   write only these threads\n"
		"      --time START,END  perf times (ns) to keep\n"
		"      --symfs DIR       look for binaries under DIR\n"
		"      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n"
		"      --table-cache DIR keep the images' branch tables in DIR for later runs\n"
		"                        (default $XDG_CACHE_HOME/ptconv/tables, else\n"
		"                        ~/.cache/ptconv/tables); --no-table-cache: none\n"
		"  -j, --jobs N          threads (default: every online CPU): decoding trace\n"
		"                        windows ahead and per-thread queues in parallel, and\n"
		"                        compressing champsim and cbp2025 (N shared by the open\n"
		"                        files); the same output for any N\n"
		"      --max-open-outputs N  threads whose outputs stay open at once (default: what\n"
		"                        4 GiB hold, 40 for xz, within the open-file limit);\n"
		"                        the others are closed and appended to when they run\n"
		"                        again\n"
		"      --engine E        walker (default), steps (the walker one branch at a\n"
		"                        time, without its memo of TNT paths), query (the walker\n"
		"                        over libipt's query decoder alone) or libipt (its block\n"
		"                        decoder)\n"
		"      --strict          exit 1 when the output has gaps\n"
		"      --force           use images whose build-id differs\n"
		"      --check-partial   decode AUX data flagged PARTIAL, keeping what the next PSB confirms\n"
		"  -q, --quiet           no summary on stderr\n"
		"See ptconv-convert(1).\n");
}

/* An unsigned number at *s (no sign), *s moved past it: 0, or -1. */
static int parse_ns(const char **s, uint64_t *v)
{
	char *end;

	if (**s == '-' || **s == '+')
		return -1;
	*v = strtoull(*s, &end, 0);
	if (end == *s)
		return -1;
	*s = end;
	return 0;
}

static int parse_time(const char *s, uint64_t *a, uint64_t *b)
{
	*a = 0;
	*b = UINT64_MAX;
	if (*s != ',' && parse_ns(&s, a) < 0)
		return -1;
	if (*s == ',') {
		s++;
		if (*s && parse_ns(&s, b) < 0)
			return -1;
	}
	return *s || *a > *b ? -1 : 0;	/* (an empty range selects nothing: a mistake) */
}

/* An option's whole argument as a decimal integer in [min, max]: 0, or -1
 * after saying what the option takes (exit status 2 follows). */
static int parse_int(const char *opt, const char *arg, long min, long max, const char *what, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (end == arg || *end || errno || v < min || v > max) {
		ptc_cli_error("%s takes %s from %ld to %ld, not '%s'", opt, what, min, max, arg);
		return -1;
	}
	*out = v;
	return 0;
}

/* SIGINT or SIGTERM: the signal, for the conversion to see at its next
 * trace window (ptc_convert_options.interrupted). */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static int convert(int argc, char **argv);

int cmd_convert(int argc, char **argv)
{
	struct sigaction sa, old_int, old_term;
	int ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	ret = convert(argc, argv);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (stop_signal) {
		/* the unfinished files are gone: die of the signal, as the
		 * shell or make that sent it expects */
		signal(stop_signal, SIG_DFL);
		raise(stop_signal);
	}
	return ret;
}

/* Where the branch tables are kept by default, as other tools keep their
 * caches (the XDG base directories): NULL when there is no home. */
static const char *default_table_dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/ptconv/tables", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/ptconv/tables", home);
	else
		return NULL;
	return n > 0 && (size_t)n < len ? buf : NULL;
}

static int convert(int argc, char **argv)
{
	enum { O_PER_CPU = 256, O_PID, O_TID, O_COMM, O_TIME, O_SYMFS, O_BUILDID, O_STRICT,
	       O_FORCE, O_ENGINE, O_PT, O_IMAGE, O_CPU, O_LEVEL, O_CHECK_PARTIAL, O_BBV,
	       O_MAX_OPEN, O_TABLE_CACHE, O_NO_TABLE_CACHE };
	static const struct option lo[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "per-cpu", no_argument, NULL, O_PER_CPU },
		{ "pid", required_argument, NULL, O_PID },
		{ "tid", required_argument, NULL, O_TID },
		{ "comm", required_argument, NULL, O_COMM },
		{ "time", required_argument, NULL, O_TIME },
		{ "symfs", required_argument, NULL, O_SYMFS },
		{ "buildid-dir", required_argument, NULL, O_BUILDID },
		{ "table-cache", required_argument, NULL, O_TABLE_CACHE },
		{ "no-table-cache", no_argument, NULL, O_NO_TABLE_CACHE },
		{ "jobs", required_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, O_STRICT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "force", no_argument, NULL, O_FORCE },
		{ "engine", required_argument, NULL, O_ENGINE },
		{ "pt", required_argument, NULL, O_PT },
		{ "image", required_argument, NULL, O_IMAGE },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "zstd-level", required_argument, NULL, O_LEVEL },
		{ "check-partial", no_argument, NULL, O_CHECK_PARTIAL },
		{ "bbv", required_argument, NULL, O_BBV },
		{ "max-open-outputs", required_argument, NULL, O_MAX_OPEN },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ptc_convert_options o;
	struct ptc_pt_options pt;
	const char *images[256];
	struct ptc_perf_reader *r;
	char err_s[512], table_dir[4096];
	int c, ret, table_cache = 1, table_opt = 0;

	memset(&o, 0, sizeof(o));
	memset(&pt, 0, sizeof(pt));
	o.interrupted = &stop_signal;
	o.pid = o.tid = -1;
	o.time_end = UINT64_MAX;
	{
		/* every online CPU (ptconv-convert(1): the output is the same
		 * for any -j) */
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o.jobs = n < 1 ? 1 : n > 64 ? 64 : (int)n;
	}
	pt.images = images;
	pt.zstd_level = 3;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:j:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'f': o.formats = optarg; break;
		case 'o': o.outdir = optarg; break;
		case 'j': {
			long n;
			if (parse_int("-j", optarg, 1, 1024, "a number of threads", &n) < 0)
				return PTC_EXIT_USAGE;
			o.jobs = (int)n;
			break;
		}
		case 'q': o.quiet = 1; break;
		case 'h': usage(stdout); return PTC_EXIT_OK;
		case O_PER_CPU: o.per_cpu = 1; break;
		case O_PID:
			if (parse_int("--pid", optarg, 0, 4194304, "a process id", &o.pid) < 0)
				return PTC_EXIT_USAGE;
			break;
		case O_TID:
			if (parse_int("--tid", optarg, 0, 4194304, "a thread id", &o.tid) < 0)
				return PTC_EXIT_USAGE;
			break;
		case O_COMM: o.comm = optarg; break;
		case O_TIME:
			if (parse_time(optarg, &o.time_start, &o.time_end) < 0) {
				ptc_cli_error("--time: expected START,END in ns with START <= END, got '%s'", optarg);
				return PTC_EXIT_USAGE;
			}
			break;
		case O_SYMFS: o.symfs = optarg; break;
		case O_BUILDID: o.buildid_dir = optarg; break;
		case O_TABLE_CACHE:
			if (!*optarg) {
				ptc_cli_error("--table-cache: expected a directory");
				return PTC_EXIT_USAGE;
			}
			o.table_dir = optarg;
			table_cache = table_opt = 1;
			break;
		case O_NO_TABLE_CACHE: table_cache = 0; table_opt = 1; o.table_dir = NULL; break;
		case O_STRICT: o.strict = 1; break;
		case O_FORCE: o.force = 1; break;
		case O_ENGINE:
			if (!strcmp(optarg, "libipt"))
				pt.engine_libipt = 1;
			else if (!strcmp(optarg, "query"))
				pt.engine_query = 1;
			else if (!strcmp(optarg, "steps"))
				pt.engine_steps = 1;
			else if (strcmp(optarg, "walker")) {
				ptc_cli_error("--engine: walker, steps, query or libipt, not '%s'", optarg);
				return PTC_EXIT_USAGE;
			}
			break;
		case O_PT: pt.raw_pt = optarg; break;
		case O_IMAGE:
			if (pt.nr_images == sizeof(images) / sizeof(images[0])) {
				ptc_cli_error("too many --image");
				return PTC_EXIT_USAGE;
			}
			images[pt.nr_images++] = optarg;
			break;
		case O_CPU: pt.cpu = optarg; break;
		case O_LEVEL: {
			long v;
			if (parse_int("--zstd-level", optarg, -1, 22, "a compression level", &v) < 0)
				return PTC_EXIT_USAGE;
			pt.zstd_level = (int)v;
			break;
		}
		case O_CHECK_PARTIAL: pt.check_partial = 1; break;
		case O_BBV: {
			char *end;
			pt.bbv_interval = strtoull(optarg, &end, 0);
			if (*end || !pt.bbv_interval || *optarg == '-') {
				ptc_cli_error("--bbv: expected a positive instruction count, got '%s'", optarg);
				return PTC_EXIT_USAGE;
			}
			break;
		}
		case O_MAX_OPEN: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 0);
			if (*end || !v || v > 1000000 || *optarg == '-') {
				ptc_cli_error("--max-open-outputs: expected a count from 1, got '%s'", optarg);
				return PTC_EXIT_USAGE;
			}
			o.max_open_outputs = (unsigned)v;
			break;
		}
		default: usage(stderr); return PTC_EXIT_USAGE;
		}
	}
	pt.progress = isatty(2);
	if (table_cache && !o.table_dir)
		o.table_dir = default_table_dir(table_dir, sizeof(table_dir));
	if (pt.raw_pt) {
		if (optind != argc) {
			ptc_cli_error("--pt takes the trace file; unexpected '%s'", argv[optind]);
			return PTC_EXIT_USAGE;
		}
		if (!pt.nr_images) {
			ptc_cli_error("--pt needs at least one --image");
			return PTC_EXIT_USAGE;
		}
		o.input = pt.raw_pt;
		return ptc_convert_raw_pt(&o, &pt);
	}
	if (optind + 1 > argc || (optind + 1 < argc && !ptc_is_ptc_trace(argv[optind]))) {
		usage(stderr);
		return PTC_EXIT_USAGE;
	}
	o.input = argv[optind];

	if (strcmp(o.input, "-") && ptc_is_ptc_trace(o.input)) {
		int k;
		/* several: the threads of a process, for the formats that
		 * write them together (xray, perfetto) */
		for (k = optind + 1; k < argc; k++) {
			if (!ptc_is_ptc_trace(argv[k])) {
				ptc_cli_error("%s: not a ptconv trace (several inputs are the .ptc traces "
					      "of a process's threads)", argv[k]);
				return PTC_EXIT_USAGE;
			}
		}
		/* one thread's trace, its code inside: nothing to decode,
		 * select or look up */
		if (o.per_cpu || o.pid != -1 || o.tid != -1 || o.comm || o.time_start ||
		    o.time_end != UINT64_MAX || o.symfs || o.buildid_dir || table_opt || o.force ||
		    pt.engine_libipt || pt.engine_query || pt.engine_steps || pt.check_partial || pt.cpu || o.max_open_outputs) {
			ptc_cli_error("%s: a ptconv trace takes only -f, --bbv, -o, -j, -q and --strict",
				      o.input);
			return PTC_EXIT_USAGE;
		}
		return ptc_convert_ptc(&o, (const char *const *)argv + optind, argc - optind, pt.bbv_interval);
	}
	if (ptc_perf_open(&r, o.input, err_s, sizeof(err_s)) < 0) {
		ptc_cli_error("%s", err_s);
		return PTC_EXIT_INPUT;
	}
	/* The AUXTRACE_INFO record says which trace this is; perf writes it
	 * before any trace data, so a second reader does the conversion.  In
	 * a file whose records are out of order it is looked for further on
	 * (the converters take it wherever it is); a pipe cannot be read
	 * twice: there, trace data before it ends the search. */
	{
		struct ptc_perf_record rec;
		uint32_t type = 0;
		uint64_t first_aux = UINT64_MAX, info_at = 0;
		int err;

		while ((err = ptc_perf_next(r, &rec)) > 0) {
			struct ptc_perf_auxtrace_info ai;
			if (rec.type == PTC_REC_AUXTRACE && first_aux == UINT64_MAX) {
				first_aux = rec.offset;
				if (!strcmp(o.input, "-"))
					break;
			}
			if (rec.type == PTC_REC_AUXTRACE_INFO && ptc_perf_parse_auxtrace_info(&rec, &ai) == 0) {
				type = ai.type;
				info_at = rec.offset;
				break;
			}
		}
		if (err < 0) {
			ptc_cli_error("%s", ptc_perf_errmsg(r));
			ptc_perf_close(r);
			return PTC_EXIT_INPUT;
		}
		if (type && first_aux != UINT64_MAX && !o.quiet)
			ptc_cli_error("warning: %s: offset 0x%" PRIx64 ": trace data (AUXTRACE) before the "
				      "AUXTRACE_INFO record at offset 0x%" PRIx64 ": records out of order, "
				      "read all the same", o.input, first_aux, info_at);
		if (type != PTC_AUXTRACE_INTEL_PT && type != PTC_AUXTRACE_ARM_SPE) {
			if (type == 0 && first_aux != UINT64_MAX && !strcmp(o.input, "-"))
				ptc_cli_error("%s: offset 0x%" PRIx64 ": trace data (AUXTRACE) before any "
					      "AUXTRACE_INFO record, which says what trace it is: records out "
					      "of order, or the AUXTRACE_INFO record lost; give the recording as "
					      "a file to look further", "standard input", first_aux);
			else if (type == 0 && ptc_perf_nr_skips(r))
				ptc_cli_error("%s: no AUXTRACE_INFO record, which says what trace the recording "
					      "holds; the input is damaged, the record may have been in it: %s",
					      o.input, ptc_perf_skip(r, 0)->message);
			else if (type == 0)
				ptc_cli_error("%s: no hardware trace in this recording (no AUXTRACE_INFO record)",
					      o.input);
			else
				ptc_cli_error("%s: unsupported trace type %u (%s); ptconv converts Intel PT (1) "
					      "and ARM SPE (4)", o.input, type,
					      type == PTC_AUXTRACE_CS_ETM ? "CoreSight ETM"
					      : type == PTC_AUXTRACE_INTEL_BTS ? "Intel BTS" : "unknown");
			ptc_perf_close(r);
			return PTC_EXIT_INPUT;
		}
		if (strcmp(o.input, "-")) {
			ptc_perf_close(r);
			if (ptc_perf_open(&r, o.input, err_s, sizeof(err_s)) < 0) {
				ptc_cli_error("%s", err_s);
				return PTC_EXIT_INPUT;
			}
		} else if (type == PTC_AUXTRACE_INTEL_PT) {
			ptc_cli_error("standard input: give the recording as a file (pipe-mode files are fine)");
			ptc_perf_close(r);
			return PTC_EXIT_USAGE;
		}
		if (type == PTC_AUXTRACE_ARM_SPE)
			ret = ptc_convert_arm_spe(&o, r);
		else
			ret = ptc_convert_intel_pt(&o, &pt, r);
	}
	ptc_perf_close(r);
	return ret;
}
