/* The interface between the writer registry (writers.c) and each format. */
#ifndef PTC_WRITERS_FMT_H
#define PTC_WRITERS_FMT_H

#include <stdarg.h>
#include <stdint.h>

#include "common/error.h"
#include "common/trace_event.h"
#include "writers/writers.h"

/* Shared state a format reports errors and warnings into. */
struct ptc_wctx {
	char err[512];
	char *warn;
	size_t warn_len;
};

/* Record an error "file: reason" and return -code. */
int ptc_wfail(struct ptc_wctx *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ptc_wwarn(struct ptc_wctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Build "outdir/prefix.TID.suffix" into buf. */
int ptc_wpath(char *buf, size_t size, const struct ptc_writer_config *cfg,
	      const struct ptc_thread_info *t, const char *suffix);

struct ptc_fmt_ops {
	struct ptc_writer_format fmt;
	int (*open)(void **st, const struct ptc_writer_config *cfg,
		    const struct ptc_thread_info *t, struct ptc_wctx *c);
	int (*branches)(void *st, const struct ptc_branch *b, size_t n);
	int (*gap)(void *st, const struct ptc_gap *g);
	int (*finish)(void *st);
	void (*free)(void *st);
};

extern const struct ptc_fmt_ops ptc_fmt_ptconv, ptc_fmt_bt9, ptc_fmt_champsim,
	ptc_fmt_cbp2025, ptc_fmt_xtrace, ptc_fmt_bbv;

#endif
