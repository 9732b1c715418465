/* gen: an execution (ground-truth events, see tests/ptgen/ground-truth.md)
 * -> the perf.data that `perf record -e intel_pt//u` would have written.
 *
 * Events come twice: gen_scan() sees them all first (threads, mappings,
 * where preempted threads continue: perf.data declares its events and ids
 * before any record), then gen_event() writes sideband records and drives
 * one Intel PT packet encoder (ptenc) per AUX queue: one per CPU, or one
 * per thread with per_thread.  Threads are placed on CPUs round-robin in
 * order of first appearance, so the layout is deterministic.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/error.h"
#include "input/perf_reader.h"
#include "input/perf_writer.h"
#include "sideband/tracepoint.h"
#include "ptenc.h"
#include "truth.h"
#include "gen.h"

/* The clocks of the model: perf time (ns) = truth time + TIME_BASE; the TSC
 * runs at 2 GHz, the crystal (CTC) at 25 MHz, the core at the nominal
 * 2 GHz (CBR = max non-turbo ratio = 20). */
#define TIME_BASE_NS 1000000000ULL
#define TSC_PER_NS 2
#define TSC_CTC_RATIO 80
#define CBR_RATIO 20
#define PT_PMU_TYPE 8

/* IA32_RTIT_CTL bits as the kernel's intel_pt format names them. */
#define PT_CFG_PT (1ULL << 0)
#define PT_CFG_CYC (1ULL << 1)
#define PT_CFG_MTC (1ULL << 9)
#define PT_CFG_TSC (1ULL << 10)
#define PT_CFG_NORETCOMP (1ULL << 11)
#define PT_CFG_BRANCH (1ULL << 13)
#define PT_CFG_MTC_PERIOD_SHIFT 14
#define PT_CFG_PSB_PERIOD_SHIFT 24

/* Time the model spends in the kernel at each exit from user mode (system
 * call, interrupt, preemption): the truth's clock does not advance there,
 * but perf orders sideband and trace by time, so the switch records must
 * fall between one thread's TIP.PGD and the next one's TIP.PGE. */
#define KERNEL_NS 1000

#define ID_PT_BASE 1000
#define ID_DUMMY_BASE 2000
#define ID_SWITCH_BASE 3000	/* per CPU: the CPU-wide context-switch dummy */


/* Where a thread switched out in user mode continues.  far: it had in fact
 * entered a system call that blocked; ptgen-trace writes that syscall's B
 * line when the call returns, after the S lines of the threads that ran
 * meanwhile. */
struct preemption {
	uint64_t ip;
	int far;
};

struct thread {
	uint32_t pid, tid, ppid, ptid;
	char comm[16];
	unsigned queue;		/* AUX queue index */
	int cpu;
	unsigned switch_ins;	/* --migrate: times switched in */
	int in_user;
	unsigned bits;		/* the mode of its code (R lines; 0: 64) */
	int itrace_started;
	uint64_t insns_since_irq;
	/* Preemption in user mode (the tracer's time slices): the truth has
	 * an S line but no A/R pair, so the first pass finds the IP where
	 * the thread continues (its next branch or A line) and the second
	 * pass writes an interrupt there: FUP + TIP.PGD when switched out,
	 * TIP.PGE when switched back in. */
	struct preemption *preempt_ip;
	size_t nr_preempt, preempt_next;
	int late_far;		/* far B lines already encoded at an S */
	int await_preempt_ip;	/* first pass: preemptions without an IP yet */
	int preempted;		/* second pass */
	uint64_t resume_ip;
	uint64_t next_ip;	/* after the last branch */
	/* --gaps: where the packets written so far say the thread's branch
	 * stream continues: after its last branch that wrote a packet or a
	 * TNT bit, or where it entered user mode after a far branch (an
	 * interrupt's resumption continues the block it left) */
	uint64_t pkt_ip;
	int far_out;
};

struct queue {
	struct ptenc *enc;
	unsigned idx;
	int cpu;		/* -1 per thread */
	int32_t tid;		/* per thread: the thread; per CPU: -1 */
	struct thread *cur;	/* running thread, NULL when idle */
	int started;
	uint64_t kept;		/* bytes written to the perf.data */
	uint64_t dropped;
	uint64_t now;		/* perf time of the latest event */
	FILE *dump;
	struct gen *g;
	/* --gaps bookkeeping for --drop, in taken-branch indices of the
	 * truth: branches before drop_first are encoded entirely before the
	 * cut; from drop_resync on they follow a PSB after it. */
	int drop_state;		/* 0 before the cut, 1 until a PSB after it, 2 done */
	uint64_t drop_first, drop_resync;
	uint64_t trunc_at;	/* --truncate: stream offset where writing stopped */
	int trunc_flag;		/* the AUX record there still to be flagged */
};

struct gen {
	struct gen_options o;
	struct ptc_perf_writer *w;
	struct thread **threads;	/* stable pointers: others keep them */
	size_t nr_threads;
	struct queue *queues;
	size_t nr_queues;
	uint64_t first_time, last_time;
	FILE *gaps;
	uint64_t branches;	/* B lines seen */
	uint64_t taken;		/* taken branches seen (compare.py's indices) */
	uint64_t taken_at_packet;	/* taken branches before the last one that wrote a packet or TNT bit */
	/* overflow injection */
	struct queue *ovf_q;
	uint64_t ovf_left, ovf_line;
	struct thread *running;	/* the truth's one logical CPU */
	uint64_t koff;		/* kernel time added to the truth's clock so far */
	const char *truth_dir;
	char *truth_dir_buf;
	int have_time;
	/* --sched-switch: the real recording's tracing data, the event id and
	 * the sched_switch fields' offset/size (from its format text) */
	uint8_t *tracing;
	size_t tracing_size;
	uint64_t ss_id;
	struct { int off, size; } ss_common_type, ss_common_pid, ss_prev_comm, ss_prev_pid,
		ss_prev_prio, ss_prev_state, ss_next_comm, ss_next_pid, ss_next_prio;
	uint32_t ss_raw_size;
	uint64_t switches;	/* context switches written (--lost-at-switch) */
};

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "ptgen-encode: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void check(struct gen *g, int err, const char *what)
{
	if (err < 0)
		die("%s: %s %s", what, ptc_errstr(err),
		    g->w ? ptc_perf_writer_errmsg(g->w) : "");
}

static uint64_t perf_time(uint64_t t) { return t + TIME_BASE_NS; }
static uint64_t tsc_of(uint64_t t) { return perf_time(t) * TSC_PER_NS; }

static struct thread *find_thread(struct gen *g, uint32_t tid)
{
	static struct thread *last;
	size_t i;

	if (last && last->tid == tid)
		return last;
	for (i = 0; i < g->nr_threads; i++)
		if (g->threads[i]->tid == tid)
			return last = g->threads[i];
	return NULL;
}

static struct thread *add_thread(struct gen *g, uint32_t pid, uint32_t tid)
{
	struct thread *t = find_thread(g, tid), **n;

	if (t)
		return t;
	n = realloc(g->threads, (g->nr_threads + 1) * sizeof(*n));
	t = calloc(1, sizeof(*t));
	if (!n || !t)
		die("out of memory");
	g->threads = n;
	n[g->nr_threads++] = t;
	t->pid = pid;
	t->tid = tid;
	return t;
}

/* --- sideband records -------------------------------------------------------- */

static uint64_t dummy_id(struct gen *g, struct thread *t)
{
	return ID_DUMMY_BASE + (g->o.per_thread ? t->queue : (unsigned)t->cpu);
}

static uint64_t pt_id(struct gen *g, struct thread *t)
{
	return ID_PT_BASE + (g->o.per_thread ? t->queue : (unsigned)t->cpu);
}

static void sid_of(struct gen *g, struct thread *t, uint64_t time, int pt,
		   struct ptc_perf_writer_sid *sid)
{
	memset(sid, 0, sizeof(*sid));
	if (t) {
		sid->pid = t->pid;
		sid->tid = t->tid;
		sid->cpu = t->cpu < 0 ? 0 : (uint32_t)t->cpu;
		sid->id = pt ? pt_id(g, t) : dummy_id(g, t);
	}
	sid->time = perf_time(time);
}

static void rec_comm(struct gen *g, struct thread *t, uint64_t time, int exec)
{
	uint8_t body[8 + 16];
	struct ptc_perf_writer_sid sid;

	memset(body, 0, sizeof(body));
	ptc_put32(body, t->pid);
	ptc_put32(body + 4, t->tid);
	memcpy(body + 8, t->comm, strnlen(t->comm, 15));
	sid_of(g, t, time, 0, &sid);
	check(g, ptc_perf_writer_event(g->w, PERF_RECORD_COMM,
				       exec ? PERF_RECORD_MISC_COMM_EXEC : 0,
				       body, 8 + strnlen(t->comm, 15) + 1, &sid),
	      "COMM");
}

static void rec_fork_exit(struct gen *g, uint32_t type, struct thread *t,
			  uint64_t time)
{
	uint8_t body[24];
	struct ptc_perf_writer_sid sid;

	ptc_put32(body, t->pid);
	ptc_put32(body + 4, t->ppid);
	ptc_put32(body + 8, t->tid);
	ptc_put32(body + 12, t->ptid);
	ptc_put64(body + 16, perf_time(time));
	sid_of(g, t, time, 0, &sid);
	check(g, ptc_perf_writer_event(g->w, type, 0, body, sizeof(body), &sid),
	      "FORK/EXIT");
}

static void rec_mmap2(struct gen *g, struct thread *t, const struct truth_event *ev)
{
	uint8_t body[64 + PATH_MAX];
	struct ptc_perf_writer_sid sid;
	size_t n = strlen(ev->path) + 1;
	uint16_t misc = PERF_RECORD_MISC_USER;

	if (n > PATH_MAX)
		die("path too long: %s", ev->path);
	memset(body, 0, 64);
	ptc_put32(body, ev->pid);
	ptc_put32(body + 4, ev->tid);
	ptc_put64(body + 8, ev->start);
	ptc_put64(body + 16, ev->len);
	ptc_put64(body + 24, ev->pgoff);
	if (ev->build_id_len) {
		body[32] = (uint8_t)ev->build_id_len;
		memcpy(body + 36, ev->build_id, ev->build_id_len);
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	}
	ptc_put32(body + 56, ev->prot);
	ptc_put32(body + 60, MAP_PRIVATE);
	memcpy(body + 64, ev->path, n);
	sid_of(g, t, ev->time, 0, &sid);
	check(g, ptc_perf_writer_event(g->w, PERF_RECORD_MMAP2, misc, body,
				       64 + n, &sid), "MMAP2");
}

static void rec_itrace_start(struct gen *g, struct thread *t, uint64_t time)
{
	uint8_t body[8];
	struct ptc_perf_writer_sid sid;

	ptc_put32(body, t->pid);
	ptc_put32(body + 4, t->tid);
	sid_of(g, t, time, 1, &sid);
	check(g, ptc_perf_writer_event(g->w, PERF_RECORD_ITRACE_START, 0, body,
				       sizeof(body), &sid), "ITRACE_START");
}

/* --sched-switch: the recording perf made of sched:sched_switch on this
 * machine gives the tracing data (copied as it is) and the event id; the
 * fields' places come from the event's format text, read here with sscanf
 * so that nothing of ptconv's libtraceevent reading is involved. */
static void ss_field(struct gen *g, const char *text, size_t n, const char *name, int *off, int *size)
{
	const char *p = text, *end = text + n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[256], *fld, *semi, *w;

		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = 0;
			/* "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;" */
			fld = strstr(line, "field:");
			semi = fld ? strchr(fld, ';') : NULL;
			if (semi) {
				*semi = 0;
				if ((w = strchr(fld, '[')))
					*w = 0;
				w = strrchr(fld, ' ');
				if (w && !strcmp(w + 1, name)) {
					const char *o = strstr(semi + 1, "offset:"), *z = strstr(semi + 1, "size:");
					if (!o || !z)
						break;
					*off = atoi(o + 7);
					*size = atoi(z + 5);
					if (*off < 0 || *size <= 0 || *off + *size > 4096)
						die("%s: sched_switch field %s at %d size %d?", g->o.sched_switch,
						    name, *off, *size);
					return;
				}
			}
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	die("%s: the sched_switch format has no field %s", g->o.sched_switch, name);
}

static void ss_load(struct gen *g)
{
	struct ptc_perf_reader *r;
	const struct ptc_perf_info *info;
	struct ptc_tracing_data *td;
	const struct ptc_tracing_format *f;
	char err[512];
	size_t i;
	int found = 0, end = 0;

	if (ptc_perf_open(&r, g->o.sched_switch, err, sizeof(err)) < 0)
		die("%s", err);
	for (i = 0; i < ptc_perf_nr_attrs(r); i++) {
		const struct ptc_perf_attr *a = ptc_perf_attr(r, i);
		if (a->attr.type == PERF_TYPE_TRACEPOINT && a->name && !strcmp(a->name, "sched:sched_switch")) {
			g->ss_id = a->attr.config;
			found = 1;
		}
	}
	if (!found)
		die("%s: no sched:sched_switch event", g->o.sched_switch);
	info = ptc_perf_info(r);
	if (!info->tracing_data)
		die("%s: no tracing data", g->o.sched_switch);
	g->tracing_size = info->tracing_data_size;
	g->tracing = malloc(g->tracing_size);
	if (!g->tracing)
		die("out of memory");
	memcpy(g->tracing, info->tracing_data, g->tracing_size);
	ptc_perf_close(r);
	if (ptc_tracing_data_parse(g->tracing, g->tracing_size, g->o.sched_switch, 0, &td, err, sizeof(err)) < 0)
		die("%s", err);
	f = ptc_tracing_data_find(td, "sched", "sched_switch");
	if (!f)
		die("%s: no sched_switch format in the tracing data", g->o.sched_switch);
#define FIELD(v, name) do { \
		ss_field(g, (const char *)f->text, f->size, name, &g->v.off, &g->v.size); \
		if (g->v.off + g->v.size > end) \
			end = g->v.off + g->v.size; \
	} while (0)
	FIELD(ss_common_type, "common_type");
	FIELD(ss_common_pid, "common_pid");
	FIELD(ss_prev_comm, "prev_comm");
	FIELD(ss_prev_pid, "prev_pid");
	FIELD(ss_prev_prio, "prev_prio");
	FIELD(ss_prev_state, "prev_state");
	FIELD(ss_next_comm, "next_comm");
	FIELD(ss_next_pid, "next_pid");
	FIELD(ss_next_prio, "next_prio");
#undef FIELD
	ptc_tracing_data_free(td);
	g->ss_raw_size = (uint32_t)end;
}

static void ss_put(uint8_t *raw, int off, int size, uint64_t v)
{
	int i;

	for (i = 0; i < size && i < 8; i++)
		raw[off + i] = (uint8_t)(v >> (8 * i));
}

/* One sched:sched_switch sample as the kernel writes it (sample_type
 * IP|TID|TIME|CPU|PERIOD|RAW|IDENTIFIER): taken in the context of the task
 * switched out, the raw record padded so that its u32 size and bytes end on
 * 8 bytes. */
static void rec_sched_switch(struct gen *g, struct thread *from, struct thread *to, int cpu,
			     uint64_t time)
{
	uint8_t rec[8 + 6 * 8 + 4 + 4096 + 8];
	uint8_t *raw;
	uint32_t raw_size = ((g->ss_raw_size + 4 + 7) & ~7u) - 4;
	size_t at = 8, size = 8 + 6 * 8 + 4 + raw_size;
	char idle_comm[16];

	memset(rec, 0, sizeof(rec));
	ptc_put32(rec, PERF_RECORD_SAMPLE);
	ptc_put16(rec + 4, PERF_RECORD_MISC_KERNEL);
	ptc_put16(rec + 6, (uint16_t)size);
	ptc_put64(rec + at, ID_SWITCH_BASE + (unsigned)cpu);	/* identifier */
	at += 8;
	ptc_put64(rec + at, 0xffffffff81e00000ull);		/* ip: in __schedule */
	at += 8;
	ptc_put32(rec + at, from ? from->pid : 0);
	ptc_put32(rec + at + 4, from ? from->tid : 0);
	at += 8;
	ptc_put64(rec + at, perf_time(time));
	at += 8;
	ptc_put32(rec + at, (uint32_t)cpu);
	at += 8;
	ptc_put64(rec + at, 1);					/* period */
	at += 8;
	ptc_put32(rec + at, raw_size);
	raw = rec + at + 4;
	snprintf(idle_comm, sizeof(idle_comm), "swapper/%d", cpu);
	ss_put(raw, g->ss_common_type.off, g->ss_common_type.size, g->ss_id);
	ss_put(raw, g->ss_common_pid.off, g->ss_common_pid.size, from ? from->tid : 0);
	memcpy(raw + g->ss_prev_comm.off, from ? from->comm : idle_comm,
	       strnlen(from ? from->comm : idle_comm, (size_t)g->ss_prev_comm.size < 15 ? (size_t)g->ss_prev_comm.size : 15));
	ss_put(raw, g->ss_prev_pid.off, g->ss_prev_pid.size, from ? from->tid : 0);
	ss_put(raw, g->ss_prev_prio.off, g->ss_prev_prio.size, 120);
	ss_put(raw, g->ss_prev_state.off, g->ss_prev_state.size, 0);	/* R: preempted */
	memcpy(raw + g->ss_next_comm.off, to ? to->comm : idle_comm,
	       strnlen(to ? to->comm : idle_comm, (size_t)g->ss_next_comm.size < 15 ? (size_t)g->ss_next_comm.size : 15));
	ss_put(raw, g->ss_next_pid.off, g->ss_next_pid.size, to ? to->tid : 0);
	ss_put(raw, g->ss_next_prio.off, g->ss_next_prio.size, 120);
	check(g, ptc_perf_writer_record(g->w, rec), "sched_switch SAMPLE");
}

/* --lost-at-switch: the kernel lost a record of cpu's buffer just before
 * this switch; says which thread the switch gives the CPU to. */
static void rec_lost(struct gen *g, struct thread *to, int cpu, uint64_t time)
{
	struct ptc_perf_writer_sid sid;
	uint8_t body[16];

	ptc_put64(body, ID_DUMMY_BASE + (unsigned)cpu);
	ptc_put64(body + 8, 1);
	memset(&sid, 0, sizeof(sid));
	sid.time = perf_time(time);
	sid.cpu = (uint32_t)cpu;
	sid.id = ID_DUMMY_BASE + (unsigned)cpu;
	sid.pid = sid.tid = UINT32_MAX;
	check(g, ptc_perf_writer_event(g->w, PERF_RECORD_LOST, 0, body, sizeof(body), &sid), "LOST");
	fprintf(stderr, "ptgen-encode: LOST record on cpu %d at %llu before the switch to tid %u\n",
		cpu, (unsigned long long)perf_time(time), to ? to->tid : 0);
}

/* Context switch on a queue's CPU (per-CPU mode, CPU-wide records) or of a
 * thread (per-thread mode). */
static void rec_switch(struct gen *g, struct thread *from, struct thread *to,
		       int cpu, uint64_t time)
{
	struct ptc_perf_writer_sid sid;
	struct thread idle = { .pid = 0, .tid = 0, .cpu = cpu };
	uint8_t body[8];

	if (++g->switches == g->o.lost_at_switch && !g->o.per_thread)
		rec_lost(g, to, cpu, time);
	if (g->o.sched_switch && !g->o.per_thread) {
		rec_sched_switch(g, from, to, cpu, time);
		return;
	}

	if (g->o.per_thread) {
		if (from) {
			sid_of(g, from, time, 0, &sid);
			check(g, ptc_perf_writer_event(g->w, PERF_RECORD_SWITCH,
						       PERF_RECORD_MISC_SWITCH_OUT,
						       NULL, 0, &sid), "SWITCH");
		}
		if (to) {
			sid_of(g, to, time, 0, &sid);
			check(g, ptc_perf_writer_event(g->w, PERF_RECORD_SWITCH, 0,
						       NULL, 0, &sid), "SWITCH");
		}
		return;
	}
	idle.queue = (unsigned)cpu;
	if (!from)
		from = &idle;
	if (!to)
		to = &idle;
	ptc_put32(body, to->pid);
	ptc_put32(body + 4, to->tid);
	sid_of(g, from, time, 0, &sid);
	sid.cpu = (uint32_t)cpu;
	sid.id = ID_SWITCH_BASE + (unsigned)cpu;
	check(g, ptc_perf_writer_event(g->w, PERF_RECORD_SWITCH_CPU_WIDE,
				       PERF_RECORD_MISC_SWITCH_OUT |
				       PERF_RECORD_MISC_SWITCH_OUT_PREEMPT,
				       body, sizeof(body), &sid), "SWITCH_CPU_WIDE");
	ptc_put32(body, from->pid);
	ptc_put32(body + 4, from->tid);
	sid_of(g, to, time, 0, &sid);
	sid.cpu = (uint32_t)cpu;
	sid.id = ID_SWITCH_BASE + (unsigned)cpu;
	check(g, ptc_perf_writer_event(g->w, PERF_RECORD_SWITCH_CPU_WIDE, 0,
				       body, sizeof(body), &sid), "SWITCH_CPU_WIDE");
}

/* --- AUX data ---------------------------------------------------------------- */

/* Receives encoded bytes; writes AUX + AUXTRACE records, cutting out the
 * --drop range (the kernel's AUX offsets stay contiguous: lost data never
 * reaches the buffer, and the AUX record says PARTIAL). */
static int aux_sink(void *ctx, const uint8_t *data, size_t size, uint64_t off)
{
	struct queue *q = ctx;
	struct gen *g = q->g;
	struct ptc_perf_writer_sid sid;
	uint8_t *kept = (uint8_t *)data, body[24];
	size_t nkept = size;
	uint64_t flags = 0;
	int err;

	if (g->o.drop == 2 && q->trunc_flag && q->trunc_at >= off &&
	    q->trunc_at <= off + size) {
		/* The buffer filled here: the kernel flags the record and
		 * what the hardware did not write is lost. */
		flags = PTC_AUX_FLAG_TRUNCATED;
		q->trunc_flag = 0;
	}
	if (g->o.drop == 1 && q->idx == g->o.drop_queue) {
		uint64_t lo = g->o.drop_offset, hi = lo + g->o.drop_bytes;

		if (off < hi && off + size > lo) {
			uint64_t a = lo > off ? lo - off : 0;
			uint64_t b = hi < off + size ? hi - off : size;

			kept = malloc(size);
			if (!kept)
				return -ptc_err_nomem;
			memcpy(kept, data, a);
			memcpy(kept + a, data + b, size - b);
			nkept = size - (b - a);
			q->dropped += b - a;
			flags = PTC_AUX_FLAG_PARTIAL;
			if (g->gaps)
				/* the AUX record a decoder skips (kept offsets) */
				fprintf(g->gaps, "partial queue %u aux %llu size %llu\n", q->idx,
					(unsigned long long)q->kept, (unsigned long long)nkept);
		}
	}
	if (q->dump && nkept && fwrite(kept, 1, nkept, q->dump) != nkept)
		die("writing the AUX dump: %s", strerror(errno));
	/* PERF_RECORD_AUX: aux_offset, aux_size, flags. */
	ptc_put64(body, q->kept);
	ptc_put64(body + 8, nkept);
	ptc_put64(body + 16, flags);
	sid_of(g, q->cur ? q->cur : NULL, q->now, 1, &sid);
	if (!q->cur) {
		sid.cpu = q->cpu < 0 ? 0 : (uint32_t)q->cpu;
		sid.id = ID_PT_BASE + q->idx;
	}
	err = ptc_perf_writer_event(g->w, PERF_RECORD_AUX, 0, body, sizeof(body), &sid);
	if (!err && nkept)
		err = ptc_perf_writer_auxtrace(g->w, q->kept, perf_time(q->now),
					       q->idx, (uint32_t)q->tid,
					       (uint32_t)q->cpu, kept, nkept);
	if (!err)
		err = ptc_perf_writer_finished_round(g->w);
	q->kept += nkept;
	if (kept != data)
		free(kept);
	return err;
}

static struct queue *queue_of(struct gen *g, struct thread *t)
{
	return &g->queues[t->queue];
}

static void queue_start(struct gen *g, struct queue *q, uint64_t time)
{
	if (q->started)
		return;
	q->started = 1;
	q->now = time;
	check(g, ptenc_start(q->enc, tsc_of(time)), "PSB+");
}

/* Makes t the running thread of its queue (a context switch when another
 * thread ran there). */
static void run_thread(struct gen *g, struct thread *t, uint64_t time)
{
	struct queue *q = queue_of(g, t);
	size_t i;

	if (q->cur == t)
		return;
	/* The one logical CPU of the truth runs one thread at a time: any
	 * other CPU's thread is switched out to idle. */
	for (i = 0; !g->o.per_thread && i < g->nr_queues; i++)
		if (&g->queues[i] != q && g->queues[i].cur) {
			rec_switch(g, g->queues[i].cur, NULL, g->queues[i].cpu, time);
			g->queues[i].cur = NULL;
		}
	if (g->o.per_thread) {
		for (i = 0; i < g->nr_queues; i++)
			if (g->queues[i].cur && g->queues[i].cur != t) {
				rec_switch(g, g->queues[i].cur, NULL, -1, time);
				g->queues[i].cur = NULL;
			}
		rec_switch(g, NULL, t, -1, time);
	} else {
		rec_switch(g, q->cur, t, q->cpu, time);
	}
	q->cur = t;
	if (!t->itrace_started) {
		t->itrace_started = 1;
		rec_itrace_start(g, t, time);
	}
	queue_start(g, q, time);
}

/* --- the vDSO and the build-id cache -------------------------------------- */

static void mkdir_p(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	if (mkdir(buf, 0755) && errno != EEXIST)
		die("mkdir %s: %s", buf, strerror(errno));
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out;
	char buf[65536];
	size_t n;

	if (!in)
		die("%s: %s", from, strerror(errno));
	out = fopen(to, "wb");
	if (!out)
		die("%s: %s", to, strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			die("%s: write failed", to);
	fclose(in);
	if (fclose(out))
		die("%s: write failed", to);
}

/* perf's build-id cache layout: DIR/[vdso]/<id>/vdso holds the bytes and
 * DIR/.build-id/<id[0:2]>/<id[2:]> links to ../../[vdso]/<id>. */
static void cache_vdso(struct gen *g, const struct truth_event *ev)
{
	char id[41], dir[PATH_MAX - 16], file[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
	char dump[PATH_MAX];
	unsigned i;

	if (!g->o.buildid_dir || !ev->dump || !ev->build_id_len)
		return;
	for (i = 0; i < ev->build_id_len; i++)
		sprintf(id + 2 * i, "%02x", ev->build_id[i]);
	if (ev->dump[0] != '/' && access(ev->dump, R_OK) && g->truth_dir)
		snprintf(dump, sizeof(dump), "%s/%s", g->truth_dir, ev->dump);
	else
		snprintf(dump, sizeof(dump), "%s", ev->dump);
	snprintf(dir, sizeof(dir), "%s/[vdso]/%s", g->o.buildid_dir, id);
	mkdir_p(dir);
	snprintf(file, sizeof(file), "%s/vdso", dir);
	copy_file(dump, file);
	snprintf(link, sizeof(link), "%s/.build-id/%.2s", g->o.buildid_dir, id);
	mkdir_p(link);
	snprintf(link, sizeof(link), "%s/.build-id/%.2s/%s", g->o.buildid_dir, id, id + 2);
	snprintf(target, sizeof(target), "../../[vdso]/%s", id);
	unlink(link);
	if (symlink(target, link))
		die("symlink %s: %s", link, strerror(errno));
}

/* --- the two passes ------------------------------------------------------------ */

static void push_preempt_ip(struct thread *t, uint64_t ip, int far)
{
	struct preemption *n = realloc(t->preempt_ip, (t->nr_preempt + 1) * sizeof(*n));

	if (!n)
		die("out of memory");
	t->preempt_ip = n;
	n[t->nr_preempt].ip = ip;
	n[t->nr_preempt++].far = far;
	t->await_preempt_ip--;
}

/* First pass over the events: threads, build-ids, the vDSO, and where
 * threads preempted in user mode continue. */
void gen_scan(struct gen *g, const struct truth_event *ev)
{
	struct thread *t;

	if (ev->type == 'V')
		return;
	if (!g->have_time)
		g->first_time = ev->time;
	g->have_time = 1;
	g->last_time = ev->time;
	switch (ev->type) {
	case 'T':
	case 'C':
		t = add_thread(g, ev->pid, ev->tid);
		if (!t->comm[0] || ev->type == 'T')
			snprintf(t->comm, sizeof(t->comm), "%s", ev->comm);
		break;
	case 'F':
		t = add_thread(g, ev->pid, ev->tid);
		t->ppid = ev->ppid;
		t->ptid = ev->ptid;
		break;
	case 'S':
		t = find_thread(g, ev->tid);
		if (!t)
			die("%s:%llu: unknown thread %u", g->o.truth,
			    (unsigned long long)ev->line, ev->tid);
		if (g->running && g->running != t && g->running->in_user)
			g->running->await_preempt_ip++;
		g->running = t;
		break;
	case 'R':
	case 'A':
	case 'B':
	case 'E':
		t = find_thread(g, ev->tid);
		if (!t)
			die("%s:%llu: unknown thread %u", g->o.truth,
			    (unsigned long long)ev->line, ev->tid);
		/* Preempted again before reaching its next branch:
		 * every preemption continues at the same IP. */
		while (t->await_preempt_ip && ev->type != 'R')
			push_preempt_ip(t, ev->type == 'E' ? t->next_ip : ev->ip,
					ev->type == 'B' && ev->kind == PTENC_FAR &&
					t != g->running);
		if (ev->type == 'R')
			t->in_user = 1;
		else if (ev->type == 'A' || (ev->type == 'B' && ev->kind == PTENC_FAR))
			t->in_user = 0;
		if (ev->type == 'B')
			t->next_ip = ev->taken || ev->kind != PTENC_COND ?
				ev->target : ev->ip + ev->blen;
		break;
	case 'M':
		if (ev->build_id_len) {
			int e = ptc_perf_writer_add_build_id(
				g->w, (int32_t)ev->pid, PERF_RECORD_MISC_USER,
				ev->build_id, ev->build_id_len, ev->path);
			check(g, e, "build-id");
		}
		if (!strcmp(ev->path, "[vdso]"))
			cache_vdso(g, ev);
		break;
	default:
		break;
	}
}

static void set_queues(struct gen *g);
static void write_header(struct gen *g);

void gen_begin(struct gen *g)
{
	size_t i;

	if (!g->nr_threads)
		die("%s: no threads", g->o.truth);
	for (i = 0; i < g->nr_threads; i++)
		g->threads[i]->in_user = 0;
	g->running = NULL;
	set_queues(g);
	write_header(g);
	g->koff = KERNEL_NS;
}

static void set_queues(struct gen *g)
{
	size_t i;

	g->nr_queues = g->o.per_thread ? g->nr_threads : g->o.cpus;
	g->queues = calloc(g->nr_queues, sizeof(*g->queues));
	if (!g->queues)
		die("out of memory");
	for (i = 0; i < g->nr_threads; i++) {
		struct thread *t = g->threads[i];

		t->queue = (unsigned)(i % g->nr_queues);
		t->cpu = g->o.per_thread ? -1 : (int)t->queue;
	}
	for (i = 0; i < g->nr_queues; i++) {
		struct queue *q = &g->queues[i];
		struct ptenc_config c = {
			.retcomp = g->o.retcomp, .tsc = g->o.tsc, .mtc = g->o.mtc,
			.cyc = g->o.cyc, .mtc_period = g->o.mtc_period,
			.tsc_ctc_ratio = TSC_CTC_RATIO, .cbr = CBR_RATIO,
			.long_tnt = g->o.long_tnt,
			.psb_period = 1ULL << (g->o.psb_period + 11),
			.chunk_size = g->o.chunk, .sink = aux_sink, .sink_ctx = q,
		};

		q->g = g;
		q->idx = (unsigned)i;
		q->cpu = g->o.per_thread ? -1 : (int)i;
		q->tid = g->o.per_thread ? (int32_t)g->threads[i]->tid : -1;
		check(g, ptenc_new(&q->enc, &c), "encoder");
		if (g->o.aux_dump) {
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "%s.%zu.pt", g->o.aux_dump, i);
			q->dump = fopen(path, "wb");
			if (!q->dump)
				die("%s: %s", path, strerror(errno));
		}
	}
	if (g->o.aux_dump) {
		/* PREFIX.index: "queue cpu pid tid" (pid, tid -1 per CPU). */
		char path[PATH_MAX];
		FILE *f;

		snprintf(path, sizeof(path), "%s.index", g->o.aux_dump);
		f = fopen(path, "w");
		if (!f)
			die("%s: %s", path, strerror(errno));
		for (i = 0; i < g->nr_queues; i++)
			fprintf(f, "%zu %d %d %d\n", i, g->queues[i].cpu,
				g->o.per_thread ? (int)g->threads[i]->pid : -1,
				g->queues[i].tid);
		if (fclose(f))
			die("%s: write failed", path);
	}
}

static void write_header(struct gen *g)
{
	struct perf_event_attr pt, dummy;
	uint64_t *ids = calloc(g->nr_queues, sizeof(uint64_t));
	uint64_t priv[PTC_PT_INFO_NR], config = PT_CFG_PT | PT_CFG_BRANCH;
	uint8_t tc[48], info[8 + sizeof(priv)];
	struct utsname u;
	const char *cmd[8] = { "perf", "record", "-e", "intel_pt//u", "--", g->threads[0]->comm };
	size_t i;

	if (!ids)
		die("out of memory");
	if (g->o.tsc)
		config |= PT_CFG_TSC;
	if (g->o.mtc)
		config |= PT_CFG_MTC | ((uint64_t)g->o.mtc_period << PT_CFG_MTC_PERIOD_SHIFT);
	if (g->o.cyc)
		config |= PT_CFG_CYC;
	if (!g->o.retcomp)
		config |= PT_CFG_NORETCOMP;
	config |= (uint64_t)g->o.psb_period << PT_CFG_PSB_PERIOD_SHIFT;

	memset(&pt, 0, sizeof(pt));
	pt.type = PT_PMU_TYPE;
	pt.size = sizeof(pt);
	pt.config = config;
	pt.sample_period = 1;
	pt.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	pt.read_format = PERF_FORMAT_ID;
	pt.disabled = 1;
	pt.inherit = 1;
	pt.exclude_kernel = 1;
	pt.exclude_hv = 1;
	pt.enable_on_exec = 1;
	pt.sample_id_all = 1;
	for (i = 0; i < g->nr_queues; i++)
		ids[i] = ID_PT_BASE + i;
	check(g, ptc_perf_writer_add_attr(g->w, &pt, "intel_pt//u", ids,
					  (uint32_t)g->nr_queues), "attr");

	/* The sideband events perf record adds for Intel PT, as a real
	 * recording of a workload has them: per CPU, a CPU-wide dummy for
	 * context switches (SWITCH_CPU_WIDE, have_sched_switch = 3) and the
	 * tracking dummy; per thread, the tracking dummy also records the
	 * thread's own switches. */
	memset(&dummy, 0, sizeof(dummy));
	dummy.type = PERF_TYPE_SOFTWARE;
	dummy.config = PERF_COUNT_SW_DUMMY;
	dummy.size = sizeof(dummy);
	dummy.sample_period = 1;
	dummy.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	dummy.read_format = PERF_FORMAT_ID;
	dummy.inherit = 1;
	dummy.exclude_kernel = 1;
	dummy.exclude_hv = 1;
	dummy.sample_id_all = 1;
	if (!g->o.per_thread && g->o.sched_switch) {
		/* as perf record adds it where the kernel cannot write
		 * context-switch records (have_sched_switch = 1) */
		struct perf_event_attr ss;

		memset(&ss, 0, sizeof(ss));
		ss.type = PERF_TYPE_TRACEPOINT;
		ss.size = sizeof(ss);
		ss.config = g->ss_id;
		ss.sample_period = 1;
		ss.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW |
				 PERF_SAMPLE_IDENTIFIER;
		ss.read_format = PERF_FORMAT_ID;
		ss.inherit = 1;
		ss.sample_id_all = 1;
		ss.exclude_guest = 1;
		for (i = 0; i < g->nr_queues; i++)
			ids[i] = ID_SWITCH_BASE + i;
		check(g, ptc_perf_writer_add_attr(g->w, &ss, "sched:sched_switch", ids,
						  (uint32_t)g->nr_queues), "attr");
		check(g, ptc_perf_writer_set_feature(g->w, PTC_FEAT_TRACING_DATA, g->tracing,
						     g->tracing_size), "TRACING_DATA");
	} else if (!g->o.per_thread) {
		struct perf_event_attr sw = dummy;

		sw.context_switch = 1;
		for (i = 0; i < g->nr_queues; i++)
			ids[i] = ID_SWITCH_BASE + i;
		check(g, ptc_perf_writer_add_attr(g->w, &sw, "dummy:u", ids,
						  (uint32_t)g->nr_queues), "attr");
	}
	dummy.disabled = 1;
	dummy.mmap = dummy.comm = dummy.task = dummy.mmap2 = 1;
	dummy.comm_exec = 1;
	dummy.context_switch = g->o.per_thread;
	dummy.enable_on_exec = 1;
	for (i = 0; i < g->nr_queues; i++)
		ids[i] = ID_DUMMY_BASE + i;
	check(g, ptc_perf_writer_add_attr(g->w, &dummy, "dummy:u", ids,
					  (uint32_t)g->nr_queues), "attr");
	free(ids);

	uname(&u);
	check(g, ptc_perf_writer_set_string(g->w, PTC_FEAT_HOSTNAME, "ptgen"), "feature");
	check(g, ptc_perf_writer_set_string(g->w, PTC_FEAT_OSRELEASE, u.release), "feature");
	check(g, ptc_perf_writer_set_string(g->w, PTC_FEAT_VERSION, "6.1.ptgen-encode"), "feature");
	check(g, ptc_perf_writer_set_string(g->w, PTC_FEAT_ARCH, "x86_64"), "feature");
	check(g, ptc_perf_writer_set_nrcpus(g->w, g->o.per_thread ? 1 : g->o.cpus,
					   g->o.per_thread ? 1 : g->o.cpus), "feature");
	check(g, ptc_perf_writer_set_string(g->w, PTC_FEAT_CPUDESC,
					    "Intel(R) Xeon(R) CPU (ptgen model) @ 2.00GHz"), "feature");
	check(g, ptc_perf_writer_set_string(g->w, PTC_FEAT_CPUID, "GenuineIntel,6,85,4"), "feature");
	check(g, ptc_perf_writer_set_u64(g->w, PTC_FEAT_TOTAL_MEM, 16u << 20), "feature");
	check(g, ptc_perf_writer_set_cmdline(g->w, 6, cmd), "feature");
	check(g, ptc_perf_writer_begin(g->w), "header");

	/* TIME_CONV: perf time = TSC * mult >> shift (+ zero). */
	memset(tc, 0, sizeof(tc));
	ptc_put64(tc, 31);
	ptc_put64(tc + 8, 1ULL << 30);
	ptc_put64(tc + 16, 0);
	ptc_put64(tc + 24, 0);		/* time_cycles */
	ptc_put64(tc + 32, 0);		/* time_mask */
	tc[40] = 1;			/* cap_user_time_zero */
	tc[41] = 0;			/* cap_user_time_short */
	check(g, ptc_perf_writer_event(g->w, PTC_REC_TIME_CONV, 0, tc, sizeof(tc), NULL),
	      "TIME_CONV");

	memset(priv, 0, sizeof(priv));
	priv[PTC_PT_PMU_TYPE] = PT_PMU_TYPE;
	priv[PTC_PT_TIME_SHIFT] = 31;
	priv[PTC_PT_TIME_MULT] = 1ULL << 30;
	priv[PTC_PT_TIME_ZERO] = 0;
	priv[PTC_PT_CAP_USER_TIME_ZERO] = 1;
	priv[PTC_PT_TSC_BIT] = PT_CFG_TSC;
	priv[PTC_PT_NORETCOMP_BIT] = PT_CFG_NORETCOMP;
	priv[PTC_PT_HAVE_SCHED_SWITCH] = g->o.per_thread ? 0 : g->o.sched_switch ? 1 : 3;
	priv[PTC_PT_SNAPSHOT_MODE] = 0;
	priv[PTC_PT_PER_CPU_MMAPS] = !g->o.per_thread;
	priv[PTC_PT_MTC_BIT] = PT_CFG_MTC;
	priv[PTC_PT_MTC_FREQ_BITS] = 0xfULL << PT_CFG_MTC_PERIOD_SHIFT;
	priv[PTC_PT_TSC_CTC_N] = TSC_CTC_RATIO;
	priv[PTC_PT_TSC_CTC_D] = 1;
	priv[PTC_PT_CYC_BIT] = PT_CFG_CYC;
	priv[PTC_PT_MAX_NONTURBO_RATIO] = CBR_RATIO;
	priv[PTC_PT_FILTER_STR_LEN] = 0;
	ptc_put32(info, PTC_AUXTRACE_INTEL_PT);
	ptc_put32(info + 4, 0);
	memcpy(info + 8, priv, sizeof(priv));
	check(g, ptc_perf_writer_event(g->w, PTC_REC_AUXTRACE_INFO, 0, info,
				       sizeof(info), NULL), "AUXTRACE_INFO");
	check(g, ptc_perf_writer_event(g->w, PTC_REC_FINISHED_INIT, 0, NULL, 0, NULL),
	      "FINISHED_INIT");
}

static enum ptenc_kind kind_of(int k)
{
	return (enum ptenc_kind)k;
}

static void ovf_check(struct gen *g, struct queue *q, struct thread *t, const struct truth_event *ev)
{
	if (g->o.ovf_at && g->branches == g->o.ovf_at && !g->ovf_q) {
		g->ovf_q = q;
		g->ovf_left = g->o.ovf_drop;
		g->ovf_line = ev->line;
		/* Branches after the last packet before the OVF are lost
		 * with it: the decoder cannot tell how far the CPU got. */
		uint64_t before = ptenc_offset(q->enc) - q->dropped;

		check(g, ptenc_overflow(q->enc, tsc_of(ev->time)), "OVF");
		/* ovf_at: the OVF packet's offset (it ends the stream so far:
		 * 2 bytes, after the TNT bits it flushed) */
		if (g->gaps)
			fprintf(g->gaps, "ovf queue %u offset %llu first %llu last_ip 0x%llx ovf_at %llu",
				q->idx, (unsigned long long)before, (unsigned long long)g->taken_at_packet,
				(unsigned long long)t->pkt_ip,
				(unsigned long long)(ptenc_offset(q->enc) - 2 - q->dropped));
	}
	if (g->ovf_q == q && ptenc_in_overflow(q->enc)) {
		if (g->ovf_left) {
			g->ovf_left--;
			return;
		}
		check(g, ptenc_overflow_end(q->enc, tsc_of(ev->time), ev->ip, 1), "OVF end");
		if (g->gaps)
			fprintf(g->gaps, " resume %llu ip 0x%llx\n",
				(unsigned long long)g->taken, (unsigned long long)ev->ip);
	}
}

/* The --gaps line of a cut: from drop_first to the branch at which a PSB
 * after it lets a decoder resume; at the end of the stream when no PSB
 * followed (all that came after the cut is lost). */
static void drop_report(struct gen *g, struct queue *q)
{
	q->drop_resync = g->taken;
	q->drop_state = 2;
	if (g->gaps)
		fprintf(g->gaps, "%s queue %u offset %llu bytes %llu first %llu resync %llu\n",
			g->o.drop == 2 ? "truncate" : "drop", q->idx,
			(unsigned long long)(g->o.drop == 2 ? q->trunc_at : g->o.drop_offset),
			(unsigned long long)g->o.drop_bytes,
			(unsigned long long)q->drop_first,
			(unsigned long long)q->drop_resync);
}

/* Where --drop cuts the stream, in taken-branch indices (see struct queue). */
static void drop_track(struct gen *g, struct queue *q)
{
	uint64_t lo = g->o.drop_offset, hi = lo + g->o.drop_bytes;

	if (!g->o.drop || q->idx != g->o.drop_queue || q->drop_state == 2)
		return;
	if (q->drop_state == 0) {
		if (ptenc_offset(q->enc) + 8 <= lo) {
			if (!ptenc_pending_tnt(q->enc))
				q->drop_first = g->taken_at_packet;
			return;
		}
		q->drop_state = 1;
		if (g->o.drop == 2) {
			/* --truncate: the hardware stops here and resumes
			 * with a PSB+ at this very offset. */
			check(g, ptenc_stop(q->enc, g->o.drop_bytes), "truncate");
			q->trunc_at = ptenc_offset(q->enc);
			q->trunc_flag = 1;
			/* The kernel's AUX record (TRUNCATED) comes now. */
			check(g, ptenc_flush(q->enc), "truncate");
		}
	}
	if (g->o.drop == 2)
		hi = q->trunc_at;
	if (ptenc_last_psb(q->enc) != UINT64_MAX && ptenc_last_psb(q->enc) >= hi &&
	    !ptenc_stopped(q->enc))
		drop_report(g, q);
}

/* Leaves user mode on t's queue at time tm; the kernel then runs for
 * KERNEL_NS. */
static void kernel_entry(struct gen *g, struct thread *t, uint64_t tm, int far,
			 uint64_t ip)
{
	struct queue *q = queue_of(g, t);

	q->now = tm;
	t->in_user = 0;
	t->far_out |= far;
	if (far)
		check(g, ptenc_far_exit(q->enc, tsc_of(tm)), "far branch");
	else
		check(g, ptenc_async_exit(q->enc, tsc_of(tm), ip), "asynchronous exit");
	g->koff += KERNEL_NS;
}

static void user_entry(struct gen *g, struct thread *t, uint64_t tm, uint64_t ip)
{
	struct queue *q = queue_of(g, t);

	q->now = tm;
	t->in_user = 1;
	if (t->far_out || !t->pkt_ip)
		t->pkt_ip = ip;
	t->far_out = 0;
	ptenc_set_mode(q->enc, t->bits);
	check(g, ptenc_resume(q->enc, tsc_of(tm), ip), "resume");
}

/* S: the truth's CPU switches to thread t.  A thread switched out while
 * in user mode was preempted (an interrupt) or had blocked in a system
 * call whose B line ptgen-trace writes later. */
static void switch_to(struct gen *g, struct thread *t, uint64_t tm)
{
	struct thread *o = g->running;

	if (o && o != t && o->in_user) {
		struct preemption *pe;

		if (o->preempt_next >= o->nr_preempt)
			die("%s: no IP for the preemption of thread %u", g->o.truth, o->tid);
		pe = &o->preempt_ip[o->preempt_next++];
		if (pe->far) {
			o->late_far++;
		} else {
			o->resume_ip = pe->ip;
			o->preempted = 1;
		}
		kernel_entry(g, o, tm, pe->far, pe->ip);
		tm += KERNEL_NS;
	}
	g->running = t;
	if (g->o.migrate && !g->o.per_thread && g->nr_queues > 1 && o != t &&
	    ++t->switch_ins % g->o.migrate == 0) {
		/* the scheduler moves it to the next CPU (whose thread, as
		 * every other CPU's, run_thread() switches out) */
		t->queue = (t->queue + 1) % g->nr_queues;
		t->cpu = (int)t->queue;
	}
	run_thread(g, t, tm - KERNEL_NS / 2);
	if (t->preempted) {
		t->preempted = 0;
		user_entry(g, t, tm, t->resume_ip);
	}
}

/* Second pass: one event of the execution, in order. */
void gen_event(struct gen *g, struct truth_event *ev)
{
	struct thread *t = NULL;
	struct queue *q;
	uint64_t sb;	/* time of sideband records: in the kernel */

	if (ev->type == 'V')
		return;
	ev->time += g->koff;
	sb = ev->time - KERNEL_NS / 2;
	if (ev->type != 'M' && ev->type != 'F') {
		t = find_thread(g, ev->tid);
		if (!t)
			die("%s:%llu: unknown thread %u", g->o.truth,
			    (unsigned long long)ev->line, ev->tid);
	}
	switch (ev->type) {
	case 'T':
		if (t == g->threads[0]) {
			rec_comm(g, t, sb, 0);
			run_thread(g, t, sb);
		}
		break;
	case 'F':
		t = find_thread(g, ev->tid);
		rec_fork_exit(g, PERF_RECORD_FORK, t, sb);
		break;
	case 'C':
		snprintf(t->comm, sizeof(t->comm), "%s", ev->comm);
		rec_comm(g, t, sb, ev->exec);
		break;
	case 'M':
		t = find_thread(g, ev->tid);
		if (!t)
			t = add_thread(g, ev->pid, ev->tid);
		ev->time = sb;
		rec_mmap2(g, t, ev);
		break;
	case 'S':
		switch_to(g, t, ev->time);
		break;
	case 'X':
		rec_fork_exit(g, PERF_RECORD_EXIT, t, sb);
		break;
	case 'E':
		q = queue_of(g, t);
		q->now = ev->time;
		break;
	case 'R':
		run_thread(g, t, sb);
		t->bits = ev->bits;
		user_entry(g, t, ev->time, ev->ip);
		break;
	case 'A':
		t->insns_since_irq = 0;
		if (t->preempted)
			break;	/* already out of user mode at this IP */
		if (!t->in_user)
			die("%s:%llu: asynchronous exit outside user mode",
			    g->o.truth, (unsigned long long)ev->line);
		kernel_entry(g, t, ev->time, 0, ev->ip);
		break;
	case 'B':
		g->branches++;
		if (t->late_far && ev->kind == PTENC_FAR && t != g->running) {
			t->late_far--;
			g->taken_at_packet = g->taken;
			g->taken++;
			break;
		}
		run_thread(g, t, sb);
		q = queue_of(g, t);
		q->now = ev->time;
		if (!t->in_user)
			die("%s:%llu: branch while not in user mode (no R line before it)",
			    g->o.truth, (unsigned long long)ev->line);
		drop_track(g, q);
		ovf_check(g, q, t, ev);
		t->insns_since_irq += ev->insns;
		if (g->o.interrupt_every && t->insns_since_irq >= g->o.interrupt_every &&
		    !ptenc_in_overflow(q->enc)) {
			/* A synthetic interrupt before the branch
			 * executes: user-mode flow is unchanged. */
			t->insns_since_irq = 0;
			kernel_entry(g, t, ev->time, 0, ev->ip);
			ev->time += KERNEL_NS;
			user_entry(g, t, ev->time, ev->ip);
		}
		if (ev->kind == PTENC_FAR) {
			kernel_entry(g, t, ev->time, 1, 0);
		} else {
			check(g, ptenc_branch(q->enc, tsc_of(ev->time), kind_of(ev->kind),
					      ev->ip, ev->target, ev->taken, ev->blen),
			      "branch");
		}
		/* A decoder may not report the last branch before a
		 * loss (it learns its target only from what follows), so
		 * lost ranges start before it. */
		if (ev->kind != PTENC_JMP && ev->kind != PTENC_CALL)
			g->taken_at_packet = g->taken;
		if (ev->kind != PTENC_JMP && ev->kind != PTENC_CALL && ev->kind != PTENC_FAR)
			t->pkt_ip = ev->taken ? ev->target : ev->ip + ev->blen;
		if (ev->kind != PTENC_COND || ev->taken)
			g->taken++;
		drop_track(g, q);
		g->last_time = ev->time;
		break;
	}
	if (ev->time > g->last_time)
		g->last_time = ev->time;
}

struct gen *gen_new(const struct gen_options *o, int fd)
{
	struct gen *g = calloc(1, sizeof(*g));
	char *tdir;

	if (!g)
		die("out of memory");
	g->o = *o;
	tdir = o->truth ? strdup(o->truth) : NULL;
	g->truth_dir_buf = tdir;
	g->truth_dir = tdir ? dirname(tdir) : NULL;
	check(g, ptc_perf_writer_new(&g->w, fd, o->pipe ? PTC_PERF_WRITE_PIPE :
						       PTC_PERF_WRITE_FILE), "writer");
	if (o->zlevel)
		check(g, ptc_perf_writer_set_compression(g->w, o->zlevel), "compression");
	if (o->sched_switch)
		ss_load(g);	/* pipe mode: the writer puts the tracing data into
				 * a HEADER_TRACING_DATA record */
	if (o->gaps) {
		g->gaps = fopen(o->gaps, "w");
		if (!g->gaps)
			die("%s: %s", o->gaps, strerror(errno));
	}
	return g;
}

void gen_finish(struct gen *g)
{
	size_t i;

	for (i = 0; i < g->nr_queues; i++) {
		struct queue *q = &g->queues[i];

		if (q->started)
			check(g, ptenc_flush(q->enc), "flush");
		if (q->drop_state == 1)
			drop_report(g, q);
	}
	if (!g->o.pipe)
		check(g, ptc_perf_writer_set_sample_time(g->w, perf_time(g->first_time),
							 perf_time(g->last_time)), "feature");
	check(g, ptc_perf_writer_finish(g->w), "finish");
}

void gen_stats(const struct gen *g, FILE *f)
{
	size_t i;

	for (i = 0; i < g->nr_queues; i++) {
		const struct queue *q = &g->queues[i];
		const struct ptenc_stats *s = ptenc_stats(q->enc);

		if (!q->started)
			continue;
		fprintf(f,
			"queue %zu: %llu bytes (%llu dropped), TNT %llu bits in %llu packets, "
			"TIP %llu, PGE %llu, PGD %llu, FUP %llu, PSB %llu, OVF %llu, "
			"MODE.EXEC %llu, TSC %llu, TMA %llu, MTC %llu, CYC %llu, CBR %llu, "
			"compressed RET %llu, call-stack entries dropped %llu\n",
			i, (unsigned long long)s->bytes, (unsigned long long)q->dropped,
			(unsigned long long)s->tnt_bits, (unsigned long long)s->tnt_packets,
			(unsigned long long)s->tip, (unsigned long long)s->tip_pge,
			(unsigned long long)s->tip_pgd, (unsigned long long)s->fup,
			(unsigned long long)s->psb, (unsigned long long)s->ovf,
			(unsigned long long)s->mode_exec, (unsigned long long)s->tsc,
			(unsigned long long)s->tma, (unsigned long long)s->mtc,
			(unsigned long long)s->cyc, (unsigned long long)s->cbr,
			(unsigned long long)s->ret_compressed,
			(unsigned long long)s->callstack_dropped);
	}
}

uint64_t gen_aux_bytes(const struct gen *g)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < g->nr_queues; i++)
		n += g->queues[i].kept;
	return n;
}

void gen_free(struct gen *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nr_queues; i++) {
		struct queue *q = &g->queues[i];

		if (q->dump)
			fclose(q->dump);
		ptenc_free(q->enc);
	}
	free(g->tracing);
	if (g->gaps)
		fclose(g->gaps);
	ptc_perf_writer_free(g->w);
	free(g->queues);
	for (i = 0; i < g->nr_threads; i++) {
		free(g->threads[i]->preempt_ip);
		free(g->threads[i]);
	}
	free(g->threads);
	free(g->truth_dir_buf);
	free(g);
}

/* --- options shared by ptgen-encode and ptgen-walk ------------------------ */

enum {
	OPT_PIPE = 256, OPT_NORETCOMP, OPT_TIMING, OPT_MTC_PERIOD, OPT_PSB_PERIOD,
	OPT_LONG_TNT, OPT_CPUS, OPT_PER_THREAD, OPT_OVF_AT, OPT_DROP,
	OPT_INTERRUPT_EVERY, OPT_BUILDID_DIR, OPT_GAPS, OPT_AUX_DUMP, OPT_AUX_CHUNK,
	OPT_COMPRESS, OPT_TRUNCATE, OPT_SCHED_SWITCH, OPT_LOST_AT_SWITCH, OPT_MIGRATE,
};

const struct option gen_long_options[] = {
	{ "pipe", no_argument, NULL, OPT_PIPE },
	{ "noretcomp", no_argument, NULL, OPT_NORETCOMP },
	{ "timing", required_argument, NULL, OPT_TIMING },
	{ "mtc-period", required_argument, NULL, OPT_MTC_PERIOD },
	{ "psb-period", required_argument, NULL, OPT_PSB_PERIOD },
	{ "long-tnt", no_argument, NULL, OPT_LONG_TNT },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "ovf-at", required_argument, NULL, OPT_OVF_AT },
	{ "drop", required_argument, NULL, OPT_DROP },
	{ "interrupt-every", required_argument, NULL, OPT_INTERRUPT_EVERY },
	{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
	{ "gaps", required_argument, NULL, OPT_GAPS },
	{ "aux-dump", required_argument, NULL, OPT_AUX_DUMP },
	{ "aux-chunk", required_argument, NULL, OPT_AUX_CHUNK },
	{ "compress", required_argument, NULL, OPT_COMPRESS },
	{ "truncate", required_argument, NULL, OPT_TRUNCATE },
	{ "sched-switch", required_argument, NULL, OPT_SCHED_SWITCH },
	{ "lost-at-switch", required_argument, NULL, OPT_LOST_AT_SWITCH },
	{ "migrate", required_argument, NULL, OPT_MIGRATE },
	{ NULL, 0, NULL, 0 }
};

void gen_options_help(FILE *f)
{
	fprintf(f,
"  -o FILE               output perf.data (default perf.data; - for stdout)\n"
"  --pipe                write pipe-mode perf.data\n"
"  --noretcomp           no RET compression (every RET a TIP)\n"
"  --timing=LIST         none, or a comma list of tsc, mtc, cyc (default tsc,mtc)\n"
"  --mtc-period N        MTC every 2^N crystal ticks (default 3)\n"
"  --psb-period N        PSB every 2^(N+11) bytes (default 3: 16 KiB)\n"
"  --long-tnt            accumulate up to 47 TNT bits per packet\n"
"  --cpus N              spread threads over N CPUs (default 1)\n"
"  --migrate N           with --cpus: every N-th time a thread is switched in,\n"
"                        it runs on the next CPU\n"
"  --per-thread          one AUX queue per thread (perf record --per-thread)\n"
"  --ovf-at N[:K]        OVF before the N-th branch, losing the next K (default 8)\n"
"  --drop BYTES@OFFSET[:QUEUE]  remove AUX bytes, AUX record flagged PARTIAL\n"
"  --truncate BYTES@OFFSET[:QUEUE]  AUX buffer full at OFFSET: BYTES of packets\n"
"                        not written, then PSB+; AUX record flagged TRUNCATED\n"
"  --interrupt-every N   inject an interrupt every N instructions per thread\n"
"  --buildid-dir DIR     put the vDSO into perf's build-id cache layout in DIR\n"
"  --gaps FILE           where data was lost, in taken-branch indices\n"
"  --aux-dump PREFIX     also write each queue's AUX stream to PREFIX.N.pt\n"
"                        and PREFIX.index (queue cpu pid tid per line)\n"
"  --aux-chunk BYTES     bytes per AUXTRACE record (default 65536)\n"
"  --compress LEVEL      zstd-compress the sideband records (perf record -z)\n"
"  --sched-switch FILE   per CPU: sched:sched_switch samples instead of\n"
"                        SWITCH_CPU_WIDE, with the tracing data and event id of\n"
"                        FILE (a perf record -e sched:sched_switch recording)\n"
"  --lost-at-switch N    per CPU: a LOST record just before the N-th switch\n");
}

void gen_options_init(struct gen_options *o)
{
	memset(o, 0, sizeof(*o));
	o->out = "perf.data";
	o->retcomp = 1;
	o->tsc = o->mtc = 1;
	o->mtc_period = 3;
	o->psb_period = 3;
	o->cpus = 1;
	o->ovf_drop = 8;
	o->chunk = 65536;
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		die("bad %s: %s", what, s);
	return v;
}

static void parse_timing(struct gen_options *o, const char *s)
{
	char buf[64], *tok, *save;

	o->tsc = o->mtc = o->cyc = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "none"))
			continue;
		else if (!strcmp(tok, "tsc"))
			o->tsc = 1;
		else if (!strcmp(tok, "mtc"))
			o->mtc = 1;
		else if (!strcmp(tok, "cyc"))
			o->cyc = 1;
		else
			die("bad --timing: %s", tok);
	}
}

int gen_option(struct gen_options *o, int c, char *arg)
{
	char *p;

	switch (c) {
	case OPT_PIPE: o->pipe = 1; break;
	case OPT_NORETCOMP: o->retcomp = 0; break;
	case OPT_TIMING: parse_timing(o, arg); break;
	case OPT_MTC_PERIOD: o->mtc_period = (unsigned)parse_u64(arg, "--mtc-period"); break;
	case OPT_PSB_PERIOD: o->psb_period = (unsigned)parse_u64(arg, "--psb-period"); break;
	case OPT_LONG_TNT: o->long_tnt = 1; break;
	case OPT_CPUS: o->cpus = (unsigned)parse_u64(arg, "--cpus"); break;
	case OPT_PER_THREAD: o->per_thread = 1; break;
	case OPT_OVF_AT:
		p = strchr(arg, ':');
		if (p) {
			*p = 0;
			o->ovf_drop = parse_u64(p + 1, "--ovf-at");
		}
		o->ovf_at = parse_u64(arg, "--ovf-at");
		break;
	case OPT_DROP:
	case OPT_TRUNCATE:
		p = strchr(arg, ':');
		if (p) {
			*p = 0;
			o->drop_queue = (unsigned)parse_u64(p + 1, "--drop queue");
		}
		p = strchr(arg, '@');
		if (!p)
			die("--drop wants BYTES@OFFSET");
		*p = 0;
		o->drop_bytes = parse_u64(arg, "--drop");
		o->drop_offset = parse_u64(p + 1, "--drop");
		o->drop = c == OPT_DROP ? 1 : 2;
		if (!o->drop_bytes)
			die("--drop/--truncate: no bytes");
		break;
	case OPT_INTERRUPT_EVERY: o->interrupt_every = parse_u64(arg, "--interrupt-every"); break;
	case OPT_BUILDID_DIR: o->buildid_dir = arg; break;
	case OPT_GAPS: o->gaps = arg; break;
	case OPT_AUX_DUMP: o->aux_dump = arg; break;
	case OPT_AUX_CHUNK: o->chunk = (size_t)parse_u64(arg, "--aux-chunk"); break;
	case OPT_COMPRESS: o->zlevel = (int)parse_u64(arg, "--compress"); break;
	case OPT_SCHED_SWITCH: o->sched_switch = arg; break;
	case OPT_LOST_AT_SWITCH: o->lost_at_switch = parse_u64(arg, "--lost-at-switch"); break;
	case OPT_MIGRATE: o->migrate = (unsigned)parse_u64(arg, "--migrate"); break;
	default: return 0;
	}
	return 1;
}

void gen_options_check(const struct gen_options *o)
{
	if (!o->cpus || o->cpus > 64 || o->psb_period > 15 || o->mtc_period > 15 ||
	    o->chunk < 4096)
		die("option out of range");
}
