/* gen: turns an execution, event by event (struct truth_event), into the
 * perf.data `perf record -e intel_pt//u` would have written for it.  Used by
 * ptgen-encode (events from a .truth file) and ptgen-walk (events from a
 * random walk over a binary's code).
 *
 *	g = gen_new(&options, fd);
 *	for each event: gen_scan(g, &ev);	(first pass)
 *	gen_begin(g);				(header, attrs, AUXTRACE_INFO)
 *	for each event: gen_event(g, &ev);	(second pass, same events)
 *	gen_finish(g); gen_free(g);
 *
 * Errors are fatal: a message on stderr and exit(1) (these are test tools).
 */
#ifndef PTGEN_GEN_H
#define PTGEN_GEN_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "truth.h"

struct gen_options {
	const char *truth;	/* for messages and relative dump paths */
	const char *out, *buildid_dir, *gaps, *aux_dump;
	int retcomp, tsc, mtc, cyc, long_tnt;
	unsigned mtc_period, psb_period;
	unsigned cpus;
	unsigned migrate;	/* --migrate N: a thread moves CPU every N-th switch-in */
	int per_thread, pipe;
	uint64_t ovf_at, ovf_drop;
	uint64_t drop_bytes, drop_offset;
	unsigned drop_queue;
	int drop;		/* 1: --drop (bytes cut, PARTIAL), 2: --truncate (TRUNCATED) */
	uint64_t interrupt_every;
	size_t chunk;
	int zlevel;		/* perf record -z: COMPRESSED records */
	/* --sched-switch FILE: per-CPU switches as sched:sched_switch samples,
	 * with the tracing data and tracepoint id of the real recording FILE */
	const char *sched_switch;
	uint64_t lost_at_switch;	/* --lost-at-switch N: LOST record before the N-th switch */
};

struct gen;

void gen_options_init(struct gen_options *o);
/* getopt_long options shared by the tools (vals >= 256) and their help. */
extern const struct option gen_long_options[];
void gen_options_help(FILE *f);
/* Handles a gen_long_options value; 0 if c is not one of them. */
int gen_option(struct gen_options *o, int c, char *arg);
/* Checks the option values (fatal when out of range). */
void gen_options_check(const struct gen_options *o);

struct gen *gen_new(const struct gen_options *o, int fd);
void gen_scan(struct gen *g, const struct truth_event *ev);
void gen_begin(struct gen *g);
void gen_event(struct gen *g, struct truth_event *ev);
void gen_finish(struct gen *g);
void gen_stats(const struct gen *g, FILE *f);
uint64_t gen_aux_bytes(const struct gen *g);
void gen_free(struct gen *g);

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
