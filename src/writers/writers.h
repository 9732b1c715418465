/* Output-format writers: the registry the convert command uses.
 *
 * A writer turns one thread's branch-event stream (common/trace_event.h) into
 * files of one or several formats in an output directory.  It knows nothing
 * of perf.data or of the trace hardware.  Usage, per traced thread:
 *
 *	struct ptc_writer_config cfg = { .outdir = "x.ptconv", .code = code };
 *	struct ptc_writer *w;
 *	int err = ptc_writer_new(&w, "ptconv,bt9", &cfg);
 *	struct ptc_sink sink = ptc_writer_sink(w);
 *	... decoder calls sink.begin (once), sink.branches/sink.gap, sink.end ...
 *	ptc_writer_free(w);
 *
 * begin() creates the files (named after the thread: see each format's man
 * page), end() completes them; a writer freed without end() leaves its
 * partial files in place (they are marked incomplete where the format can).
 * Every callback returns 0 or a negative ptc error code; ptc_writer_errmsg()
 * then says which file and why.  Writers are independent objects: one per
 * thread may run in each decoding thread at the same time.
 */
#ifndef PTC_WRITERS_WRITERS_H
#define PTC_WRITERS_WRITERS_H

#include <stdint.h>
#include <stdio.h>

#include "common/trace_event.h"

struct ptc_insn;
struct ptc_writer_pool;
struct ptc_writer_procs;

/* Function symbols, for the formats that name functions (xray): what
 * lookup() says of a run-time address of the thread's address space at
 * the time of the branches being written. */
struct ptc_symbol {
	uint64_t start;		/* run-time address of the function symbol addr belongs
				   to (images/symtab.h), 0 when none */
	uint64_t lo, hi;	/* around addr, the addresses with the same answer
				   (the same start, or none): lo <= addr < hi */
	const char *name;	/* the symbol's name, NULL when none */
	const char *image;	/* the file addr lies in, NULL when in no known image */
	uint64_t vaddr;		/* addr as an address of that file */
};

struct ptc_symbol_reader {
	void (*lookup)(void *ctx, uint64_t addr, struct ptc_symbol *out);
	void *ctx;
	/* Optional: a number that stays the same while lookup() answers as
	 * it did (never 0); NULL: none, every address is looked up. */
	uint64_t (*epoch)(void *ctx);
};

/* Work a writer may hand to another thread (ptc_writer_config.jobs), such
 * as compressing a chunk while it goes on with the next: run() is called
 * once, on any thread, and touches nothing but what the job holds.  It
 * returns 0 or a negative error (a detached job's tells the executor that
 * its writer failed; the message is the writer's). */
struct ptc_job {
	int (*run)(struct ptc_job *job);
	struct ptc_job *next;	/* the executor's */
	int state;		/* the executor's */
	int detached;		/* the executor's */
};

/* Where jobs run.  submit() queues job; wait() returns once its run() has
 * returned (running it on the calling thread if no other took it yet).  A
 * writer waits for each job it submitted before it uses the job's results
 * or frees it.
 *
 * detach() (optional, NULL: none) queues a job that no one waits for:
 * its run() frees it.  The executor bounds how many such jobs are queued
 * or running (running the oldest itself when too many are) and runs them
 * all before the writers are freed; their failures make the conversion's
 * failure, as a finish() that failed would. */
struct ptc_jobs {
	void (*submit)(void *ctx, struct ptc_job *job);
	void (*wait)(void *ctx, struct ptc_job *job);
	void (*detach)(void *ctx, struct ptc_job *job);
	void *ctx;
};

struct ptc_writer_config {
	const char *outdir;		/* existing directory for the files */
	const char *prefix;		/* file-name prefix, NULL for the default "trace" */
	/* Code bytes of the thread's address space.  Required by the
	 * per-instruction formats (champsim, cbp2025, xtrace) and by ptconv
	 * (it embeds the executed blocks); NULL makes those fail in begin(). */
	const struct ptc_code_reader *code;
	int level;			/* compression level, 0 for each format's default,
					   -1 for level 0 (xz preset 0) */
	int champsim_gz;		/* champsim: write .gz instead of .xz */
	int cbp2025_slots;		/* cbp2025:slots: every pc as 4 * pc (ptconv-formats(5)) */
	int xray_threads;		/* xray:threads: a log per thread, not per process */
	int untimed;			/* the recording has no timing packets: xray and
					   perfetto count time in instructions */
	uint64_t perfetto_min_dur;	/* perfetto:min-dur=N: no slice shorter than N */
	uint32_t perfetto_max_depth;	/* perfetto:max-depth=N: no slice deeper than N */
	uint64_t bbv_interval;		/* > 0: also write SimPoint .bb vectors every N instructions */
	uint64_t start_time;		/* xtrace file-name timestamp (perf ns), 0 = first branch's time */
	uint32_t chunk_records;		/* ptconv: records per chunk, 0 = default (1 << 20) */
	int ahead_tables;		/* ptconv: give snapshots of its tables for
					   encoding ahead (ptc_writer_ahead_tables) */
	uint32_t ahead_records_per_node;	/* ptconv: the records per node a writer
						   has (and has more) before it gives a
						   snapshot of its tables; 0 = 16, and the
						   tables settled (a change per 4096 records
						   at most; N > 0, for tests: settled or not) */
	uint64_t xtrace_snapshot;	/* xtrace: instructions between snapshots, 0 = 1000000 */
	int threads;			/* compression threads of champsim and cbp2025
					   (ptc_zout_open_mt), 0 = 1; the bytes do not
					   depend on it */
	struct ptc_writer_pool *pool;	/* bounds the writers with open outputs
					   (ptc_writer_pool_new), or NULL: no bound */
	const struct ptc_jobs *jobs;	/* ptconv: compresses its chunks there, or
					   NULL: itself (the bytes are the same) */
	/* Function names (xray, perfetto), or NULL: every function is known by its
	 * address alone.  Its strings need to live only during the call. */
	const struct ptc_symbol_reader *symbols;
	/* The files threads share (xray: one log per process, perfetto: one
	 * trace), written by ptc_writer_procs_finish(); required by both. */
	struct ptc_writer_procs *procs;
};

/* One registered format. */
struct ptc_writer_format {
	const char *name;		/* the -f name */
	const char *summary;		/* one line for --help */
	int per_instruction;		/* needs code bytes for every instruction */
};

/* The formats, NULL-terminated, in the order --help lists them. */
const struct ptc_writer_format *const *ptc_writer_formats(void);

/* The format called name, or NULL. */
const struct ptc_writer_format *ptc_writer_find(const char *name);

/* Whether the -f entry name (with its options) writes the threads of a
 * process together (xray, perfetto): it needs cfg.procs and the
 * recording's symbols. */
int ptc_writer_per_process(const char *name);

/* Check a comma-separated -f list; on error writes the unknown name into
 * bad (NUL-terminated, truncated to size) and returns -ptc_err_not_found. */
int ptc_writer_check_list(const char *formats, char *bad, size_t size);

struct ptc_writer;

/* A writer for the comma-separated formats (duplicates are ignored).  cfg
 * is copied; cfg->code must stay valid until ptc_writer_free(). */
int ptc_writer_new(struct ptc_writer **w, const char *formats,
		   const struct ptc_writer_config *cfg);

/* The sink that feeds every format of w. */
struct ptc_sink ptc_writer_sink(struct ptc_writer *w);

/* The trace ends inside a block: insns instructions ran after the last
 * branch (a slice's tail, ptconv slice).  Given once, after the last branch
 * and before end(); per-instruction formats list them, ptconv records them
 * in its header, the others (bt9) hold branches only. */
int ptc_writer_tail(struct ptc_writer *w, uint64_t insns);

/* The thread's next branches ran on CPU cpu (a per-CPU recording's queue):
 * the formats that say where a thread ran write it (xray: a NewCPUId
 * record before the next function record); the others ignore it. */
int ptc_writer_cpu(struct ptc_writer *w, uint32_t cpu);

/* The last error, with file name and reason ("" when none). */
const char *ptc_writer_errmsg(const struct ptc_writer *w);

/* What the writer could not write exactly (e.g. instructions whose code
 * bytes were missing), one line per problem, "" when none. */
const char *ptc_writer_warnings(const struct ptc_writer *w);

void ptc_writer_free(struct ptc_writer *w);

/* ---- encoding ahead (-j) ----
 * With -j, windows of a thread's trace are decoded by workers while the
 * thread's writer is busy with earlier ones.  A worker can also encode a
 * window's records for a writer of the ptconv format alone: against a
 * snapshot of the writer's tables (its nodes and edges as they were),
 * which say how the records are predicted.  The writer then takes the
 * encoding (ptc_writer_splice) as if it had been given the records,
 * writing the same bytes.  A record the snapshot cannot say (a node or
 * edge it does not have yet, an edge whose successor is not set) ends
 * the encoding: the records from there on go to the writer themselves. */
struct ptc_ahead_tables;
struct ptc_ahead_enc;
struct ptc_ahead_out;

/* A snapshot of w's tables (a reference), or NULL: w cannot take records
 * encoded ahead (other formats besides ptconv, or made without
 * cfg->ahead_tables), its tables are not worth it yet, or out of memory. */
struct ptc_ahead_tables *ptc_writer_ahead_tables(struct ptc_writer *w);
void ptc_ahead_tables_put(struct ptc_ahead_tables *t);

/* An encoder, one per thread that encodes (it keeps a copy of the last
 * snapshot's nodes), and an encoding, one per window. */
int ptc_ahead_enc_new(struct ptc_ahead_enc **e);
void ptc_ahead_enc_free(struct ptc_ahead_enc *e);
int ptc_ahead_out_new(struct ptc_ahead_out **o);
void ptc_ahead_out_free(struct ptc_ahead_out *o);
/* Encode into o (emptied) against t records whose first block starts at
 * start (the destination of the record before them). */
int ptc_ahead_enc_begin(struct ptc_ahead_enc *e, struct ptc_ahead_tables *t, uint64_t start,
			struct ptc_ahead_out *o);
/* The next records, a sparse batch (ptc_sink's paths): 0, or
 * -ptc_err_mismatch when t could not say one (or another error): the
 * encoding is then what it was before the call, and further calls fail
 * too. */
int ptc_ahead_enc_paths(struct ptc_ahead_enc *e, const struct ptc_branch *b, size_t n,
			const struct ptc_path_mark *m, size_t nm);
/* The encoding is done: o holds it (after ptc_ahead_enc_begin() with
 * another o, or ptc_ahead_enc_free(), too). */
int ptc_ahead_enc_end(struct ptc_ahead_enc *e);
/* Records encoded in o. */
uint64_t ptc_ahead_out_records(const struct ptc_ahead_out *o);

/* Records of o that w can take at once: before its chunk is full, which
 * a splice must not cross; 0 when o was not encoded against a snapshot of
 * w's tables (or w cannot take records encoded ahead). */
uint64_t ptc_writer_ahead_room(struct ptc_writer *w, const struct ptc_ahead_out *o);
/* Write o's records to w, right after the records w was given (o was
 * begun at the destination of the last of them, against a snapshot of
 * w's tables, and has at most ptc_writer_ahead_room() records). */
int ptc_writer_splice(struct ptc_writer *w, const struct ptc_ahead_out *o);

/* A bound on the writers whose outputs are open at once, shared by the
 * writers given it in ptc_writer_config.pool.
 *
 * Each writer of a live thread holds its formats' compressors, buffers and
 * file descriptors (tens of MB for xz).  With a pool, a writer that gets
 * events when max_open others are open first suspends the least recently
 * used one that the same OS thread used last: its compressed streams are
 * finished (the file ends in a complete gzip member / xz stream), its
 * files are closed and its buffers freed; when that writer gets events
 * again, it appends a new member / stream to its files (gzip and xz
 * readers read them as one stream; uncompressed outputs are just
 * appended), a .ptc continues with a new chunk and a bt9's spooled edge
 * sequence with a new member.  Only the boundaries of members, streams
 * and chunks change: the decompressed bytes and the records never do, and
 * the bytes themselves depend only on the order of the events given to
 * the writers on each OS thread and on max_open, not on timing nor on the
 * compression threads.  What a format writes at its end stays in memory
 * (the node and edge tables of .ptc and bt9).  A format without a suspend
 * operation keeps its files open; it still counts.
 *
 * A writer is suspended only by the OS thread that used it last, so
 * writers used by one OS thread at a time need no other locking; with
 * several decoding threads each keeps at least the writer it uses open.
 *
 * The pool also shares jobs compression threads between the open files
 * of champsim and cbp2025 (cfg.threads asks for up to that many per
 * file; every open file gets at least one), so that -j N does not start
 * N threads for each of hundreds of files. */
int ptc_writer_pool_new(struct ptc_writer_pool **pool, unsigned max_open, int jobs);
void ptc_writer_pool_free(struct ptc_writer_pool *pool);
/* A default for max_open for the -f list formats: what a fixed 4 GiB
 * budget and the file-descriptor limit hold (never fewer than 2, never
 * more than 4096); it depends neither on the machine's memory nor on the
 * compression threads, so that the bytes do not either. */
unsigned ptc_writer_pool_default(const char *formats);
/* Writers suspended so far (for the conversion's summary). */
uint64_t ptc_writer_pool_suspensions(const struct ptc_writer_pool *pool);
/* A ZSTD compression context: one a writer gave back (ZSTD_compressCCtx()
 * resets it: the bytes do not depend on its past), else a new one; NULL
 * when out of memory.  pool may be NULL.  give: back for the next writer
 * (freed when the pool keeps enough, or when pool is NULL). */
struct ZSTD_CCtx_s *ptc_writer_pool_take_zc(struct ptc_writer_pool *pool);
void ptc_writer_pool_give_zc(struct ptc_writer_pool *pool, struct ZSTD_CCtx_s *zc);

/* Outputs that threads share (-f xray: one log per process,
 * src/writers/xray.c; -f perfetto: one trace, src/writers/perfetto.c).  One per conversion, given to every writer
 * in cfg.procs; each thread's writer keeps its part under a temporary name
 * until ptc_writer_procs_finish(), called once every writer has ended,
 * writes each process's files from them (in an order that depends only
 * on the threads' own events).  Thread-safe: writers of several threads
 * may end at once. */
int ptc_writer_procs_new(struct ptc_writer_procs **procs);
/* Write the per-process files: 0, or a negative ptc error with a message
 * naming the file and the reason in err. */
int ptc_writer_procs_finish(struct ptc_writer_procs *procs, char *err, size_t errlen);
/* Free procs; the temporaries of what was not finished go. */
void ptc_writer_procs_free(struct ptc_writer_procs *procs);

/* ---- output files (src/writers/outfile.c) ----
 * Each output file is written under a temporary name beside its final one
 * and renamed when complete, so that a file under its final name is always
 * whole; a killed run leaves only temporaries, which ptc_out_clean()
 * removes.  The temporary name of path (".NAME.ptconv-part" in its
 * directory) into buf: 0, or -ptc_err_invalid when it does not fit. */
int ptc_out_tmpname(char *buf, size_t size, const char *path);
/* The file written under path's temporary name is complete: rename it to
 * path.  0, or a negative ptc error with errno set. */
int ptc_out_commit(const char *path);
/* A file that will not be completed (an error): remove its temporary. */
void ptc_out_discard(const char *path);
/* Remove the temporaries that runs killed before they finished left in
 * dir; returns how many. */
int ptc_out_clean(const char *dir);
/* dir made ready for a run: created, or an existing directory (anything
 * else, e.g. -o naming the input file, is refused); unless
 * only_temporaries, the files an earlier conversion wrote there go
 * (exactly the names a conversion gives its files, never keep, the input)
 * and a dir whose summary.json is not ptconv's is refused; then the
 * temporaries go (ptc_out_clean).  *removed and *unfinished say how many
 * files each step removed.  0, or -1 with a message naming dir and the
 * reason in err. */
int ptc_out_prepare(const char *dir, const char *keep, int only_temporaries, int *removed,
		    int *unfinished, char *err, size_t errlen);

#endif
