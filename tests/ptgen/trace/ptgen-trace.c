/* ptgen-trace: the exact user-mode execution of a program, by single-step.
 *
 *   ptgen-trace [-o OUT.truth] [--vdso-dir DIR] [--slice N] [--max-insns N]
 *               -- PROGRAM ARGS...
 *
 * Forks, lets the child PTRACE_TRACEME and exec PROGRAM, then single-steps
 * every thread of every process it creates, one thread at a time, and
 * writes what executed as a ground truth (tests/ptgen/ground-truth.md):
 * every branch with its kind, direction and the instructions before it,
 * every entry into and exit from user mode, the executable mappings, the
 * threads and processes.  It is the oracle of the test suite, so it
 * decides nothing from a model of the program: every line is what the
 * CPU did, as the next RIP after each step shows.
 *
 * The tracer's exit status is the traced program's (128 + signal when a
 * signal killed it), 127 when it cannot be executed, 77 when ptrace is not
 * permitted here (so that tests can skip), 1 on a tracer error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "common/trace_event.h"
#include "aspace.h"
#include "insn.h"

#define PTG_EXIT_NOEXEC 127
#define PTG_EXIT_SKIP 77

enum thread_state {
	TH_NEW,		/* announced by its parent, initial stop not seen yet */
	TH_READY,	/* stopped by us between two steps */
	TH_INFLIGHT,	/* resumed into a system call that blocks */
	TH_DEAD,
};

struct proc {
	pid_t pid;
	struct ptg_aspace *as;
	int live;		/* threads not dead */
};

struct thread {
	pid_t tid;
	struct proc *proc;	/* NULL while only its initial stop was seen */
	enum thread_state state;
	int seen_stop;		/* its initial SIGSTOP arrived */
	int pending_r;		/* next executed instruction starts with an R line */
	int pending_sig;	/* signal to deliver before the next instruction */
	uint64_t count;		/* instructions since the last B/A line */
	uint64_t total;		/* instructions executed */
	uint64_t branches;
	struct user_regs_struct regs;	/* valid when TH_READY */
	/* The step in flight while TH_INFLIGHT. */
	struct ptg_insn insn;
	long sysno;		/* rax before the step: the system call number */
	uint64_t pre_flags;	/* rflags and rcx before the step, for */
	uint64_t pre_rcx;	/* conditional branches to their fall-through */
	uint64_t dr[2];		/* debug registers 0 and 1 as last set */
	uint64_t dr7;		/* 0 none armed, 1 DR0, 5 DR0 and DR1 */
	int b_pending;		/* far insn stepped, its B line not written yet */
	int done;		/* its stop arrived, not processed yet */
	int done_status;
};

static struct {
	FILE *out;
	const char *vdso_dir;
	uint64_t slice;
	uint64_t max_insns;
	uint64_t now;		/* global instruction counter = time */
	uint64_t steps;
	struct thread **threads;	/* in creation order */
	size_t nthreads, cap;
	struct thread *last_stepped;
	pid_t root_pid;
	int root_status;
	int root_done;
	int verbose;
	int aslr;		/* --aslr: keep address-space randomisation */
	int single_step;	/* --single-step: no runs to breakpoints */
	uint64_t runs;
} g = { .slice = 10000 };

static void fatal(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ptgen-trace: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ptgen-trace: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- output ------------------------------------------------------------ */

static void put_word(const char *p)
{
	for (; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch <= ' ' || ch == '\\' || ch == 0x7f)
			fprintf(g.out, "\\%03o", ch);
		else
			fputc(ch, g.out);
	}
}

static void read_comm(pid_t tid, char *buf, size_t sz)
{
	char name[64];
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/comm", (int)tid);
	snprintf(buf, sz, "?");
	f = fopen(name, "re");
	if (!f)
		return;
	if (fgets(buf, (int)sz, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static void emit_T(struct thread *t)
{
	char comm[64];

	read_comm(t->tid, comm, sizeof(comm));
	fprintf(g.out, "T %" PRIu64 " %d %d ", g.now, (int)t->proc->pid,
		(int)t->tid);
	put_word(comm);
	fputc('\n', g.out);
}

static void emit_C(struct thread *t, int exec)
{
	char comm[64];

	read_comm(t->tid, comm, sizeof(comm));
	fprintf(g.out, "C %" PRIu64 " %d %d %d ", g.now, (int)t->proc->pid,
		(int)t->tid, exec);
	put_word(comm);
	fputc('\n', g.out);
}

static void emit_R(struct thread *t, uint64_t ip)
{
	fprintf(g.out, "R %" PRIu64 " %d 0x%" PRIx64 "\n", g.now, (int)t->tid,
		ip);
}

static void emit_A(struct thread *t, uint64_t ip)
{
	fprintf(g.out, "A %" PRIu64 " %d 0x%" PRIx64 " %" PRIu64 "\n", g.now,
		(int)t->tid, ip, t->count);
	t->total += t->count;
	t->count = 0;
}

/* The branch insn executed: count it and write its B line. */
static void emit_B(struct thread *t, const struct ptg_insn *insn, int taken)
{
	g.now++;
	t->count++;
	fprintf(g.out, "B %" PRIu64 " %d 0x%" PRIx64 " 0x%" PRIx64
		" %d %d %u %" PRIu64 "\n", g.now, (int)t->tid, insn->ip,
		insn->target, insn->kind, taken, insn->len, t->count);
	t->total += t->count;
	t->count = 0;
	t->branches++;
}

/* t's far instruction (system call) executed: its B line, preceded by the
 * R line when it is the first instruction since user mode resumed.  This
 * happens at the first event of the call (the lines of a clone or an exec
 * come after the call) or when the step ends. */
static void flush_far(struct thread *t)
{
	if (!t->b_pending)
		return;
	t->b_pending = 0;
	if (t->pending_r) {
		emit_R(t, t->insn.ip);
		t->pending_r = 0;
	}
	emit_B(t, &t->insn, 1);
}

/* t's instruction at ip executes: the R line if user mode resumes here. */
static void resumed(struct thread *t, uint64_t ip)
{
	if (t->pending_r) {
		emit_R(t, ip);
		t->pending_r = 0;
	}
}

static int refresh_maps(struct thread *t)
{
	struct ptg_mline_ctx m = {
		.out = g.out, .time = g.now, .pid = t->proc->pid,
		.tid = t->tid, .vdso_dir = g.vdso_dir,
	};

	return ptg_aspace_refresh(t->proc->as, &m);
}

/* ---- threads ----------------------------------------------------------- */

static struct thread *find_thread(pid_t tid)
{
	for (size_t i = 0; i < g.nthreads; i++)
		if (g.threads[i]->tid == tid && g.threads[i]->state != TH_DEAD)
			return g.threads[i];
	return NULL;
}

static struct thread *new_thread(pid_t tid)
{
	struct thread *t = calloc(1, sizeof(*t));

	if (!t)
		fatal("out of memory");
	if (g.nthreads == g.cap) {
		g.cap = g.cap ? 2 * g.cap : 16;
		g.threads = realloc(g.threads, g.cap * sizeof(*g.threads));
		if (!g.threads)
			fatal("out of memory");
	}
	t->tid = tid;
	t->state = TH_NEW;
	t->pending_r = 1;
	g.threads[g.nthreads++] = t;
	return t;
}

static struct proc *new_proc(pid_t pid, int inherit)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		fatal("out of memory");
	p->pid = pid;
	p->as = ptg_aspace_open(pid, inherit);
	if (!p->as)
		fatal("cannot read the mappings of process %d: %s", (int)pid,
		      strerror(errno));
	return p;
}

static void get_regs(struct thread *t)
{
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &t->regs) < 0)
		fatal("PTRACE_GETREGS of thread %d: %s", (int)t->tid,
		      strerror(errno));
}

static pid_t tgid_of(pid_t tid)
{
	char name[64], line[256];
	pid_t tgid = tid;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/status", (int)tid);
	f = fopen(name, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* The thread ended (exited or killed): its last instructions, E and X. */
static void thread_exit(struct thread *t, int status)
{
	if (t->count)
		emit_A(t, t->regs.rip);
	fprintf(g.out, "E %" PRIu64 " %d\n", g.now, (int)t->tid);
	if (t->proc) {
		fprintf(g.out, "X %" PRIu64 " %d %d\n", g.now,
			(int)t->proc->pid, (int)t->tid);
		if (t->tid == g.root_pid) {
			g.root_status = status;
			g.root_done = 1;
		}
		if (--t->proc->live == 0) {
			ptg_aspace_free(t->proc->as);
			t->proc->as = NULL;
		}
	}
	if (g.verbose)
		fprintf(stderr, "ptgen-trace: thread %d: %" PRIu64
			" instructions, %" PRIu64 " branches\n", (int)t->tid,
			t->total, t->branches);
	t->state = TH_DEAD;
}

static void became_ready(struct thread *t)
{
	t->state = TH_READY;
	get_regs(t);
}

/* A thread reported its first stop and its parent has announced it. */
static void check_new(struct thread *t)
{
	if (t->state == TH_NEW && t->seen_stop && t->proc)
		became_ready(t);
}

/* PTRACE_EVENT_CLONE/FORK/VFORK in thread u: announce the new thread. */
static void on_clone(struct thread *u, int event)
{
	unsigned long msg = 0;
	struct thread *c;
	pid_t tid, pid;

	if (ptrace(PTRACE_GETEVENTMSG, u->tid, NULL, &msg) < 0)
		fatal("PTRACE_GETEVENTMSG: %s", strerror(errno));
	tid = (pid_t)msg;
	c = find_thread(tid);
	if (!c)
		c = new_thread(tid);
	pid = tgid_of(tid);
	if (event == PTRACE_EVENT_CLONE && pid == u->proc->pid) {
		c->proc = u->proc;
	} else {
		c->proc = new_proc(pid, 1);
	}
	c->proc->live++;
	fprintf(g.out, "F %" PRIu64 " %d %d %d %d\n", g.now,
		(int)u->proc->pid, (int)u->tid, (int)pid, (int)tid);
	emit_T(c);
	check_new(c);
}

/* PTRACE_EVENT_EXEC in thread u: a new program, a new address space. */
static void on_exec(struct thread *u)
{
	unsigned long former = 0;
	struct proc *p = u->proc;

	if (ptrace(PTRACE_GETEVENTMSG, u->tid, NULL, &former) == 0 &&
	    (pid_t)former != u->tid)
		warn("thread %lu of process %d called execve: its other "
		     "threads are not followed exactly", former, (int)p->pid);
	ptg_aspace_free(p->as);
	p->as = ptg_aspace_open(p->pid, 0);
	if (!p->as)
		fatal("cannot read the mappings of process %d: %s", (int)p->pid,
		      strerror(errno));
	emit_C(u, 1);
	if (refresh_maps(u) < 0)
		fatal("cannot read the mappings of process %d", (int)p->pid);
	u->pending_r = 1;
	u->count = 0;
	/* execve drops the debug registers. */
	u->dr7 = u->dr[0] = u->dr[1] = 0;
}

static void resume_step(struct thread *t, int sig)
{
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, (void *)(long)sig) < 0)
		fatal("PTRACE_SINGLESTEP of thread %d: %s", (int)t->tid,
		      strerror(errno));
}

/* A report from a thread other than the one being stepped. */
static void on_other(pid_t tid, int status)
{
	struct thread *t = find_thread(tid);

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (t)
			thread_exit(t, status);
		return;
	}
	if (!t) {
		/* A new thread's initial stop, before its parent's event. */
		t = new_thread(tid);
		t->seen_stop = 1;
		return;
	}
	switch (t->state) {
	case TH_NEW:
		t->seen_stop = 1;
		check_new(t);
		break;
	case TH_INFLIGHT:
		t->done = 1;
		t->done_status = status;
		break;
	default:
		break;
	}
}

/* Handles event stops (clone, fork, exec) and resumes the thread; returns
 * 1 when the event was a vfork (the parent now blocks until the child
 * execs or exits). */
static int on_event(pid_t tid, int status)
{
	struct thread *t = find_thread(tid);
	int event = status >> 16;

	if (!t)
		fatal("event %d from unknown thread %d", event, (int)tid);
	flush_far(t);
	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		on_clone(t, event);
		break;
	case PTRACE_EVENT_EXEC:
		on_exec(t);
		break;
	default:
		break;
	}
	resume_step(t, 0);
	return event == PTRACE_EVENT_VFORK;
}

/* Waits until t's step ends and stores its status: 1, or 0 when it did
 * not end within timeout_ms (< 0: wait for ever).  Reports of other
 * threads that arrive meanwhile are handled. */
static int wait_thread(struct thread *t, int timeout_ms, int *status)
{
	struct timespec deadline;
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += timeout_ms / 1000;
		deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
	}
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st,
				  __WALL | (timeout_ms >= 0 ? WNOHANG : 0));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			fatal("waitpid: %s", strerror(errno));
		}
		if (r == 0) {
			struct timespec now, left;

			clock_gettime(CLOCK_MONOTONIC, &now);
			left.tv_sec = deadline.tv_sec - now.tv_sec;
			left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
			if (left.tv_nsec < 0) {
				left.tv_sec--;
				left.tv_nsec += 1000000000L;
			}
			if (left.tv_sec < 0)
				return 0;
			if (sigtimedwait(&chld, NULL, &left) < 0 &&
			    errno == EAGAIN)
				timeout_ms = 0;
			continue;
		}
		if (WIFSTOPPED(st) && (st >> 16)) {
			if (on_event(r, st) && r == t->tid)
				return 0;
			continue;
		}
		if (r == t->tid) {
			*status = st;
			return 1;
		}
		on_other(r, st);
	}
}

/* Waits for any report (when no thread can run). */
static void wait_any(void)
{
	int st;
	pid_t r = waitpid(-1, &st, __WALL);

	if (r < 0) {
		if (errno == EINTR)
			return;
		fatal("waitpid: %s", strerror(errno));
	}
	if (WIFSTOPPED(st) && (st >> 16))
		on_event(r, st);
	else
		on_other(r, st);
}

/* Whether a SIGTRAP stop of t is the trap of its single-step (or of the
 * delivery of a signal while stepping) rather than a SIGTRAP signal. */
static int is_step_trap(struct thread *t)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) < 0)
		return 1;
	return si.si_code > 0 && si.si_code < 0x80;
}

static int is_maps_syscall(long nr)
{
	switch (nr) {
	case SYS_mmap:
	case SYS_mprotect:
	case SYS_munmap:
	case SYS_mremap:
	case SYS_brk:
	case SYS_execve:
	case SYS_execveat:
	case SYS_shmat:
	case SYS_shmdt:
	case SYS_pkey_mprotect:
	case SYS_remap_file_pages:
		return 1;
	}
	return 0;
}

/* How long to wait for a system call before stepping other threads:
 * calls that wait for another traced thread would wait for ever. */
static int syscall_timeout(struct thread *t)
{
	int others = 0;

	for (size_t i = 0; i < g.nthreads; i++)
		if (g.threads[i] != t && g.threads[i]->state != TH_DEAD)
			others = 1;
	if (!others)
		return -1;
	switch ((long)t->regs.rax) {
	case SYS_futex:
		switch (t->regs.rsi & FUTEX_CMD_MASK) {
		case FUTEX_WAIT:
		case FUTEX_WAIT_BITSET:
		case FUTEX_LOCK_PI:
		case FUTEX_WAIT_REQUEUE_PI:
			return 0;
		}
		break;
	case SYS_wait4:
	case SYS_waitid:
	case SYS_pause:
	case SYS_rt_sigsuspend:
	case SYS_vfork:
		return 0;
	}
	return 50;
}

/* The step of t (insn) ended with status. */
static void complete_step(struct thread *t, struct ptg_insn *insn,
			  int status)
{
	int far = insn->kind == PTC_BR_FAR;
	uint64_t next;
	int sig;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		/* Killed before its instruction ran, unless that was the
		 * call that ended it. */
		if (t->b_pending && (t->sysno == SYS_exit ||
				     t->sysno == SYS_exit_group))
			flush_far(t);
		t->b_pending = 0;
		thread_exit(t, status);
		return;
	}
	sig = WSTOPSIG(status);
	t->state = TH_READY;
	get_regs(t);
	next = t->regs.rip;
	if (far) {
		int trap = sig == SIGTRAP && is_step_trap(t);

		if (!trap && next == insn->ip && t->b_pending) {
			/* A signal came before the call. */
			t->b_pending = 0;
			t->pending_sig = sig;
			return;
		}
		/* User mode resumes wherever the next instruction is,
		 * possibly a signal handler. */
		flush_far(t);
		t->pending_r = 1;
		if (is_maps_syscall(t->sysno) && refresh_maps(t) < 0)
			fatal("cannot read the mappings of process %d",
			      (int)t->proc->pid);
		if (!trap)
			t->pending_sig = sig;
		return;
	}
	if (sig == SIGTRAP && next == insn->ip && !insn->rep &&
	    !(insn->kind != PTG_NOT_BRANCH && insn->target == insn->ip) &&
	    !is_step_trap(t)) {
		t->pending_sig = sig;
		return;
	}
	if (sig != SIGTRAP) {
		/* A signal stopped the thread before the instruction ran
		 * (a fault, or an asynchronous signal). */
		if (next != insn->ip)
			warn("thread %d: signal %d after 0x%" PRIx64
			     " moved to 0x%" PRIx64, (int)t->tid, sig, insn->ip,
			     next);
		t->pending_sig = sig;
		return;
	}
	resumed(t, insn->ip);
	if (insn->kind != PTG_NOT_BRANCH) {
		int taken;

		if (insn->kind == PTC_BR_COND &&
		    insn->target == insn->ip + insn->len)
			taken = ptg_cond_taken(insn, t->pre_flags,
					       t->pre_rcx);
		else
			taken = next != insn->ip + insn->len;
		/* An indirect branch's target is where it went. */
		if (insn->kind == PTC_BR_JMP_IND ||
		    insn->kind == PTC_BR_CALL_IND || insn->kind == PTC_BR_RET)
			insn->target = next;
		emit_B(t, insn, taken);
		return;
	}
	if (next == insn->ip && insn->rep)
		return;		/* one iteration; the instruction goes on */
	if (next != insn->ip + insn->len)
		warn("thread %d: 0x%" PRIx64 " is no branch but went to 0x%"
		     PRIx64, (int)t->tid, insn->ip, next);
	g.now++;
	t->count++;
}

/* Signal disposition in the thread's process. */
enum { SIG_CAUGHT, SIG_IGNORED, SIG_FATAL };

static int disposition(struct thread *t, int sig)
{
	char name[64], line[256];
	unsigned long long ign = 0, cgt = 0, bit = 1ULL << (sig - 1);
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/status", (int)t->tid);
	f = fopen(name, "re");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			sscanf(line, "SigIgn: %llx", &ign);
			sscanf(line, "SigCgt: %llx", &cgt);
		}
		fclose(f);
	}
	if (cgt & bit)
		return SIG_CAUGHT;
	if (ign & bit)
		return SIG_IGNORED;
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	/* Job-control stops are not modelled: the thread keeps running. */
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return SIG_IGNORED;
	}
	return SIG_FATAL;
}

/* Delivers t's pending signal.  A handler starts without executing an
 * instruction: that is an asynchronous exit (A) unless user mode was not
 * resumed yet since a system call (then the R line simply goes to the
 * handler). */
static void deliver_signal(struct thread *t)
{
	int sig = t->pending_sig, status;
	uint64_t ip = t->regs.rip;

	t->pending_sig = 0;
	if (disposition(t, sig) == SIG_IGNORED)
		return;
	resume_step(t, sig);
	if (!wait_thread(t, -1, &status))
		fatal("thread %d blocked while a signal was delivered",
		      (int)t->tid);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (!t->pending_r)
			emit_A(t, ip);
		thread_exit(t, status);
		return;
	}
	get_regs(t);
	if (t->regs.rip != ip && !t->pending_r) {
		emit_A(t, ip);
		t->pending_r = 1;
	}
	if (WSTOPSIG(status) != SIGTRAP)
		t->pending_sig = WSTOPSIG(status);
}

static int set_dr(struct thread *t, int i, uint64_t v)
{
	if (ptrace(PTRACE_POKEUSER, t->tid,
		   (void *)offsetof(struct user, u_debugreg[i]), (void *)v) < 0)
		return -1;
	return 0;
}

/* Before a single-step at ip: a debug register still armed there would
 * stop the thread before the instruction (unless RF says to go on). */
static void disarm_at(struct thread *t, uint64_t ip)
{
	if (!t->dr7 || (t->regs.eflags & 0x10000))
		return;
	if ((t->dr[0] == ip && (t->dr7 & 1)) ||
	    (t->dr[1] == ip && (t->dr7 & 4))) {
		if (set_dr(t, 7, 0) < 0)
			fatal("cannot clear the debug registers of thread %d: "
			      "%s", (int)t->tid, strerror(errno));
		t->dr7 = 0;
	}
}

static void step(struct thread *t)
{
	struct ptg_insn *insn = &t->insn;
	uint8_t buf[16];
	size_t n;
	int status;

	if (t->pending_sig) {
		deliver_signal(t);
		return;
	}
	n = ptg_aspace_read(t->proc->as, t->regs.rip, buf, sizeof(buf));
	if (n == 0 || ptg_insn_decode(insn, t->regs.rip, buf, n) < 0)
		fatal("thread %d: no instruction at 0x%llx", (int)t->tid,
		      t->regs.rip);
	disarm_at(t, t->regs.rip);
	t->sysno = (long)t->regs.rax;
	t->pre_flags = t->regs.eflags;
	t->pre_rcx = t->regs.rcx;
	g.steps++;
	t->b_pending = insn->kind == PTC_BR_FAR;
	if (t->b_pending)
		insn->target = 0;
	resume_step(t, 0);
	if (!wait_thread(t, insn->kind == PTC_BR_FAR ? syscall_timeout(t) : -1,
			 &status)) {
		t->state = TH_INFLIGHT;
		t->done = 0;
		return;
	}
	complete_step(t, insn, status);
}

/* ---- runs to a breakpoint ---------------------------------------------
 *
 * Single-stepping costs a debug trap per instruction.  Straight-line code
 * needs no trap to be known: from the current IP the tracer walks the code
 * as far as it is sure where control goes (instructions that fall through,
 * direct jumps and calls), puts a hardware instruction breakpoint where
 * that certainty ends and lets the thread run to it.  A path that ends in
 * a conditional branch whose two successors are not on the path gets a
 * breakpoint on each, and the one that fires says the direction.  Returns,
 * indirect branches and system calls are single-stepped.  The path never
 * visits an address twice, so wherever a signal stops the thread, the IP
 * says exactly how much of the path executed.  The result is the same
 * ground truth as single-stepping every instruction (--single-step), at a
 * fraction of the traps.
 */

#define PTG_PATH_MAX 512

struct path {
	struct ptg_insn insn[PTG_PATH_MAX];
	size_t n;
	uint64_t bp[2];		/* breakpoints: where the path ends */
	int nbp;
};

static int on_path(const struct path *p, uint64_t ip)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->insn[i].ip == ip)
			return 1;
	return 0;
}

/* Walks from t's IP, at most limit instructions.  An empty path means:
 * single-step. */
static void walk(struct thread *t, struct path *p, uint64_t limit)
{
	uint64_t ip = t->regs.rip;

	p->n = 0;
	p->nbp = 0;
	if (limit > PTG_PATH_MAX)
		limit = PTG_PATH_MAX;
	while (p->n < limit) {
		struct ptg_insn *in = &p->insn[p->n];
		uint8_t buf[16];
		size_t got;
		uint64_t fall;

		if (on_path(p, ip))
			break;
		got = ptg_aspace_read(t->proc->as, ip, buf, sizeof(buf));
		if (got == 0 || ptg_insn_decode(in, ip, buf, got) < 0 ||
		    in->nowalk)
			break;
		fall = ip + in->len;
		if (in->kind == PTG_NOT_BRANCH) {
			p->n++;
			ip = fall;
			continue;
		}
		if (in->kind == PTC_BR_JMP || in->kind == PTC_BR_CALL) {
			p->n++;
			ip = in->target;
			continue;
		}
		if (in->kind == PTC_BR_COND && p->n > 0 && in->target != fall &&
		    !on_path(p, in->target) && !on_path(p, fall)) {
			p->n++;
			p->bp[0] = in->target;
			p->bp[1] = fall;
			p->nbp = 2;
			return;
		}
		break;
	}
	if (p->n) {
		p->bp[0] = ip;
		p->nbp = 1;
	}
}

/* The first n instructions of p executed; the last one, when it is the
 * path's closing conditional branch, went to next. */
static void path_executed(struct thread *t, struct path *p, size_t n,
			  uint64_t next)
{
	if (n)
		resumed(t, p->insn[0].ip);
	for (size_t i = 0; i < n; i++) {
		struct ptg_insn *in = &p->insn[i];

		switch (in->kind) {
		case PTG_NOT_BRANCH:
			g.now++;
			t->count++;
			break;
		case PTC_BR_COND:
			emit_B(t, in, next == in->target);
			break;
		default:
			emit_B(t, in, 1);
			break;
		}
	}
}

static void arm(struct thread *t, const struct path *p)
{
	uint64_t dr7 = p->nbp == 2 ? 5 : 1;

	for (int i = 0; i < p->nbp; i++) {
		if (t->dr[i] == p->bp[i])
			continue;
		if (set_dr(t, i, p->bp[i]) < 0)
			fatal("cannot set a breakpoint in thread %d: %s",
			      (int)t->tid, strerror(errno));
		t->dr[i] = p->bp[i];
	}
	if (t->dr7 != dr7) {
		if (set_dr(t, 7, dr7) < 0)
			fatal("cannot arm a breakpoint in thread %d: %s",
			      (int)t->tid, strerror(errno));
		t->dr7 = dr7;
	}
}

/* Runs t through one walked path, or single-steps one instruction. */
static void advance(struct thread *t, uint64_t limit)
{
	static struct path p;
	uint64_t r;
	int status, sig;
	size_t k;

	if (t->pending_sig || g.single_step) {
		step(t);
		return;
	}
	walk(t, &p, limit);
	if (!p.n) {
		step(t);
		return;
	}
	arm(t, &p);
	g.runs++;
	if (ptrace(PTRACE_CONT, t->tid, NULL, NULL) < 0)
		fatal("PTRACE_CONT of thread %d: %s", (int)t->tid,
		      strerror(errno));
	if (!wait_thread(t, -1, &status))
		fatal("thread %d blocked in straight-line code", (int)t->tid);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		/* Killed from outside: how far it got is unknown. */
		thread_exit(t, status);
		return;
	}
	sig = WSTOPSIG(status);
	get_regs(t);
	r = t->regs.rip;
	if (r == p.bp[0] || (p.nbp == 2 && r == p.bp[1])) {
		path_executed(t, &p, p.n, r);
	} else {
		for (k = 0; k < p.n && p.insn[k].ip != r; k++)
			;
		if (k == p.n)
			fatal("thread %d stopped at 0x%" PRIx64 ", off its path "
			      "from 0x%" PRIx64, (int)t->tid, r, p.insn[0].ip);
		path_executed(t, &p, k, 0);
	}
	if (sig != SIGTRAP || !(r == p.bp[0] || (p.nbp == 2 && r == p.bp[1])))
		t->pending_sig = sig;
}

/* ---- scheduling -------------------------------------------------------- */

/* Threads whose blocking system call ended become runnable here, at a
 * scheduling point, not whenever their report happened to arrive. */
static void reap_inflight(void)
{
	for (size_t i = 0; i < g.nthreads; i++) {
		struct thread *t = g.threads[i];

		if (t->state == TH_INFLIGHT && t->done) {
			t->done = 0;
			complete_step(t, &t->insn, t->done_status);
		}
	}
}

static int any_live(void)
{
	for (size_t i = 0; i < g.nthreads; i++)
		if (g.threads[i]->state != TH_DEAD && g.threads[i]->proc)
			return 1;
	return 0;
}

/* The next runnable thread after cur in creation order (round robin). */
static struct thread *pick(struct thread *cur)
{
	size_t start = 0;

	for (size_t i = 0; i < g.nthreads; i++)
		if (g.threads[i] == cur)
			start = i + 1;
	for (size_t k = 0; k < g.nthreads; k++) {
		struct thread *t = g.threads[(start + k) % g.nthreads];

		if (t->state == TH_READY)
			return t;
	}
	return NULL;
}

/* --max-insns reached: end every thread's trace and kill the programs. */
static void stop_all(void)
{
	for (size_t i = 0; i < g.nthreads; i++) {
		struct thread *t = g.threads[i];

		if (t->state == TH_DEAD || !t->proc)
			continue;
		if (t->state == TH_READY && t->count)
			emit_A(t, t->regs.rip);
		fprintf(g.out, "E %" PRIu64 " %d\n", g.now, (int)t->tid);
	}
	for (size_t i = 0; i < g.nthreads; i++) {
		struct thread *t = g.threads[i];

		if (t->state != TH_DEAD && t->proc)
			kill(t->proc->pid, SIGKILL);
		t->state = TH_DEAD;
	}
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

static void run(void)
{
	struct thread *cur = NULL;
	uint64_t left = 0, before, used;

	while (any_live()) {
		if (g.max_insns && g.now >= g.max_insns) {
			fprintf(stderr, "ptgen-trace: stopped after %" PRIu64
				" instructions (--max-insns)\n", g.now);
			stop_all();
			return;
		}
		if (!cur || cur->state != TH_READY || left == 0) {
			struct thread *next;

			reap_inflight();
			next = pick(cur);
			if (!next) {
				wait_any();
				continue;
			}
			cur = next;
			left = g.slice;
		}
		if (cur != g.last_stepped) {
			fprintf(g.out, "S %" PRIu64 " %d\n", g.now,
				(int)cur->tid);
			g.last_stepped = cur;
		}
		before = g.now;
		advance(cur, g.max_insns && g.max_insns - g.now < left ?
			     g.max_insns - g.now : left);
		used = g.now - before;
		left -= used < left ? (used ? used : 1) : left;
	}
}

/* ---- start ------------------------------------------------------------- */

struct child_error {
	int what;		/* 0 ptrace, 1 exec */
	int err;
};

static void child(char **argv, int errfd, const sigset_t *mask)
{
	struct child_error e = { 0, 0 };

	sigprocmask(SIG_SETMASK, mask, NULL);
	/* The same addresses at every run make the ground truth
	 * reproducible. */
	if (!g.aslr)
		personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
		e.err = errno;
		if (write(errfd, &e, sizeof(e)) < 0)
			_exit(126);
		_exit(126);
	}
	raise(SIGSTOP);
	execvp(argv[0], argv);
	e.what = 1;
	e.err = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(PTG_EXIT_NOEXEC);
	_exit(PTG_EXIT_NOEXEC);
}

static void no_ptrace(int err)
{
	fprintf(stderr, "ptgen-trace: ptrace is not permitted here (%s); "
		"see /proc/sys/kernel/yama/ptrace_scope\n", strerror(err));
	exit(PTG_EXIT_SKIP);
}

/* Starts argv under ptrace and returns its first thread, stopped at the
 * exec of the program. */
static struct thread *start(char **argv)
{
	int fds[2], st;
	sigset_t block, old;
	struct child_error e;
	struct thread *t;
	pid_t pid;
	long opts = PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACEEXEC;

	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (pipe2(fds, O_CLOEXEC) < 0)
		fatal("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fatal("fork: %s", strerror(errno));
	if (pid == 0)
		child(argv, fds[1], &old);
	close(fds[1]);
	if (waitpid(pid, &st, __WALL) < 0)
		fatal("waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(st)) {
		if (read(fds[0], &e, sizeof(e)) == sizeof(e) && e.what == 0)
			no_ptrace(e.err);
		fatal("the child did not start");
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)opts) < 0) {
		if (errno == EPERM)
			no_ptrace(errno);
		fatal("PTRACE_SETOPTIONS: %s", strerror(errno));
	}
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) < 0)
		fatal("PTRACE_CONT: %s", strerror(errno));
	if (waitpid(pid, &st, __WALL) < 0)
		fatal("waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(st) || (st >> 16) != PTRACE_EVENT_EXEC) {
		if (read(fds[0], &e, sizeof(e)) == sizeof(e) && e.what == 1) {
			fprintf(stderr, "ptgen-trace: cannot execute %s: %s\n",
				argv[0], strerror(e.err));
			exit(PTG_EXIT_NOEXEC);
		}
		fatal("%s did not reach its exec", argv[0]);
	}
	close(fds[0]);
	g.root_pid = pid;
	t = new_thread(pid);
	t->proc = new_proc(pid, 0);
	t->proc->live = 1;
	t->seen_stop = 1;
	fprintf(g.out, "V 1\n");
	emit_T(t);
	emit_C(t, 1);
	if (refresh_maps(t) < 0)
		fatal("cannot read the mappings of %s", argv[0]);
	/* The exec stop is inside execve: one step returns to user mode,
	 * at the entry, with nothing executed yet. */
	resume_step(t, 0);
	if (waitpid(pid, &st, __WALL) < 0)
		fatal("waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(st))
		fatal("%s ended at its exec", argv[0]);
	became_ready(t);
	if (WSTOPSIG(st) != SIGTRAP)
		t->pending_sig = WSTOPSIG(st);
	return t;
}

/* Tracer and tracees take turns, never run together: on one CPU, a step
 * costs no cross-CPU wake-up (a third less time per step in a VM). */
static void pin_to_one_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: ptgen-trace [-o OUT.truth] [--vdso-dir DIR] [--slice N]\n"
"                   [--max-insns N] [--single-step] [--aslr] [-v]\n"
"                   -- PROGRAM ARGS...\n"
"Single-steps PROGRAM (and its threads and child processes) and writes the\n"
"exact user-mode execution as a ptgen ground truth (default: stdout).\n"
"  -o FILE          write the ground truth to FILE\n"
"  --vdso-dir DIR   where to dump the vDSO image (default: the directory of\n"
"                   FILE, or . when writing to stdout)\n"
"  --slice N        instructions a thread runs before the next one (10000)\n"
"  --max-insns N    stop after N instructions (E lines end every thread)\n"
"  --single-step    single-step every instruction (slow reference mode;\n"
"                   by default straight-line code runs to a breakpoint)\n"
"  --aslr           keep address-space layout randomisation (default: off,\n"
"                   so that runs are reproducible)\n"
"  -v               per-thread counts on stderr\n");
}

static uint64_t number(const char *s, const char *opt)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || end == s || s[0] == '-')
		fatal("%s: not a number: %s", opt, s);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "vdso-dir", required_argument, NULL, 'd' },
		{ "slice", required_argument, NULL, 's' },
		{ "max-insns", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "single-step", no_argument, NULL, '1' },
		{ "aslr", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outpath = NULL;
	char *dir = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "+o:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': outpath = optarg; break;
		case 'd': g.vdso_dir = optarg; break;
		case 's':
			g.slice = number(optarg, "--slice");
			if (!g.slice)
				fatal("--slice must be at least 1");
			break;
		case 'm': g.max_insns = number(optarg, "--max-insns"); break;
		case 'v': g.verbose = 1; break;
		case '1': g.single_step = 1; break;
		case 'a': g.aslr = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (outpath && strcmp(outpath, "-")) {
		g.out = fopen(outpath, "we");
		if (!g.out)
			fatal("cannot create %s: %s", outpath, strerror(errno));
	} else {
		g.out = stdout;
	}
	setvbuf(g.out, NULL, _IOFBF, 1 << 20);
	if (!g.vdso_dir) {
		const char *slash = outpath ? strrchr(outpath, '/') : NULL;

		if (slash) {
			dir = strndup(outpath, (size_t)(slash - outpath) + !(slash - outpath));
			if (!dir)
				fatal("out of memory");
			g.vdso_dir = dir;
		} else {
			g.vdso_dir = ".";
		}
	}
	pin_to_one_cpu();
	start(argv + optind);
	run();
	if (fflush(g.out) || ferror(g.out) || (g.out != stdout && fclose(g.out)))
		fatal("cannot write %s: %s", outpath ? outpath : "stdout",
		      strerror(errno));
	if (g.verbose)
		fprintf(stderr, "ptgen-trace: %" PRIu64 " instructions, %"
			PRIu64 " steps, %" PRIu64 " runs\n", g.now, g.steps,
			g.runs);
	free(dir);
	if (!g.root_done)
		return 0;
	if (WIFSIGNALED(g.root_status))
		return 128 + WTERMSIG(g.root_status);
	return WEXITSTATUS(g.root_status);
}
