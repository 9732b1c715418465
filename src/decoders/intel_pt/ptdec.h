/* Intel PT to branch events: a query decoder (ptconv's fastq.h or
 * libipt's) drives a walker over the images' branch tables.
 *
 * One decoder decodes one AUX queue (one CPU's, or one thread's, trace).  The
 * caller gives it the queue's bytes one contiguous piece at a time (a new
 * piece after missing bytes becomes an explicit gap) and an environment that
 * knows which thread runs on the CPU at a time and which code is mapped at an
 * address.  The decoder emits each thread's branches, in batches, and gaps to
 * the sink of that thread.
 *
 * Threads are shared between the decoders of all queues of a recording: a
 * thread that migrates from one CPU to another continues its stream (and its
 * call stack and instruction count) in the other queue.  The caller keeps the
 * streams in time order by running the queues interleaved with
 * ptc_pt_decoder_run(dec, until).
 */
#ifndef PTC_DECODERS_INTEL_PT_PTDEC_H
#define PTC_DECODERS_INTEL_PT_PTDEC_H

#include "common/time_conv.h"
#include <stddef.h>
#include <stdint.h>

#include "common/trace_event.h"
#include "images/image.h"

struct ptc_path_memo;	/* tnt_path.h */

/* A run-time address range backed by one image: run-time = image + bias. */
struct ptc_pt_region {
	uint64_t start, end;
	int64_t bias;
	const struct ptc_image *img;
	const struct ptc_tbranch *tb;
	uint32_t ntb;
	void *tag;			/* the environment's identity for it */
};

/* Branches handed to the sink at a time: 8 KiB of records, small enough
 * to stay in the L1 cache next to the walker's table entries while they are
 * filled and read back. */
#define PTC_PT_BATCH 256

/* One traced thread: its decoding state and its output. */
struct ptc_pt_thread {
	uint32_t pid, tid;
	int cpu;			/* the CPU whose queue the decoder that fills its batch
					 * reads, -1 none (a per-thread queue) */
	struct ptc_sink *sink;		/* NULL: decoded but not written (filtered out) */
	void *user;			/* the environment's */

	/* decoding state */
	uint64_t pending_insns;		/* executed since the last branch event */
	int after_gap;
	int started;			/* its stream's start (PTC_GAP_START) was sent */
	uint64_t next_ip;		/* where the flushed stream continues, 0 unknown */
	uint64_t *stack;		/* return addresses pushed by calls */
	uint32_t *stack_call;		/* for each, the call's index in its branch table (a hint:
					 * the walker checks it against the table it returns to) */
	size_t depth, stack_cap;
	uint64_t last_time;
	int no_hold;			/* flush_settled() flushes all (a window decoded ahead) */
	int keep_last;			/* flush_settled() keeps the last record (not a path's):
					 * erratum BDM64 may correct it */

	struct ptc_branch batch[PTC_PT_BATCH];
	size_t nbatch;
	/* the paths among them (the walker's memo), in order: each is one
	 * record of the batch, its first (a sparse batch, struct ptc_path) */
	struct ptc_path_mark marks[PTC_PT_BATCH];
	size_t nmarks;
	int sink_error;			/* first error returned by the sink */

	/* statistics, updated when the batch is flushed */
	uint64_t by_kind[PTC_BR_KIND_NR];
	uint64_t not_taken;
	uint64_t insns;			/* instructions in branch events */
	uint64_t gaps, gaps_by_cause[PTC_GAP_CAUSE_NR];
	uint64_t lost_bytes;
};

void ptc_pt_thread_init(struct ptc_pt_thread *t, uint32_t pid, uint32_t tid, struct ptc_sink *sink);
/* Hand the batched branches to the sink (before a gap, at the end). */
int ptc_pt_thread_flush(struct ptc_pt_thread *t);
/* The same, when the batch is full or another thread runs, except a far
 * transfer at the end whose target is still 0 (tracing stopped at it,
 * user-only): it stays in the batch until the thread resumes, where
 * ptc_pt_thread_start() makes the resume IP its target when that is not
 * the next instruction (execve's new entry, a signal handler). */
int ptc_pt_thread_flush_settled(struct ptc_pt_thread *t);
void ptc_pt_thread_fini(struct ptc_pt_thread *t);
/* Its batch may mark paths (struct ptc_path) of the memo of the decoder
 * that filled it, each standing as its first record (a sparse batch):
 * flush the thread before that memo goes (a decoder's own, with the
 * decoder; ptc_pt_params.memo, with its owner), or drop the batch's
 * records from its first path on with this (after an error: what would
 * be handed over is no longer known).  ptc_pt_decoder_free() does it for
 * the thread it decodes last. */
void ptc_pt_thread_drop_paths(struct ptc_pt_thread *t);
/* Give a forked thread its parent's call stack: fork and vfork children
 * return through the frames the parent pushed (a vfork child on the
 * parent's CPU does so with compressed returns). */
int ptc_pt_thread_copy_stack(struct ptc_pt_thread *child, const struct ptc_pt_thread *parent);
/* Give the thread gap g (a loss: counted in its statistics; the sink is
 * told after the batched branches).  A gap that names its resume IP says
 * where the stream continues.  Returns 0 or the sink's error. */
int ptc_pt_thread_gap(struct ptc_pt_thread *t, const struct ptc_gap *g);
/* Where the thread's branch stream (batched or handed over) continues:
 * after its last branch, or where it last started; 0 unknown. */
uint64_t ptc_pt_thread_stream_ip(const struct ptc_pt_thread *t);
/* Tracing (re)starts at ip in the thread.  Right after a far transfer
 * (kept back by ptc_pt_thread_flush_settled()), ip is where it went: its
 * target, or 0 when that is the next instruction.  Otherwise, at the start
 * of its stream and when execution resumes elsewhere than where the branch
 * stream says it continues, flush and send the sink a PTC_GAP_START gap, so
 * that writers listing every instruction know where the block begins.  It
 * is not a loss and is not counted.  Nothing is sent when resuming
 * mid-block (pending instructions after an asynchronous disable). */
int ptc_pt_thread_start(struct ptc_pt_thread *t, uint64_t time, uint64_t offset, uint64_t ip);

/* The target of a far transfer (a system call, ...) at which tracing
 * stopped, the TIP.PGD's IP ip (0: suppressed), as both engines report
 * it: a kernel address (the upper half) is not where user mode went, so
 * 0 until the thread resumes (ptc_pt_thread_start()); an address in user
 * space (an address filter's edge) is where it went. */
static inline uint64_t ptc_pt_far_stop_target(uint64_t ip)
{
	return (int64_t)ip < 0 ? 0 : ip;
}

/* libipt 2.1 and later report at every PSB whether tracing is on there
 * (ptev_enabled with the PSB+'s IP, or ptev_disabled, with status_update
 * set): a state, not a change.  What such an event ev means to an engine
 * whose tracing state is enabled: */
enum {
	PTC_PT_STATUS_NONE,	/* not such an event */
	PTC_PT_STATUS_AGREES,	/* the same state: nothing happened, nothing lost */
	PTC_PT_STATUS_ON,	/* on at its IP, where the engine had it off */
	PTC_PT_STATUS_OFF,	/* off, where the engine had it on */
};
struct pt_event;
int ptc_pt_status_update(const struct pt_event *ev, int enabled);

/* What the decoder asks the recording. */
struct ptc_pt_env {
	/* The thread running on cpu (or the thread queue_tid of a per-thread
	 * queue) at perf time (0: unknown).  NULL: nobody known. */
	struct ptc_pt_thread *(*thread_at)(void *ctx, int cpu, uint32_t queue_tid, uint64_t time);
	/* The code at ip for thread t at time: 0 and *out filled, or a
	 * negative code with *cause (enum ptc_gap_cause) and a message in
	 * msg (msglen bytes). */
	int (*region_at)(void *ctx, struct ptc_pt_thread *t, uint64_t time, uint64_t ip,
			 struct ptc_pt_region *out, int *cause, char *msg, size_t msglen);
	/* Optional: a gap nobody's thread can own (e.g. no thread known). */
	void (*orphan_gap)(void *ctx, const struct ptc_gap *gap);
	/* Optional: cpu's trace of the time (t0, t1] is lost (t1
	 * UINT64_MAX: to its end), and with it the branches of the threads
	 * switched in there, besides what owner and resumer were told (owner:
	 * the thread the loss began in, told up to its next switch-in there;
	 * resumer: the one running where decoding resumed, NULL none, told
	 * from its last switch-in before t1).  Each of them gets gap (a copy)
	 * where its stream stands at the time it was switched in, once every
	 * CPU's trace has been handed over up to that time.  Returns 0 or a
	 * negative ptc error code. */
	int (*lost_on_cpu)(void *ctx, int cpu, uint64_t t0, uint64_t t1, const struct ptc_gap *gap,
			   struct ptc_pt_thread *owner, struct ptc_pt_thread *resumer);
	/* For decoding ahead (below): who thread_at would answer, without
	 * its side effects (creating the thread, its outputs, its gaps):
	 * 0 and *pid, *tid (the thread's identity as thread_at keys it), or
	 * <0 for nobody.  Safe to call from several threads at once, as
	 * region_at must be then. */
	int (*who_runs)(void *ctx, int cpu, uint32_t queue_tid, uint64_t time, uint32_t *pid,
			uint32_t *tid);
	/* Optional, for replaying logs that a tap took part of (struct
	 * ptc_pt_tap): how many records thread t's outputs can take from a
	 * tap at once (0: none); and give them what the tap with context
	 * tap_ctx took, in place of the records. */
	uint64_t (*tap_room)(void *ctx, struct ptc_pt_thread *t, void *tap_ctx);
	int (*tap_splice)(void *ctx, struct ptc_pt_thread *t, void *tap_ctx);
	void *ctx;
};

/* How the recording was made. */
struct ptc_pt_params {
	int cpu_family, cpu_model, cpu_stepping;	/* 0/0/0: unknown */
	/* TSC to perf time (TIME_CONV / AUXTRACE_INFO) */
	struct ptc_time_conv tc;	/* .valid 0: leave TSC */
	/* for MTC/CYC timing */
	uint8_t mtc_freq, nom_freq;
	uint32_t tsc_ctc_n, tsc_ctc_d;
	/* Ask libipt's query decoder only, never ptconv's (fastq.h): the
	 * reference, --engine=query. */
	int no_fastq;
	/* Walk one branch at a time, without the memo of TNT paths
	 * (tnt_path.h): the memo's reference, --engine=steps. */
	int no_paths;
	/* The memo to use, shared by the decoders that one thread runs (the
	 * caller's, freed after them; see ptc_pt_decoder_set_memo()); NULL:
	 * the decoder has its own. */
	struct ptc_path_memo *memo;
	/* The bound of the memos made for these decoders; 0:
	 * PTC_PT_MEMO_BYTES. */
	size_t memo_bytes;
};

struct ptc_pt_stats {
	uint64_t bytes;			/* trace bytes given */
	uint64_t fast_bytes;		/* of them, read by ptconv's query decoder */
	uint64_t branches;
	uint64_t gaps, gaps_by_cause[PTC_GAP_CAUSE_NR];
	uint64_t lost_bytes;		/* bytes skipped while out of sync */
	uint64_t psb;			/* synchronisation points used */
	uint64_t events;		/* libipt events seen */
	uint64_t orphan_branches;	/* decoded while no thread was known */
};

struct ptc_pt_decoder;

int ptc_pt_decoder_new(struct ptc_pt_decoder **out, const struct ptc_pt_params *p,
		       const struct ptc_pt_env *env, int cpu, uint32_t queue_tid);
void ptc_pt_decoder_free(struct ptc_pt_decoder *d);

/* The next contiguous piece of the queue: bytes [offset, offset + size) of
 * the AUX stream.  lost > 0 says that many bytes (or an unknown amount when
 * UINT64_MAX) are missing before it: the current state ends with a gap of
 * cause gap_cause.  The bytes must stay valid until the piece is decoded. */
int ptc_pt_decoder_set_buffer(struct ptc_pt_decoder *d, const uint8_t *buf, size_t size,
			      uint64_t offset, uint64_t lost, int gap_cause, const char *why);

/* The stream's next bytes, contiguous with the current piece and starting
 * at a PSB (a window boundary): decoding goes on without a gap when the
 * PSB+ agrees with the walker's state. */
int ptc_pt_decoder_continue(struct ptc_pt_decoder *d, const uint8_t *buf, size_t size, uint64_t offset);

/* Whether the stream continues right after the current piece, with a
 * window starting at a PSB (ptc_pt_decoder_continue() comes next): the
 * walk then stops where the piece's packets end, as it stops at a PSB+
 * inside a piece.  Call after set_buffer or continue; default 0. */
void ptc_pt_decoder_set_continued(struct ptc_pt_decoder *d, int continued);
/* Use memo from now on (the caller's: a decoder run by another thread
 * than before takes that thread's, since the sinks of a memo's paths must
 * all run on one thread at a time: struct ptc_path).  Ignored with
 * no_paths. */
void ptc_pt_decoder_set_memo(struct ptc_pt_decoder *d, struct ptc_path_memo *memo);

/* Mark [s, e) (stream offsets) of the current piece as containing a hole at
 * an unknown place (AUX record flagged PARTIAL or COLLISION): the piece is
 * then decoded one PSB segment at a time and the branches of a suspect
 * segment are kept only when the next PSB agrees with the walker's state;
 * otherwise they become a gap.  Call after set_buffer, before run. */
int ptc_pt_decoder_add_suspect(struct ptc_pt_decoder *d, uint64_t s, uint64_t e);

/* Decode the current piece.  Returns 1 when it stopped at a point where
 * tracing was off and perf time >= until (call again to continue), 0 when
 * the piece is done, <0 on a fatal error (a sink failed). */
int ptc_pt_decoder_run(struct ptc_pt_decoder *d, uint64_t until);

/* Finish: emit any gap still waiting for a resume point. */
int ptc_pt_decoder_finish(struct ptc_pt_decoder *d);

/* Perf time of the last timing information decoded (0: none yet). */
uint64_t ptc_pt_decoder_time(const struct ptc_pt_decoder *d);
/* No sink call the decoder still makes concerns a time before the one
 * returned: its time, or earlier while it holds a gap open, a gap for the
 * threads that ran during a loss, or branches awaiting a PSB's word. */
uint64_t ptc_pt_decoder_settled_time(const struct ptc_pt_decoder *d);
const struct ptc_pt_stats *ptc_pt_decoder_stats(const struct ptc_pt_decoder *d);
/* The thread the decoder's branches go to now (NULL: none known). */
struct ptc_pt_thread *ptc_pt_decoder_thread(const struct ptc_pt_decoder *d);

/* ---- Windows decoded ahead, on other threads ----
 *
 * The packet state of the stream starts afresh at every PSB, so the window
 * of a queue that starts at a PSB can be decoded before the windows in
 * front of it are: by a scratch decoder (ptc_pt_decoder_new() with an env
 * that has region_at and who_runs; thread_at is never called), into a log
 * of what the walker did to the threads it met (their branches, enables,
 * returns to frames older than the window, stop points).  The queue's own
 * decoder then replays the log in order, as if it had decoded the window
 * itself after ptc_pt_decoder_continue(): it checks the window's PSB+
 * against its state exactly as it would (the same instructions up to the
 * first branch, direct branches walked past the PSB counted once), makes
 * the same env calls (thread_at for every enable) at the same points, and
 * ends in the state it would have reached.  Where that cannot be shown
 * (a gap, a loss, an unknown thread, a return the window cannot resolve,
 * a PSB+ that disagrees), the replay refuses before changing anything and
 * the window is decoded the ordinary way: the output is the same either
 * way. */
struct ptc_pt_ahead;

/* A window's branches can go to a tap instead of the log: those of the
 * thread the window's PSB finds running, from the first that the replay
 * cannot change on (after the direct branches the queue's decoder may
 * have walked past the PSB already, and the branch after them, which gets
 * the instructions before the PSB).  begin(ctx, start) comes first, start
 * the address where the first one's block begins; then paths() with the
 * branches as sparse batches (struct ptc_sink).  A batch that paths()
 * refuses (<0), and all after it, go to the log after all, as does all
 * after another thread's or an enable's or a stop's.  The replay gives
 * what the tap took to env.tap_splice() where those branches stand (once
 * env.tap_room() said that the thread's outputs can take them), and
 * makes their calls and returns and the thread's counts itself. */
struct ptc_pt_tap {
	int (*begin)(void *ctx, uint64_t start);
	int (*paths)(void *ctx, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm);
	void *ctx;
};

/* Decode buf[0, size), stream offsets [offset, offset + size) of the
 * queue of cpu / queue_tid, starting at a PSB, with scratch (a decoder
 * used for nothing else meanwhile; its caches carry over between calls);
 * continued as ptc_pt_decoder_set_continued() says; reuse: NULL or a spent
 * log whose memory the new one takes over; tap: NULL or where branches go
 * instead of the log.
 * *out is the log, to replay or free; <0 only when out of memory. */
int ptc_pt_decode_ahead(struct ptc_pt_decoder *scratch, int cpu, uint32_t queue_tid,
			const uint8_t *buf, size_t size, uint64_t offset, int continued,
			struct ptc_pt_ahead *reuse, const struct ptc_pt_tap *tap, struct ptc_pt_ahead **out);
/* Why the log cannot be replayed whatever the state (NULL: it may be). */
const char *ptc_pt_ahead_unusable(const struct ptc_pt_ahead *a);
/* The threads the log concerns (their tids as who_runs gave them): up to
 * max into tids; returns how many there are. */
size_t ptc_pt_ahead_threads(const struct ptc_pt_ahead *a, uint32_t *tids, size_t max);
/* The smallest until with which ptc_pt_decoder_replay() replays the whole
 * log in one call, never stopping (0: any). */
uint64_t ptc_pt_ahead_stop_limit(const struct ptc_pt_ahead *a);
void ptc_pt_ahead_free(struct ptc_pt_ahead *a);

/* Instead of ptc_pt_decoder_continue() and ptc_pt_decoder_run() for the
 * window right after the current piece: replay a.  The same returns as
 * ptc_pt_decoder_run() (1: stopped at a point where tracing was off with
 * time >= until; call again with the same a), and -ptc_err_mismatch on
 * the first call when the log does not fit the decoder's state: nothing
 * was changed, decode the window with ptc_pt_decoder_continue(). */
int ptc_pt_decoder_replay(struct ptc_pt_decoder *d, struct ptc_pt_ahead *a, uint64_t until);

#endif
