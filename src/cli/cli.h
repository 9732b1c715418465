/* The ptconv command line: one subcommand per verb, each in cmd_<verb>.c. */
#ifndef PTC_CLI_CLI_H
#define PTC_CLI_CLI_H

#include <signal.h>

#include <stdint.h>

#include "writers/writers.h"

/* Exit statuses (documented in ptconv(1)). */
enum ptc_exit {
	PTC_EXIT_OK = 0,	/* done, the output is exact */
	PTC_EXIT_GAPS = 1,	/* done, but the output has gaps (failure only with --strict) */
	PTC_EXIT_USAGE = 2,	/* bad command line */
	PTC_EXIT_INPUT = 3,	/* unusable input (not perf.data, unreadable, no trace) */
	PTC_EXIT_OUTPUT = 4,	/* the output could not be written */
	PTC_EXIT_INTERRUPTED = 5,	/* stopped by SIGINT or SIGTERM (the command then
					   dies of that signal) */
};

int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_packets(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_slice(int argc, char **argv);

/* Options shared by every conversion pipeline (Intel PT, ARM SPE, ...). */
struct ptc_convert_options {
	const char *input;		/* perf.data path, "-" for standard input */
	const char *formats;		/* comma-separated -f list, NULL for the default */
	const char *outdir;		/* -o, default INPUT.ptconv */
	const char *symfs;		/* --symfs */
	const char *buildid_dir;	/* --buildid-dir, default ~/.debug */
	const char *table_dir;		/* --table-cache, NULL for none (--no-table-cache) */
	const char *comm;		/* --comm filter */
	long pid, tid;			/* --pid/--tid filters, -1 for none */
	uint64_t time_start, time_end;	/* --time, 0/UINT64_MAX for none */
	int jobs;			/* -j */
	unsigned max_open_outputs;	/* --max-open-outputs, 0 for the default */
	int per_cpu;			/* --per-cpu */
	int strict, quiet, force;
	/* Non-zero once the user asked to stop (set by a signal handler): the
	 * conversion stops at its next trace window, keeps the files that are
	 * complete, removes the others and returns PTC_EXIT_INTERRUPTED. */
	const volatile sig_atomic_t *interrupted;
};

struct ptc_perf_reader;
/* The ARM SPE pipeline (src/cli/convert_spe.c): called by cmd_convert when
 * the recording's AUXTRACE_INFO says arm_spe; returns an enum ptc_exit. */
int ptc_convert_arm_spe(const struct ptc_convert_options *opt, struct ptc_perf_reader *r);

/* ptconv convert TRACE.ptc... (src/cli/convert_ptc.c): traces of ptconv's
 * own format (of different threads) into opt->formats, their code and
 * symbols from the traces; an enum ptc_exit. */
int ptc_convert_ptc(const struct ptc_convert_options *opt, const char *const *inputs, int n_inputs,
		    uint64_t bbv_interval);
/* A writer of formats (ptc_writer_new with cfg, cfg->code set to code,
 * which reads the code embedded in t) for t's thread, begun; its sink in
 * *s.  0 or a negative error (*w may be set: free it). */
struct ptc_trace;
struct ptc_writer;
struct ptc_writer_config;
struct ptc_code_reader;
struct ptc_sink;
struct ptc_trace_syms;
int ptc_trace_writer_begin(struct ptc_trace *t, const char *formats, struct ptc_writer_config *cfg,
			   struct ptc_code_reader *code, struct ptc_trace_syms *syms, struct ptc_writer **w,
			   struct ptc_sink *s);
/* The function symbols t embeds, as the writers ask for them
 * (cfg->symbols): the answers at record number `record` of t, which the
 * caller keeps at the record being written (the answers change only at
 * ptc_trace_symbols_change()). */
struct ptc_trace_syms {
	struct ptc_symbol_reader reader;
	struct ptc_trace *t;
	uint64_t record;
};
/* A code reader over the code bytes embedded in t (ptc_trace_code). */
void ptc_trace_code_reader(struct ptc_trace *t, struct ptc_code_reader *code);
/* Whether path starts like a ptconv trace. */
int ptc_is_ptc_trace(const char *path);
/* ptconv info TRACE.ptc (src/cli/info_ptc.c): its header facts and where
 * its bytes go, as text or JSON; an enum ptc_exit. */
int ptc_info_ptc(const char *path, int json);

/* A record read back with libptconv-trace as the writers' event. */
struct ptc_trace_record;
struct ptc_trace_gap;
struct ptc_branch;
struct ptc_gap;
void ptc_branch_from_record(const struct ptc_trace_record *r, struct ptc_branch *b);
/* (g->detail points into tg's.) */
void ptc_gap_from_trace(const struct ptc_trace_gap *tg, struct ptc_gap *g);
/* Where execution goes on after record r (a gap: where it resumed). */
uint64_t ptc_record_dest(const struct ptc_trace_record *r);

/* Print "ptconv: " and the message to stderr. */
void ptc_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The heap tuned for a conversion, once before anything else (heap.c). */
void ptc_cli_tune_heap(void);

#endif
