/* The interface between the writer registry (writers.c) and each format. */
#ifndef PTC_WRITERS_FMT_H
#define PTC_WRITERS_FMT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>

#include "common/error.h"
#include "common/trace_event.h"
#include "writers/writers.h"
#include "writers/wutil.h"

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

/* A thread's output split at losses (ptconv-formats(5)): one complete file
 * per gap-free run, PREFIX.TID.EXT first, then PREFIX.TID.partN.EXT for
 * the records after the N-th loss.  Formats whose files cannot say "data
 * was lost here" (BT9, ChampSim, CBP2025) use it, so that no record is
 * followed by one that did not run after it.  A stream (re)start is no
 * loss; a loss before any record of a part starts no new part, and the
 * part after a loss is created by its first record (a loss at the end
 * leaves no empty file). */
struct ptc_wparts {
	struct ptc_wctx *c;
	const struct ptc_writer_config *cfg;
	struct ptc_thread_info thread;
	const char *ext;		/* "bt9.gz", "champsim.xz", ... */
	/* How a part is written: by the format (open and close on st, the
	 * file being path), or when open is NULL as one compressed stream z
	 * of zkind at level. */
	int (*open)(void *st);
	int (*close)(void *st);
	void *st;
	enum ptc_zkind zkind;
	int level;
	int threads;			/* > 0: ptc_zout_open_mt with up to that many */
	int granted;			/* compression threads z holds from the pool */
	struct ptc_zout *z;		/* NULL while suspended (ptc_wparts_suspend) */
	struct ptc_zsusp *sus;		/* the suspended stream, until it goes on */
	char path[4096];		/* the part being written, or the last one */
	char tmp[4096];			/* its temporary name (ptc_out_tmpname), which
					   open and close use: ptc_wparts_close
					   renames it to path */
	unsigned part;			/* its number, 0 for the first */
	int is_open, has_records;
	uint64_t losses;		/* loss gaps seen (not stream starts) */
};

/* Set up p (the caller then sets open/close/st or zkind/level) without
 * creating a file. */
void ptc_wparts_init(struct ptc_wparts *p, const struct ptc_writer_config *cfg,
		     const struct ptc_thread_info *t, struct ptc_wctx *c, const char *ext);
/* Create the file of part p->part. */
int ptc_wparts_open(struct ptc_wparts *p);
/* Before writing records: opens the part that follows a loss. */
static inline int ptc_wparts_want(struct ptc_wparts *p)
{
	int err;

	if (!p->is_open && (err = ptc_wparts_open(p)) < 0)
		return err;
	p->has_records = 1;
	return 0;
}
/* Write n bytes to the part's stream z (open is NULL); a failure is
 * reported with the part's path. */
int ptc_wparts_write(struct ptc_wparts *p, const void *buf, size_t n);
/* A gap: a loss after records of the part ends the part. */
int ptc_wparts_gap(struct ptc_wparts *p, const struct ptc_gap *g);
/* Finish the part being written, if any. */
int ptc_wparts_close(struct ptc_wparts *p);
/* Error paths: drop the stream without finishing it. */
void ptc_wparts_free(struct ptc_wparts *p);

/* An uncompressed output file that a suspension (ptc_fmt_ops.suspend)
 * closes: ptc_wfile_resume reopens it for appending when *z is NULL, so
 * that the file's bytes are those it would have had open all along;
 * ptc_wfile_close closes it if open (*z becomes NULL).  Failures name
 * the file in c. */
int ptc_wfile_resume(struct ptc_wctx *c, struct ptc_zout **z, const char *path);
int ptc_wfile_close(struct ptc_wctx *c, struct ptc_zout **z, const char *path);
/* Open a new output file path under its temporary name (ptc_out_tmpname),
 * and, when it is complete, close it and give it its name. */
int ptc_wfile_open(struct ptc_wctx *c, struct ptc_zout **z, const char *path);
int ptc_wfile_finish(struct ptc_wctx *c, struct ptc_zout **z, const char *path);
/* Report a failed rename of path's temporary (ptc_out_commit). */
int ptc_wfail_commit(struct ptc_wctx *c, const char *path);
/* A compressed stream of path failed in what ("write", "close"...) with err
 * (a ptc_zout_* result) and err_no (the system's reason): the encoder out
 * of memory is said as such ("compressing ran out of memory"), not as a
 * write error.  Returns -ptc_err_io: the output failed (exit 4). */
int ptc_wfail_z(struct ptc_wctx *c, const char *path, int err, int err_no, const char *what);
/* Suspend the part's stream and close its file (ptc_writer_pool,
 * ptc_zout_suspend); the next ptc_wparts_write goes on with the same
 * stream. */
int ptc_wparts_suspend(struct ptc_wparts *p);

/* Compression threads for one file from cfg->pool: up to want, at least
 * 1; given back with ptc_writer_pool_put_threads. */
int ptc_writer_pool_get_threads(struct ptc_writer_pool *pool, int want);
void ptc_writer_pool_put_threads(struct ptc_writer_pool *pool, int n);

#define PTC_FMT_DETACHED 1

struct ptc_fmt_ops {
	struct ptc_writer_format fmt;
	int (*open)(void **st, const struct ptc_writer_config *cfg,
		    const struct ptc_thread_info *t, struct ptc_wctx *c);
	int (*branches)(void *st, const struct ptc_branch *b, size_t n);
	int (*gap)(void *st, const struct ptc_gap *g);
	/* 0, a negative error, or PTC_FMT_DETACHED: the rest of the file's
	 * end went to cfg->jobs->detach(), whose job frees st (free() is not
	 * called; a failure is the job's, told by its writer's error). */
	int (*finish)(void *st);
	void (*free)(void *st);
	/* Optional: give up the open outputs and large buffers while the
	 * thread is idle (ptc_writer_pool); the next event reopens them. */
	int (*suspend)(void *st);
	/* Optional: insns instructions after the last branch, before
	 * finish (ptc_writer_tail); NULL ignores them. */
	int (*tail)(void *st, uint64_t insns);
	/* Optional: branches with the paths among them marked (struct
	 * ptc_sink's paths); NULL: branches() gets them. */
	int (*paths)(void *st, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm);
	/* Optional: the thread's next branches ran on CPU cpu
	 * (ptc_writer_cpu); NULL ignores it. */
	int (*cpu)(void *st, uint32_t cpu);
	/* Optional, together: records encoded ahead (ptc_writer_ahead_tables,
	 * ptc_writer_ahead_room, ptc_writer_splice). */
	struct ptc_ahead_tables *(*ahead_tables)(void *st);
	uint64_t (*ahead_room)(void *st, const struct ptc_ahead_out *o);
	int (*splice)(void *st, const struct ptc_ahead_out *o);
};

/* The files the threads of a conversion share (ptc_writer_procs): each
 * format that writes such files (xray, perfetto) keeps its threads' parts
 * in a list of its own until ptc_writer_procs_finish(), which has each
 * write its files from them; the parts of what was not finished go with
 * ptc_writer_procs_free(). */
enum ptc_procs_kind { PTC_PROCS_XRAY, PTC_PROCS_PERFETTO, PTC_PROCS_NR };

struct ptc_procs_list {
	void **v;
	size_t n, cap;
};

struct ptc_writer_procs {
	pthread_mutex_t mu;
	char outdir[4096];	/* where the first part's writer writes */
	struct ptc_procs_list list[PTC_PROCS_NR];
};

/* What each part starts with: the thread it is of. */
struct ptc_procs_part {
	uint32_t pid, tid;
};

/* Sort the parts of kind by process, then thread. */
void ptc_procs_sort(struct ptc_writer_procs *p, enum ptc_procs_kind kind);

/* Add a thread's part to the list of kind (thread-safe).  0 or
 * -ptc_err_nomem. */
int ptc_procs_add(struct ptc_writer_procs *p, enum ptc_procs_kind kind, void *part, const char *outdir);

/* For a thread's writer of such a format (name): 0 when the conversion
 * has procs and t is a thread's stream, else the error, told in c. */
int ptc_procs_check(const struct ptc_writer_config *cfg, const struct ptc_thread_info *t, struct ptc_wctx *c,
		    const char *name);
/* Its part's spool, NAME.PID.TID.spool into spool: never a final name,
 * only its temporary (ptc_out_tmpname), which a killed run leaves to the
 * next run's ptc_out_clean; created and open in *z, and part added to the
 * list of kind.  0, or an error told in c, and then no file, *z NULL and
 * part not in the list. */
int ptc_procs_spool(const struct ptc_writer_config *cfg, struct ptc_wctx *c, enum ptc_procs_kind kind,
		    const char *name, struct ptc_procs_part *part, char *spool, size_t size, struct ptc_zout **z);

/* Each format's: write its files from its parts (the list is sorted and
 * emptied by the caller's lock held: p->mu), and free a part. */
int ptc_xray_procs_finish(struct ptc_writer_procs *p, struct ptc_wctx *c);
void ptc_xray_part_free(void *part);
int ptc_perfetto_procs_finish(struct ptc_writer_procs *p, struct ptc_wctx *c);
void ptc_perfetto_part_free(void *part);

extern const struct ptc_fmt_ops ptc_fmt_ptconv, ptc_fmt_bt9, ptc_fmt_champsim,
	ptc_fmt_cbp2025, ptc_fmt_xtrace, ptc_fmt_bbv, ptc_fmt_xray, ptc_fmt_perfetto;

#endif
